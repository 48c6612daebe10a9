"""The report's Findings line of a 2^k design: what each percentage is, the significant effect with its
interval, and no verdict where there is no test.

The data are a 2^2·2 design worked by hand (Jain, The Art of Computer Systems Performance Analysis,
ch. 18): cells (cc, len) = (lo, x) 10, 12; (hi, x) 20, 22; (lo, y) 11, 13; (hi, y) 21, 23 Mbit/s.
Cell means 11, 21, 12, 22: q_cc = (−11 + 21 − 12 + 22)/4 = 5, q_len = (−11 − 21 + 12 + 22)/4 = 0.5,
q_cc:len = (11 − 21 − 12 + 22)/4 = 0. SS_cc = 2²·2·25 = 200, SS_len = 2, SSE = 8 (each observation
±1 from its cell mean), SST = 210: cc 95.24 %, len 0.95 %. s_e² = 8/4 = 2, s_q = √(2/8) = 0.5,
t[0.975; 4] = 2.7764: cc's interval 5 ∓ 1.388 = (3.612, 6.388), len's (−0.888, 1.888) holds 0.
"""

from __future__ import annotations

from types import SimpleNamespace

import pandas as pd
from scipy import stats

from vnetbench.analysis.campaign_analysis import FittedModel
from vnetbench.analysis.diagnostics import diagnostics
from vnetbench.analysis.one_factor import one_factor_anova
from vnetbench.analysis.two_k_r import two_k_r
from vnetbench.report.sections.findings import design_findings

CELLS = [("lo", "x", 10), ("lo", "x", 12), ("hi", "x", 20), ("hi", "x", 22)]
CELLS += [("lo", "y", 11), ("lo", "y", 13), ("hi", "y", 21), ("hi", "y", 23)]


def _line(kind: str, rows: list[tuple[str, str, int]]) -> str:
    frame = pd.DataFrame(rows, columns=["cc", "len", "throughput_bps"])
    frame["throughput_bps"] *= 1e6
    result = two_k_r(frame, "throughput_bps", ["cc", "len"], low={"cc": "lo", "len": "x"})
    (line,) = design_findings(SimpleNamespace(models=[FittedModel("s · tcp · throughput_bps", kind, result)]))
    return line


def test_a_2k_r_finding_says_what_its_percentages_are_and_gives_the_effect_with_its_interval() -> None:
    """onl-tcp-factorial's Findings read 'significant: flows (99.96 %); not significant: cc (0.00 %)',
    which reads like a confidence; it is the share of the variation."""
    assert _line("2k-r", CELLS) == (
        "<b>s · tcp · throughput (Mbit/s)</b>: significant: cc (q = +5.000 Mbit/s, interval 3.612 to "
        "6.388: cc lo → hi changes the mean by +10.00 Mbit/s; 95.24 % of the variation); not significant: "
        "len (0.95 % of the variation), cc:len (0.00 % of the variation)."
    )


def test_a_negative_effect_and_its_interval_have_the_minus_sign() -> None:
    """cc coded the other way round (hi as −1): q = −5 and its interval (−6.388, −3.612), written with
    the minus sign U+2212 as the '+' of a positive q; the ASCII '-' read as a hyphen beside it."""
    frame = pd.DataFrame(CELLS, columns=["cc", "len", "throughput_bps"])
    frame["throughput_bps"] *= 1e6
    result = two_k_r(frame, "throughput_bps", ["cc", "len"], low={"cc": "hi", "len": "x"})
    (line,) = design_findings(
        SimpleNamespace(models=[FittedModel("s · tcp · throughput_bps", "2k-r", result)])
    )
    assert (
        "cc (q = −5.000 Mbit/s, interval −6.388 to −3.612: cc hi → lo changes the mean by −10.00 Mbit/s; "
        in line
    )
    assert "-" not in line


def test_a_fractional_design_lists_its_effects() -> None:
    """A 2^(k−p) model carries its effects as a 2^k r result: the Findings looked for ANOVA terms,
    found none and said 'no factor has a significant effect' whatever the data."""
    assert "significant: cc (q = +5.000 Mbit/s" in _line("2k-p", CELLS)


def test_without_replication_no_effect_is_called_not_significant() -> None:
    """r = 1: no error estimate, no interval, no test (cells 10, 20, 11, 21: SS_cc = 4·25 = 100,
    SS_len = 4·0.25 = 1, SST = 101: 99.01 % and 0.99 %). It used to read 'no factor has a significant
    effect; not significant: cc (99.01 %), …'."""
    assert _line("2k-r", CELLS[0::2]) == (
        "<b>s · tcp · throughput (Mbit/s)</b>: not tested (no error estimate): cc (99.01 % of the "
        "variation), len (0.99 % of the variation), cc:len (0.00 % of the variation)."
    )


def _fitted(means: list[tuple[str, str, float]], spread: float) -> FittedModel:
    rows = [(cc, ln, mean + e) for cc, ln, mean in means for e in (-spread, spread)]
    frame = pd.DataFrame(rows, columns=["cc", "len", "throughput_bps"])
    frame["throughput_bps"] *= 1e6
    result = two_k_r(frame, "throughput_bps", ["cc", "len"], low={"cc": "lo", "len": "x"})
    return FittedModel("s · tcp · throughput_bps", "2k-r", result, diagnostics=diagnostics(result))


