"""Four significant digits in the analysis tables keep their trailing zeros: (95.53, 95.70) and
9.570 Mbit/s, not (95.53, 95.7) and 9.57, which read as less precise numbers."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from vnetbench.analysis.campaign_parts import Fairness, UdpEffective, fairness
from vnetbench.analysis.fairness import fairness_spread
from vnetbench.report import format as fmt
from vnetbench.report.analysis_tables import TCP_SETTLING, _fairness, _udp
from vnetbench.report.sections.probe import _cpushare_section


def test_intervals_and_scaled_means_keep_four_significant_digits() -> None:
    assert fmt.ci(95.53, 95.7) == "(95.53 to 95.70)"
    assert fmt.ci(0.5, 1.0) == "(0.5000 to 1.000)"
    assert fmt.ci(0.0, 0.1327) == "(0 to 0.1327)"  # an exact zero stays 0 (a cut at the domain)
    assert fmt.scaled(9.57e6, 1e6) == "9.570"
    assert fmt.scaled(86_064_100.0, 1e6) == "86.06"
    assert fmt.scaled(-0.0179743e6, 1e6) == "-0.01797"
    assert fmt.scaled(123_456.0, 1.0) == "123456"  # integers keep every digit
    assert fmt.scaled(None, 1e6) == ""


def _together(kind: str) -> pd.DataFrame:
    rows = [
        {"group_kind": "together", "kind": kind, "series": "s", "step_key": f"k{r}", "repetition": r,
         "throughput_bps": v}
        for r in (1, 2)
        for v in (40e6, 60e6)
    ]  # fmt: skip
    return pd.DataFrame(rows)


def test_the_tcp_settling_caveat_is_given_only_where_tcp_flows_shared() -> None:
    tcp, udp = fairness(_together("tcp"), [], 0.95), fairness(_together("pps"), [], 0.95)
    assert tcp is not None and udp is not None
    assert TCP_SETTLING in _fairness(tcp).intro
    assert "TCP" not in _fairness(udp).intro


def test_the_udp_effective_table_gives_four_digits_and_small_losses_their_own() -> None:
    # 145.8 Mbit/s offered into 50 Mbit/s: 1 - 50/145.8 = 65.71 % lost; a near-lossless step keeps its
    # 1 in 60,000 (0.0017 %) instead of rounding it to 0.00 %.
    rows = [
        {"series": "a", "n_flows": 2, "offered_bps": 145.833e6, "throughput_bps": 50.0e6,
         "loss_ratio": 1 - 50 / 145.833, "effective_throughput_bps": 50.0e6},
        {"series": "b", "n_flows": 2, "offered_bps": 20.0e6, "throughput_bps": 19.99967e6,
         "loss_ratio": 1 / 60_000, "effective_throughput_bps": 19.99967e6},
    ]  # fmt: skip
    table = _udp(UdpEffective(["series"], rows)).tables[0]
    assert table.rows[0][2:] == ["145.8", "50.00", "65.71 %", "50.00"]
    assert table.rows[1][2:] == ["20.00", "20.00", "0.0017 %", "20.00"]


def test_the_cpu_share_table_keeps_three_digits_with_their_zeros(tmp_path: Path) -> None:
    rows = pd.DataFrame(
        {"src": ["small", "small"], "measurement": ["cpu", "cpu"], "cpu_share_ratio": [0.45, 0.454]}
    )
    section = _cpushare_section(rows, tmp_path)
    assert section is not None
    # median of 0.45 and 0.454, in % as the Findings' CPU share: 45.0, not 45
    assert section.tables[0].rows[0][3:5] == ["45.2", "45.0 – 45.4"]


def test_table_cells_keep_their_zeros_and_never_use_exponents() -> None:
    # exogeni-exp1 (campaign c4d29665): a UDP row printed mean '9.5' beside '9.67' and SD '5.98e-05'
    assert fmt.value(9.496) == "9.50" and fmt.value(9.672) == "9.67"
    assert fmt.value(5.98e-05) == "0.0000598"
    assert fmt.value(54.0) == "54" and fmt.sig(13.0) == "13"  # a whole number stays whole (counts)
    assert fmt.value(95_670_100.0) == "95670100"  # not 9.567e+07
    assert fmt.sig(0.45) == "0.450" and fmt.value(None) == "–" and fmt.value("tcp") == "tcp"


def test_small_scaled_values_and_interval_ends_are_written_without_exponents() -> None:
    # quickstart (campaign efd6a61d), placement table, udp cross-site: the two whole-run
    # throughputs (summaries, ids 1095 and 1108) have SD |a - b| / √2 = 70.10 bit/s, which
    # printed as '7.010e-05' Mbit/s beside SDs of 0.001141; 70.10 / 1e6 to four digits is 0.00007010.
    sd_bps = abs(9_720_384.41493198 - 9_720_285.27242413) / 2**0.5
    assert fmt.scaled(sd_bps, 1e6) == "0.00007010"
    assert fmt.ci(-7.3e-05, 4.25e-05) == "(−0.00007300 to 0.00004250)"  # the minus sign
    assert "e" not in fmt.zeros_kept(1.234e-09)


def test_the_fairness_table_gives_means_four_digits_like_their_interval_and_no_exponents() -> None:
    # onl-udp-receivers (campaign b0bfad94): Jain's index over each group's whole-run throughputs
    # (summaries table), per receivers level, computed with pandas: receivers = 6 has mean
    # 0.99399847, SD 0.0023949955, min 0.99122209, max 0.99653785; receivers = 2 has SD 4.8358519e-07.
    # It printed mean '0.994' and '1' beside intervals (0.9886, 0.9963) and (1.0000, 1.0000), and
    # SD '4.84e-07' (below the table's four decimals: '< 0.0001').
    spread = pd.DataFrame(
        [
            {"series": "a: receivers 6", "replications": 5, "mean": 0.99399847, "sd": 0.0023949955,
             "min": 0.99122209, "max": 0.99653785, "ci_low": 0.9886, "ci_high": 0.9963},
            {"series": "b: receivers 2", "replications": 5, "mean": 0.99999978, "sd": 4.8358519e-07,
             "min": 0.99999892, "max": 1.0, "ci_low": 0.99999, "ci_high": 1.0},
            {"series": "c: one run", "replications": 1, "mean": 0.9, "sd": float("nan"),
             "min": 0.9, "max": 0.9, "ci_low": float("nan"), "ci_high": float("nan")},
        ]
    )  # fmt: skip
    (table,) = _fairness(Fairness(["series"], 0.95, pd.DataFrame(), spread)).tables
    assert table.rows[0][2:6] == ["0.9940", "0.00239", "0.9912", "0.9965"]
    assert table.rows[1][2:6] == ["1.000", "< 0.0001", "1.000", "1.000"]  # 0.99999978 is 1.000
    assert table.rows[2][2:7] == ["0.9000", "", "0.9000", "0.9000", "–"]


def test_the_fairness_table_says_where_every_flow_got_zero() -> None:
    frame = pd.DataFrame(
        {"series": "s", "replication": [1, 1, 2, 2], "throughput_bps": [0.0, 0.0, 0.0, 0.0], "cc": "x"}
    )
    spread = fairness_spread(frame, "throughput_bps", ["series"], "replication")
    (table,) = _fairness(Fairness(["series"], 0.95, pd.DataFrame(), spread)).tables
    assert table.rows[0][1:7] == ["2", "undefined", "", "", "", "–"]
    assert (
        table.note
        == "s: every replication: every flow got 0, so Jain's index is undefined (0/0) there and left out"
    )


def test_a_value_that_rounds_up_to_a_power_of_ten_keeps_its_number_of_digits() -> None:
    # Four significant digits of 0.99999978 are 1.000 (by hand: 0.99999978 rounds to 1.000 at the
    # third decimal); it printed '1.0000', five digits, beside max '1.000' (onl-udp-receivers b0bfad94).
    assert fmt.zeros_kept(0.99999978) == "1.000"
    assert fmt.zeros_kept(9.9996) == "10.00"
    assert fmt.zeros_kept(-0.99999) == "-1.000"
    assert fmt.zeros_kept(999.96) == "1000"
    assert fmt.sig(0.00009999) == "0.000100"
    assert fmt.zeros_kept(0.99994) == "0.9999"  # no rounding across: unchanged


def test_a_share_of_the_variation_that_rounds_to_zero_is_not_written_zero() -> None:
    # a significant effect explaining 0.004 % of the variation is some, not '0.00 %'; an exact 0 stays
    assert [fmt.pct(v) for v in (0.004, 0.0, 0.006, 12.345, float("nan"))] == [
        "< 0.01 %",
        "0.00 %",
        "0.01 %",
        "12.35 %",  # 12.345 is stored as 12.3450000000000006: two decimals round it up
        "",
    ]
