"""The interval of a mean is cut at 0 for a metric that cannot be negative (an RTT, a rate, a loss):
with two repetitions the quickstart's report printed "RTT mean vm1→vm3 0.135 ms (-0.0708 to 0.342)".
Expected values by hand: t[0.975; 1] = 12.7062 (any t table); for the values a, b the SD is
|a − b|/√2, so the half-width t·SD/√2 is 12.7062·|a − b|/2."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from vnetbench.analysis.descriptive import connection_table, describe
from vnetbench.analysis.periodic import by_hour_of_day
from vnetbench.spec.units import cannot_be_negative

T1 = 12.706204736174698  # t[0.975; 1]


def test_describe_cuts_only_when_asked() -> None:
    half = T1 * 0.2 / 2  # values 0.05 and 0.25: mean 0.15
    cut = describe([0.05, 0.25], nonnegative=True)
    whole = describe([0.05, 0.25])
    assert (cut["ci_low"], cut["ci_high"]) == pytest.approx((0.0, 0.15 + half))
    assert (whole["ci_low"], whole["ci_high"]) == pytest.approx((0.15 - half, 0.15 + half))
    assert whole["ci_low"] < 0  # the case being fixed


def test_an_interval_above_zero_is_unchanged() -> None:
    s = describe([95.0, 96.0], nonnegative=True)  # half 6.35: (89.15, 101.85)
    assert (s["ci_low"], s["ci_high"]) == pytest.approx((95.5 - T1 / 2, 95.5 + T1 / 2))


def _flows(metric: str, values: list[float]) -> pd.DataFrame:
    return pd.DataFrame(
        [
            {"measurement": "m", "kind": "rtt", "src": "vm1", "dst": "vm3", "placement": "same-site",
             "status": "ok", "group_kind": "single", metric: v}
            for v in values
        ]
    )  # fmt: skip


def test_connection_table_cuts_an_rtt_but_not_an_offset() -> None:
    rtt = connection_table(_flows("rtt_mean_ns", [50_000.0, 250_000.0]), "rtt", "rtt_mean_ns").iloc[0]
    assert (rtt["ci_low"], rtt["ci_high"]) == pytest.approx((0.0, 150_000 + T1 * 100_000))
    offset = connection_table(
        _flows("clock_offset_ns", [50_000.0, 250_000.0]), "rtt", "clock_offset_ns"
    ).iloc[0]
    assert offset["ci_low"] == pytest.approx(150_000 - T1 * 100_000)


def test_hour_profile_of_a_rate_is_cut() -> None:
    start = 1_700_000_000 * 10**9  # both in the same hour
    frame = pd.DataFrame({"start_utc_ns": [start, start + 10**9], "throughput_bps": [1.0, 3.0]})
    row = by_hour_of_day(frame, value="throughput_bps").iloc[0]
    assert (row["ci_low"], row["ci_high"]) == pytest.approx((0.0, 2 + T1))


@pytest.mark.parametrize(
    ("metric", "expected"),
    [
        ("throughput_bps", True), ("loss_ratio", True), ("rtt_mean_ns", True), ("jitter_ns", True),
        ("received_pps", True), ("pps", True), ("lost_packets", True), ("rx_bytes", True),
        ("clock_offset_ns", False), ("difference_ratio", False), ("residual_ratio", False), ("value", False),
    ],
)  # fmt: skip
def test_which_metrics_cannot_be_negative(metric: str, expected: bool) -> None:
    assert cannot_be_negative(metric) is expected


def test_level_means_of_a_loss_are_cut() -> None:
    """Levels A = {0, 0.2}, B = {1.0, 1.2} of loss_ratio: cell means 0.1 and 1.1, SSE = 4 × 0.01,
    s_e = √(0.04/2) = 0.1414, t[0.975; 2] = 4.3027 (t table); a level mean's SD s_e/√2 = 0.1, so
    A: 0.1 ∓ 0.43027 → (0, 0.53027), B: (0.66973, 1.53027); one future observation's interval
    ∓ t·s_e·√(1/2 + 1) = ∓ 0.74524 → A: (0, 0.84524)."""
    from vnetbench.analysis.one_factor import level_mean_intervals, one_factor_anova

    frame = pd.DataFrame({"level": ["A", "A", "B", "B"], "loss_ratio": [0.0, 0.2, 1.0, 1.2]})
    a, b = level_mean_intervals(one_factor_anova(frame, "loss_ratio", "level"))
    assert a["ci"] == pytest.approx([0.0, 0.53027], abs=1e-5)
    assert b["ci"] == pytest.approx([0.66973, 1.53027], abs=1e-5)
    assert a["prediction_interval"] == pytest.approx([0.0, 0.84524], abs=1e-5)


def test_equal_values_have_sd_zero_and_a_point_interval() -> None:
    # ten pings all printed as 10.1 ms (ping's resolution above 10 ms): numpy's SD is 1.87e-15,
    # which the report's RTT table printed as "SD 1.87e-15"
    s = describe([10.1] * 10, nonnegative=True)
    assert s["sd"] == 0.0
    assert s["ci_low"] == s["ci_high"] == s["mean"] == pytest.approx(10.1)


def test_a_cut_interval_is_flagged_and_the_findings_say_so() -> None:
    """Two RTTs, 0.05 and 0.25 ms, give 0.15 ∓ 12.7062·0.1 = (−1.12, 1.42), cut to
    (0, 1.42); the Findings line printed "(0 to …)" without saying the 0 was a cut."""
    from vnetbench.report.sections.findings import headline_findings

    assert describe([0.05, 0.25], nonnegative=True)["ci_cut"] is True
    assert describe([95.0, 96.0], nonnegative=True)["ci_cut"] is False  # (89.15, 101.85): untouched
    assert describe([0.05, 0.25])["ci_cut"] is False  # a metric that can be negative is never cut
    (line,) = headline_findings(_flows("rtt_mean_ns", [50_000.0, 250_000.0]))
    assert "0.150 ms (0 to 1.42, cut at 0: the mean cannot be negative)" in line  # its own interval
    (line,) = headline_findings(_flows("rtt_mean_ns", [95_000.0, 96_000.0]))
    assert "cut at 0" not in line


def test_one_value_has_no_sd_rather_than_sd_zero() -> None:
    # the sample SD divides by n − 1 = 0 for one value: undefined, as numpy's std(ddof=1) and any
    # textbook say; describe() printed "SD 0" for a connection measured once, which reads as "no spread"
    s = describe([42.0], nonnegative=True)
    assert s["n"] == 1 and s["mean"] == 42.0 and s["median"] == 42.0 and s["p95"] == 42.0
    assert np.isnan(s["sd"]) and np.isnan(s["ci_low"]) and np.isnan(s["ci_high"])
    assert s["ci_cut"] is False


def test_percentiles_are_type_7_as_the_docs_state() -> None:
    """docs/statistics.md: p_q = x_(⌊h⌋) + (h − ⌊h⌋)(x_(⌊h⌋+1) − x_(⌊h⌋)), h = (n − 1)q + 1. Values 1..20
    (in shuffled order): h = 19·0.95 + 1 = 19.05, p95 = 19 + 0.05·1 = 19.05. 4 000 values 0.001·i²: p99
    has h = 3999·0.99 + 1 = 3960.01, so x_(3960) + 0.01·(x_(3961) − x_(3960)) by hand."""
    values = [float(v) for v in (7, 3, 20, 1, 15, 9, 2, 18, 11, 5, 14, 4, 19, 8, 16, 10, 6, 12, 17, 13)]
    assert describe(values)["p95"] == pytest.approx(19.05)
    x = [0.001 * i * i for i in range(1, 4001)]
    hand = x[3959] + 0.01 * (x[3960] - x[3959])
    assert float(np.percentile(x, 99)) == pytest.approx(hand, rel=1e-12)  # what drivers/ping.py stores
    assert float(pd.Series(x).quantile(0.99)) == pytest.approx(hand, rel=1e-12)  # the Findings' p99


def test_means_of_two_factor_and_2k_designs_are_cut_but_not_effects() -> None:
    """A 2×2 design of loss_ratio, r = 2: cells (a1, b1) and (a2, b1) hold 0, 0.2, cells with b2 hold
    1.0, 1.2. By hand: cell means 0.1 and 1.1, SSE = 8 × 0.01 = 0.08 on 4 DF, s_e = √0.02, t[0.975; 4]
    = 2.7764 (t table). ŷ(a1, b1) = 0.1 with s_e/√2 = 0.1: 0.1 ∓ 0.27764 → (0, 0.37764); one more
    observation: ∓ t·s_e·√(1/2 + 1) = ∓ 0.48089 → (0, 0.58089). μ + β(b1) = 0.1 with s_e/√4: ∓ 0.19632
    → (0, 0.29632). β(b1) = −0.5 is an effect and keeps its whole interval, −0.5 ∓ t·s_e√((b − 1)/(abr))
    = −0.5 ∓ 2.7764·0.05 (Jain table 22.5) = (−0.63882, −0.36118)."""
    from vnetbench.analysis.two_factor import two_factor
    from vnetbench.analysis.two_k_r import predicted_responses, two_k_r

    rows = [(a, b, v) for b, vs in (("b1", (0.0, 0.2)), ("b2", (1.0, 1.2))) for a in ("a1", "a2") for v in vs]
    frame = pd.DataFrame(rows, columns=["A", "B", "loss_ratio"])
    r = two_factor(frame, "loss_ratio", ["A", "B"])
    y11 = r.estimate("ŷ(a1, b1)")
    assert (y11.ci_low, y11.ci_high) == pytest.approx((0.0, 0.37764), abs=1e-5)
    assert y11.prediction == pytest.approx((0.0, 0.58089), abs=1e-5)
    b1 = r.estimate("μ + β(b1)")
    assert (b1.ci_low, b1.ci_high) == pytest.approx((0.0, 0.29632), abs=1e-5)
    beta = r.estimate("β(b1)")
    assert (beta.ci_low, beta.ci_high) == pytest.approx((-0.63882, -0.36118), abs=1e-5)
    cell = predicted_responses(two_k_r(frame, "loss_ratio", ["A", "B"]))[0]
    assert cell["levels"] == {"A": "a1", "B": "b1"}
    assert cell["ci"] == pytest.approx([0.0, 0.37764], abs=1e-5)
    assert cell["prediction_interval"] == pytest.approx([0.0, 0.58089], abs=1e-5)


def test_the_grand_mean_of_a_loss_is_cut() -> None:
    """Levels A = B = {0, 0.2} of loss_ratio: ȳ = 0.1, s_e = √(0.04/2), t[0.975; 2] = 4.3027 (t
    table): 0.1 ∓ 4.3027·0.14142/√4 = 0.1 ∓ 0.30424 → (0, 0.40424)."""
    from vnetbench.analysis.one_factor import one_factor_anova

    frame = pd.DataFrame({"level": ["A", "A", "B", "B"], "loss_ratio": [0.0, 0.2, 0.0, 0.2]})
    a = one_factor_anova(frame, "loss_ratio", "level")
    assert a.grand_mean_ci == pytest.approx((0.0, 0.40424), abs=1e-5)


def test_q0_of_a_2k_design_of_a_loss_is_cut_but_not_of_a_response_that_can_be_negative() -> None:
    """2^2·2: cell (a1, b1) holds 0, 0.2, the other three 0, 0. By hand: cell means 0.1, 0, 0, 0, so
    q0 = 0.1/4 = 0.025; SSE = 2 × 0.1² = 0.02 on 2²(2 − 1) = 4 DF, s_e = √0.005, s_q = s_e/√8 = 0.025,
    t[0.975; 4] = 2.7764 (t table): 0.025 ∓ 0.069411 = (−0.044411, 0.094411), cut to (0, 0.094411) for
    a loss; qA = (−0.1 + 0)/4 = −0.025 is an effect and keeps its whole interval."""
    from vnetbench.analysis.two_k_r import two_k_r

    rows = [("a1", "b1", 0.0), ("a1", "b1", 0.2)] + [
        (a, b, 0.0) for a, b in (("a2", "b1"), ("a1", "b2"), ("a2", "b2")) for _ in range(2)
    ]
    loss = two_k_r(pd.DataFrame(rows, columns=["A", "B", "loss_ratio"]), "loss_ratio", ["A", "B"])
    q0 = loss.effect("I")
    assert q0.q == pytest.approx(0.025) and q0.sd == pytest.approx(0.025)
    assert (q0.ci_low, q0.ci_high) == pytest.approx((0.0, 0.094411), abs=1e-6)
    qa = loss.effect("A")
    assert (qa.ci_low, qa.ci_high) == pytest.approx((-0.025 - 0.069411, -0.025 + 0.069411), abs=1e-6)
    y = two_k_r(pd.DataFrame(rows, columns=["A", "B", "y"]), "y", ["A", "B"]).effect("I")
    assert (y.ci_low, y.ci_high) == pytest.approx((-0.044411, 0.094411), abs=1e-6)