MEANS = [("lo", "x", 20.0), ("hi", "x", 30.0), ("lo", "y", 21.0), ("hi", "y", 31.0)]


def test_errors_as_large_as_the_effects_put_a_caution_in_the_finding() -> None:
    """onl-tcp-factorial's Jain index: 'significant: flows' in the Findings, while its diagnostics
    (further down) showed residuals 2.67 × the predicted range and Shapiro–Wilk p = 1.4e-06.

    Cells ±10 around means 20, 30, 21, 31: predicted range 31 − 20 = 11, residual range 20, ratio
    20/11 = 1.82 (Jain's rule: small below 1/10). Shapiro–Wilk of four −10 and four +10 from scipy.
    Cells ±0.1 around the same means: 0.2/11 = 0.018, no caution."""
    (line,) = design_findings(SimpleNamespace(models=[_fitted(MEANS, 10.0)]))
    shapiro = float(stats.shapiro([-10.0] * 4 + [10.0] * 4).pvalue)
    assert shapiro < 0.05
    assert line.endswith(
        ". Caution: the residuals span 1.82 × the range of the predicted responses (errors count as small "
        f"below 1/10) and are not normal (Shapiro–Wilk p = {shapiro:.3g}), so the intervals and tests are "
        "doubtful: see the diagnostics."
    )
    (quiet,) = design_findings(SimpleNamespace(models=[_fitted(MEANS, 0.1)]))
    assert "Caution" not in quiet


def test_a_level_whose_every_repetition_is_zero_says_its_interval_is_the_pooled_one() -> None:
    """onl-udp-receivers (b0bfad94) read '1: 0 % (0 to 0.0315), 2: 0 % (0 to 0.0315), …': levels that
    lost nothing in any repetition, with an interval that is the pooled s_e's, not their own spread.
    By hand: loss at receivers 1 and 2 is 0 in all three repetitions, at 3 it is 10, 12, 14 %.
    SSE = 0.02² + 0.02² = 0.0008 on 9 − 3 = 6 DF, s_e = √(0.0008/6); each level's half-width is
    t[0.975; 6]·s_e/√3 = 1.631 points: 1 and 2 give (0 to 1.63) after the cut at 0, 3 gives
    12.0 ∓ 1.631 = (10.4 to 13.6)."""
    frame = pd.DataFrame(
        {"receivers": [1] * 3 + [2] * 3 + [3] * 3, "loss_ratio": [0.0] * 6 + [0.10, 0.12, 0.14]}
    )
    half = stats.t.ppf(0.975, 6) * (0.0008 / 6) ** 0.5 / 3**0.5
    assert round(100 * half, 3) == 1.631
    result = one_factor_anova(frame, "loss_ratio", "receivers")
    model = FittedModel("receivers · udp · loss_ratio", "one-factor", result)
    (line,) = design_findings(SimpleNamespace(models=[model]))
    # three repetitions at each level, the SD pooled over the levels (s_e): the line says so
    assert line.split("Mean per level (95 % t interval over 3 repetitions per level, pooled SD): ")[1] == (
        "1 and 2: 0 % (every repetition 0; pooled interval 0 to 1.63), 3: 12.0 % (10.4 to 13.6)."
    )


def test_effect_lines_name_the_levels_their_sign_compares() -> None:
    """The report's effects table and a significant interaction's Finding say which levels an effect's
    + and − are. Cells (cc, len): (lo, x) 10, 12; (hi, x) 20, 22; (lo, y) 11, 13; (hi, y) 31, 33 Mbit/s,
    means 11, 21, 12, 32: q_cc:len = (11 − 21 − 12 + 32)/4 = 2.5, interval 2.5 ∓ 2.7764·0.5 =
    (1.112, 3.888) (s_q = √(8/4/8) = 0.5 as in the module's docstring)."""
    from vnetbench.report.analysis_tables import two_k_r_tabulars

    rows = [*CELLS[:6], ("hi", "y", 31), ("hi", "y", 33)]
    frame = pd.DataFrame(rows, columns=["cc", "len", "throughput_bps"])
    frame["throughput_bps"] *= 1e6
    result = two_k_r(frame, "throughput_bps", ["cc", "len"], low={"cc": "lo", "len": "x"})
    (view,) = two_k_r_tabulars("s · tcp", result, 1e6, "(Mbit/s)")
    compares = {row[0]: row[2] for row in view.rows}
    assert compares == {
        "I": "",
        "A": "cc: hi − lo",
        "B": "len: y − x",
        "AB": "cc, len alike − unlike: (lo, x), (hi, y) − (lo, y), (hi, x)",
        "e": "",
    }
    assert view.columns[2] == "compares" and "q is half that difference of means" in view.note
    (line,) = design_findings(
        SimpleNamespace(models=[FittedModel("s · tcp · throughput_bps", "2k-r", result)])
    )
    assert (
        "cc:len (q = +2.500 Mbit/s, interval 1.112 to 3.888; cc, len alike − unlike: (lo, x), (hi, y) − "
        "(lo, y), (hi, x); " in line
    )
