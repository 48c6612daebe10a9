"""The comparison's display strings (report/comparison_tables.py): a change relative to A, and the
difference itself where A is 0 — a run without loss compared with one that lost, or two without."""

from __future__ import annotations

import io
from dataclasses import replace

import pytest
from rich.console import Console

from vnetbench.analysis.compare import Comparison, Row
from vnetbench.report.comparison_tables import caption, display_rows


def _row(metric: str, a: float, b: float, lo: float, hi: float, test: str = "welch") -> Row:
    key = {"pair": "vm1→vm4", "measurement": "udp", "metric": metric, "treatment": "—"}
    return Row(key, test, 2, 2, a, b, b - a, lo, hi, 0.5, 0.5)


def _table(*rows: Row) -> list[list[str]]:
    return display_rows(Comparison("a", "b", 0.05, 0.95, tuple(rows)))


def test_a_change_is_relative_to_a() -> None:
    # 95.0 -> 96.9 Mbit/s: +1.9 / 95 = +2.0 %; interval (0.95, 2.85) Mbit/s / 95 = +1.0 … +3.0 %
    (row,) = _table(_row("throughput_bps", 95e6, 96.9e6, 0.95e6, 2.85e6))
    assert row[1:5] == [
        "95.00 Mbit/s",  # throughput with two decimals in Mbit/s, as the Findings write it
        "96.90 Mbit/s",
        "+2.0 %",
        "(1.0 to 3.0) %",
    ]  # the interval as the tables and the Findings: "lo to hi", no "+"


def test_both_sides_carry_their_unit() -> None:
    # A had none: `vnetbench compare` prints one record per block in a terminal too narrow for the
    # table, where "A  0.0815" under a row about RTT gave no unit at all
    (row,) = _table(_row("rtt_ns", 81_500, 92_500, -8_000, 30_000, test="hodges-lehmann"))
    assert row[1:3] == ["0.0815 ms", "0.0925 ms"]
    (row,) = _table(_row("jain_index", 0.99, 0.98, -0.02, 0.0))
    assert row[1:3] == ["0.9900", "0.9800"]  # a metric without a unit: no trailing space


def test_ten_gigabit_is_not_written_in_exponent_form() -> None:
    # '.4g' printed 1e10 bit/s as '1e+04 Mbit/s'
    (row,) = _table(_row("throughput_bps", 10e9, 9.9e9, -0.2e9, 0.0))
    assert row[1:3] == ["10000 Mbit/s", "9900 Mbit/s"]


def test_a_small_change_whose_interval_excludes_zero_is_not_printed_as_zero() -> None:
    # +0.03 % of 95 Mbit/s (28.5 kbit/s), interval 0.02 .. 0.04 %: one decimal would print '+0.0 %'
    (row,) = _table(_row("throughput_bps", 95e6, 95.0285e6, 19_000, 38_000))
    assert row[3:5] == ["+0.03 %", "(0.02 to 0.04) %"]


def test_loss_from_zero_is_shown_in_percentage_points_not_as_nan() -> None:
    # no loss in A, 0.2 % in B: a relative change is undefined, the difference is +0.2 points, with
    # three significant digits as its interval (not '+0.2 pp' beside '(0.100 to 0.300) pp')
    (row,) = _table(_row("loss_ratio", 0.0, 0.002, 0.001, 0.003))
    assert row[3:5] == ["+0.200 pp", "(0.100 to 0.300) pp"]
    # both without loss (the regenerated quickstart's cross-site UDP): 0, not "+nan %" — nor "+0",
    # a zero has no sign, as the report's differences ('loss (0 pp)' in its Findings)
    (row,) = _table(_row("loss_ratio", 0.0, 0.0, 0.0, 0.0, test="exact"))
    assert row[3:5] == ["0 pp", "(0 to 0) pp"]
    assert not any("nan" in cell for cell in row)


def test_a_fall_has_the_minus_sign_beside_a_rise_s_plus() -> None:
    # 95.0 -> 47.5 Mbit/s: −50.0 %, interval (−50.0, −45.0) Mbit/s / 95 = −52.6 … −47.4 %; the
    # ASCII '-' of '-50.0 %' beside '+2.0 %' is a hyphen in a typeset report, not a minus
    (row,) = _table(_row("throughput_bps", 95e6, 47.5e6, -50e6, -45e6))
    assert row[3:5] == ["−50.0 %", "(−52.6 to −47.4) %"]
    (row,) = _table(_row("loss_ratio", 0.0, 0.0, -0.003, 0.001))  # A without loss: pp, as above
    # B − A = B ≥ 0 where A is 0: cut at 0 and marked (was '(−0.300 to 0.100) pp', below what B can be)
    assert row[4] == "(0* to 0.100) pp"
    # a change that rounds to zero has no sign: 0.0 %, not -0.0 % nor +0.0 %
    (row,) = _table(_row("throughput_bps", 95e6, 94.97e6, -1e6, 1e6))
    assert row[3] == "0.0 %"


def test_no_interval_is_a_dash_not_nan() -> None:
    # 3 v 3 run medians of RTT: no 95 % Hodges–Lehmann interval exists (analysis/compare.py), and a
    # Welch row of one run a side has none either; the change is still shown
    (row,) = _table(_row("rtt_ns", 100_000, 110_000, float("nan"), float("nan"), test="mann-whitney"))
    assert row[3:5] == ["+10.0 %", "–"]
    (row,) = _table(_row("loss_ratio", 0.0, 0.002, float("nan"), float("nan")))
    assert row[3:5] == ["+0.200 pp", "–"]


def _printed(result: Comparison, monkeypatch: pytest.MonkeyPatch) -> str:
    from vnetbench.cli import compare as cli_compare

    buffer = io.StringIO()
    monkeypatch.setattr(cli_compare, "out", Console(file=buffer, width=200, color_system=None))
    cli_compare.print_tables(result)
    return buffer.getvalue()


def test_campaigns_without_a_common_row_say_so_instead_of_an_empty_table(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # exogeni-exp3 (d56a917f) against exogeni-exp4 (cbc7b671): no pair in common; it printed an empty
    # table captioned 'p after Holm over all 0 rows' and 'only in A: vma→vmb · tcp · throughput_bps · —'
    tcp = {"pair": "vma→vmb", "measurement": "tcp", "metric": "throughput_bps", "treatment": "—"}
    rtt = {"pair": "hub→vm-a", "measurement": "rtt", "metric": "rtt_ns", "treatment": "—"}
    text = _printed(Comparison("A (exp3)", "B (exp4)", 0.05, 0.95, (), (tcp,), (rtt,)), monkeypatch)
    assert "nothing to compare: no pair · measurement · metric is in both A (exp3) and B (exp4)" in text
    assert "0 rows" not in text and "┃" not in text
    assert "only in A: vma→vmb · tcp · throughput\n" in text
    assert "only in B: hub→vm-a · rtt · RTT\n" in text


def test_the_caption_counts_one_row_in_the_singular() -> None:
    one = Comparison("a", "b", 0.05, 0.95, (_row("throughput_bps", 95e6, 96.9e6, 0.95e6, 2.85e6),))
    assert "Holm over all 1 row;" in caption(one)
    assert "Holm over all 2 rows;" in caption(replace(one, rows=one.rows * 2))


def test_a_difference_keeps_its_zeros_and_never_takes_an_exponent() -> None:
    # A without loss, B lost 12.345 %: '+12.3 pp' with its interval; a throughput that rose from
    # 0 by 1234.5 Mbit/s is '+1234 Mbit/s', not '+1.23e+03 Mbit/s'
    (row,) = _table(_row("loss_ratio", 0.0, 0.12345, 0.1, 0.15))
    assert row[3:5] == ["+12.3 pp", "(10.0 to 15.0) pp"]
    (row,) = _table(_row("throughput_bps", 0.0, 1234.5e6, 1200e6, 1269e6))
    assert row[3:5] == ["+1234 Mbit/s", "(1200 to 1269) Mbit/s"]


def test_ends_that_would_print_alike_get_the_digits_to_tell_them_apart() -> None:
    # interval 0.02 … 0.04 Mbit/s / 95 = +0.0211 … +0.0421 %: one decimal writes both ends '0.0',
    # two write them apart
    (row,) = _table(_row("throughput_bps", 95e6, 95.03e6, 0.02e6, 0.04e6))
    assert row[4] == "(0.02 to 0.04) %"
