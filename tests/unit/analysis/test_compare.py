"""`compare`: Welch and Hodges–Lehmann rows against scipy/statsmodels, Holm, and the verdicts."""

from __future__ import annotations

import itertools
import math
from dataclasses import replace

import numpy as np
import pandas as pd
import pytest
from scipy import stats
from statsmodels.stats.weightstats import CompareMeans, DescrStatsW

from vnetbench.analysis.compare import KEY, Row, compare, smallest_rank_p
from vnetbench.analysis.contrasts import mann_whitney


def obs(metric: str, values: list[float] | np.ndarray, pair: str = "a→b", kind: str = "tcp") -> pd.DataFrame:
    return pd.DataFrame(
        {
            "pattern": "p",
            "measurement": kind,
            "kind": kind,
            "pair": pair,
            "treatment": "—",
            "metric": metric,
            "value": values,
        }
    )


def test_welch_row_matches_scipy_and_statsmodels() -> None:
    a = np.array([9.41e9, 9.43e9, 9.40e9, 9.42e9])
    b = np.array([9.30e9, 9.36e9, 9.28e9, 9.33e9, 9.31e9])
    row = compare(obs("throughput_bps", a), obs("throughput_bps", b)).rows[0]
    assert row.test == "welch" and row.difference == pytest.approx(b.mean() - a.mean())
    assert row.p_value == pytest.approx(stats.ttest_ind(b, a, equal_var=False).pvalue)
    low, high = CompareMeans(DescrStatsW(b), DescrStatsW(a)).tconfint_diff(alpha=0.05, usevar="unequal")
    assert (row.ci_low, row.ci_high) == pytest.approx((low, high))
    assert row.relative_change == pytest.approx((b.mean() - a.mean()) / a.mean())
    # −1.1 % is significant but inside ±5 %: same; at ±0.5 % it is worse
    assert row.verdict == "same"
    assert (
        compare(obs("throughput_bps", a), obs("throughput_bps", b), tolerance=0.005).rows[0].verdict
        == "worse"
    )


def test_hodges_lehmann_shift_by_hand() -> None:
    """x = 1, 2, 3 and y = 4, 5, 6, 7: the 12 differences y − x are 1, 2, 2, 3, 3, 3, 4, 4, 4, 5, 5, 6,
    median (3 + 4)/2 = 3.5; Mann–Whitney from scipy."""
    row = compare(obs("rtt_ns", [1.0, 2, 3], kind="rtt"), obs("rtt_ns", [4.0, 5, 6, 7], kind="rtt")).rows[0]
    assert row.test == "mann-whitney" and row.difference == pytest.approx(3.5)
    assert row.p_value == pytest.approx(
        stats.mannwhitneyu([4, 5, 6, 7], [1, 2, 3], alternative="two-sided").pvalue
    )
    assert (row.center_a, row.center_b) == (2.0, 5.5)
    # 3 v 4 runs: P(U = 0) = 1/C(7, 3) = 1/35 = 0.029 > 0.025, so no 95 % interval exists; the range
    # of the differences (1, 6) is only a 1 − 2/35 = 94.3 % interval
    assert np.isnan(row.ci_low) and np.isnan(row.ci_high)


def brute_force_p(b: list[float], a: list[float]) -> float:
    """Two-sided exact Mann–Whitney p by enumerating every split of the pooled values into groups of
    len(b) and len(a), ties as mid-ranks: p = min(1, 2·min(P(U ≥ u), P(U ≤ u)))."""
    pooled = np.array([*b, *a], dtype=float)
    ranks = stats.rankdata(pooled)  # mid-ranks
    m = len(b)

    def u_of(idx: tuple[int, ...]) -> float:
        return float(ranks[list(idx)].sum()) - m * (m + 1) / 2

    observed = u_of(tuple(range(m)))
    us = np.array([u_of(idx) for idx in itertools.combinations(range(pooled.size), m)])
    return min(1.0, 2 * min(np.mean(us >= observed - 1e-9), np.mean(us <= observed + 1e-9)))


@pytest.mark.parametrize(
    ("b", "a", "expected"),
    [
        # one tie: the only split with all of b on top is 1 of C(6, 3) = 20, so p = 2/20 (scipy's
        # default fell back to the normal approximation for the tie and gave 0.077)
        ([4.0, 5, 5], [1.0, 2, 3], 0.1),
        # every value tied within its side (equal run medians): still 2/20, not 0.047
        ([5.0, 5, 5], [1.0, 1, 1], 0.1),
        # 4 v 4 with ties on both sides, all of b on top: 2/C(8, 4) = 2/70
        ([4.0, 5, 5, 7], [1.0, 2, 3, 3], 2 / 70),
        # no tie, interleaved: U = 6 of 9
        ([2.0, 5, 6], [1.0, 3, 4], None),
        # every value equal: every split gives the same U, p = 1
        ([5.0, 5, 5], [5.0, 5, 5], 1.0),
    ],
)
def test_mann_whitney_is_exact_with_ties_for_few_runs(
    b: list[float], a: list[float], expected: float | None
) -> None:
    p = float(mann_whitney(np.array(b), np.array(a)).pvalue)
    assert p == pytest.approx(brute_force_p(b, a))
    if expected is not None:
        assert p == pytest.approx(expected)
    assert p >= smallest_rank_p(len(a), len(b)) - 1e-12  # never below what an arrangement can give


def test_rtt_rows_with_tied_run_medians_are_not_significant_at_3_v_3() -> None:
    """Three runs a side whose medians tie (ping's µs resolution): p = 0.1 exactly, not 0.047 from the
    normal approximation, so the row is "same" with the 3 v 3 note, as the note says."""
    result = compare(
        obs("rtt_ns", [100_000.0, 100_000, 100_000], kind="rtt"),
        obs("rtt_ns", [300_000.0, 300_000, 300_000], kind="rtt"),
    )
    (row,) = result.rows
    assert row.p_value == pytest.approx(0.1) and row.verdict == "same"
    assert "3 v 3" in result.notes[0]


@pytest.mark.parametrize(
    ("m", "n", "c"),
    # C = u + 1 for the two-sided 5 % critical value u of U in the usual tables (reject when U ≤ u):
    # 4 v 4 → 0, 5 v 5 → 2, 8 v 8 → 13, 10 v 10 → 23 (published tables of critical values of U); checked
    # here by enumerating the C(m + n, m) splits for the small ones
    [(4, 4, 1), (5, 5, 3), (8, 8, 14), (10, 10, 24)],
)
def test_hodges_lehmann_interval_uses_the_exact_critical_value(m: int, n: int, c: int) -> None:
    x = np.arange(m, dtype=float) * 10.0  # distinct differences y − x: every order statistic is distinct
    y = np.arange(n, dtype=float) * 10.0**-3 + 1000.0 + 0.5
    row = compare(obs("rtt_ns", x, kind="rtt"), obs("rtt_ns", y, kind="rtt")).rows[0]
    diffs = np.sort((y[None, :] - x[:, None]).ravel())
    assert (row.ci_low, row.ci_high) == (diffs[c - 1], diffs[m * n - c])
    if math.comb(m + n, m) <= 20_000:  # the coverage by enumeration: ≥ 95 %, and c + 1 would fall short
        us = np.array(
            [sum(j - i for i, j in enumerate(idx)) for idx in itertools.combinations(range(m + n), m)]
        )  # U of the split: values below each of the chosen m, among the other n
        assert np.mean(us <= c - 1) <= 0.025 < np.mean(us <= c)


def test_hodges_lehmann_interval_covers_a_known_shift() -> None:
    """Exponential RTTs shifted by 20 µs: the interval contains 20 µs, and with a 50 µs floor the
    verdict stays "same" though the shift is significant."""
    g = np.random.default_rng(1)
    a = 60_000 + g.exponential(30_000, 400)
    b = 80_000 + g.exponential(30_000, 400)
    row = compare(obs("rtt_ns", a, kind="rtt"), obs("rtt_ns", b, kind="rtt")).rows[0]
    assert row.ci_low < 20_000 < row.ci_high and row.p_holm < 0.05
    assert row.band == 50_000 and row.verdict == "same"
    worse = compare(obs("rtt_ns", a, kind="rtt"), obs("rtt_ns", b + 100_000, kind="rtt")).rows[0]
    assert worse.verdict == "worse"


def test_directions_holm_and_unmatched() -> None:
    g = np.random.default_rng(2)
    base = 100e6 + g.normal(0, 1e6, 4)
    a = pd.concat(
        [
            obs("throughput_bps", base, "x→y"),
            obs("throughput_bps", base, "u→v"),
            obs("loss_ratio", [0.01] * 4, "u→v", "udp"),
        ]
    )
    b = pd.concat([
        obs("throughput_bps", base * 0.5, "x→y"),  # halved: worse
        obs("throughput_bps", base * 1.5, "u→v"),  # +50 %: better
        obs("loss_ratio", [0.01] * 4, "u→v", "udp"),  # identical, no spread: exact and same
        obs("throughput_bps", base, "q→r"),  # only in B
    ])  # fmt: skip
    c = compare(a, b)
    verdicts = {(r.key["pair"], r.key["metric"]): r.verdict for r in c.rows}
    assert verdicts == {
        ("x→y", "throughput_bps"): "worse",
        ("u→v", "throughput_bps"): "better",
        ("u→v", "loss_ratio"): "same",
    }
    p = sorted(r.p_value for r in c.rows if np.isfinite(r.p_value))
    holm = sorted(r.p_holm for r in c.rows if np.isfinite(r.p_holm))
    assert holm == pytest.approx([min(1, 2 * p[0]), max(min(1, 2 * p[0]), p[1])])
    assert [k["pair"] for k in c.only_in_b] == ["q→r"] and [r.key["pair"] for r in c.worse] == ["x→y"]
    assert c.to_dict()["counts"] == {"same": 1, "better": 1, "worse": 1}


def test_loss_floor_keeps_tiny_ratios_same() -> None:
    """0.006 % → 0.06 % loss is +900 % but 0.054 percentage points, under the 0.1 point floor."""
    a = obs("loss_ratio", [0.00005, 0.00006, 0.00007, 0.00006], kind="udp")
    b = obs("loss_ratio", [0.0006, 0.0005, 0.0007, 0.0006], kind="udp")
    row = compare(a, b).rows[0]
    assert row.relative_change > 5 and row.verdict == "same"


def test_key_columns() -> None:
    assert KEY == ["pattern", "measurement", "kind", "pair", "treatment", "metric"]


def test_smallest_rank_p_is_two_over_the_arrangements() -> None:
    # 3 v 3: C(6, 3) = 20 equally likely arrangements under H0, the two extreme ones give p = 2/20
    assert smallest_rank_p(3, 3) == pytest.approx(0.1)
    assert smallest_rank_p(4, 4) == pytest.approx(2 / 70)


def test_rtt_rows_with_too_few_runs_carry_a_note() -> None:
    few = compare(obs("rtt_ns", [1.0, 2, 3], kind="rtt"), obs("rtt_ns", [4.0, 5, 6], kind="rtt"))
    assert few.rows[0].verdict == "same" and len(few.notes) == 1 and "3 v 3" in few.notes[0]
    assert few.notes[0].startswith("1 RTT row compares 3 v 3 run medians")  # not '1 RTT row(s) compare'
    two = compare(
        pd.concat([obs("rtt_ns", [1.0, 2, 3], kind="rtt"), obs("rtt_ns", [1.0, 2, 3], "a→c", kind="rtt")]),
        pd.concat([obs("rtt_ns", [4.0, 5, 6], kind="rtt"), obs("rtt_ns", [4.0, 5, 6], "a→c", kind="rtt")]),
    )
    assert two.notes[0].startswith("2 RTT rows compare 3 v 3 run medians")
    enough = compare(
        obs("rtt_ns", [1.0, 2, 3, 4, 5], kind="rtt"), obs("rtt_ns", [6.0, 7, 8, 9, 10], kind="rtt")
    )
    assert enough.notes == ()


def test_a_large_change_that_is_not_significant_says_same_is_not_equal() -> None:
    # A: 100, 100, 40 (one stalled run), B: 50, 50, 50. Welch by hand: means 80 and 50, s²_A = 1200,
    # se = sqrt(1200 / 3) = 20, t = −1.5 with df = 2; for df = 2 the two-sided p is
    # 1 − |t| / sqrt(t² + 2) = 1 − 1.5 / sqrt(4.25) = 0.272: not significant, though −37.5 % is far
    # beyond the 5 % tolerance. "same" must not read as "shown equal".
    c = compare(obs("throughput_bps", [100.0, 100, 40]), obs("throughput_bps", [50.0, 50, 50]))
    (row,) = c.rows
    assert row.p_value == pytest.approx(1 - 1.5 / np.sqrt(4.25), abs=1e-9)
    assert row.verdict == "same" and not row.within_tolerance
    (note,) = c.notes
    assert note.startswith("1 row changed by more than the tolerance but not significantly")
    assert (
        "−37.5 % in throughput of a→b, 3 v 3 runs" in note and "not shown equal" in note
    )  # (50 − 80)/80, the minus sign U+2212; the metric named as the table names it, not 'throughput_bps'
    # within the tolerance: no note
    assert (
        compare(obs("throughput_bps", [100.0, 101, 99]), obs("throughput_bps", [100.0, 102, 98])).notes == ()
    )


def _scipy_welch(a: np.ndarray, b: np.ndarray) -> tuple[float, float, float]:
    """p and 95 % interval of mean(B) − mean(A) by scipy's Welch test, independent of compare's."""
    res = stats.ttest_ind(b, a, equal_var=False)
    ci = res.confidence_interval(0.95)
    return float(res.pvalue), float(ci.low), float(ci.high)


def test_a_relative_interval_of_a_metric_that_cannot_be_negative_is_cut_at_minus_100_percent() -> None:
    # the audit's loss row: 2.21 % -> 0.0196 %, printed '(−1369.3 to 1171.1) %'; B ≥ 0 so B − A ≥ −A
    a, b = np.array([0.0010, 0.0020, 0.0633]), np.array([0.0002, 0.0001, 0.0003])
    row = compare(obs("loss_ratio", a, kind="udp"), obs("loss_ratio", b, kind="udp")).rows[0]
    _, low, high = _scipy_welch(a, b)
    assert low / a.mean() < -1  # what was printed
    assert (row.ci_low, row.ci_high) == pytest.approx((low, high))  # the test's interval is kept
    assert row.relative_ci_cut and row.relative_ci == pytest.approx((-1.0, high / a.mean()))
    doc = row.to_dict()
    assert (doc["relative_ci"], doc["relative_ci_cut"]) == (pytest.approx([-1.0, high / a.mean()]), True)
    assert doc["ci"] == pytest.approx([low, high])
    # an interval that stays above −100 %: not cut
    a, b = np.array([95e6, 96e6, 94e6]), np.array([90e6, 91e6, 92e6])
    row = compare(obs("throughput_bps", a), obs("throughput_bps", b)).rows[0]
    _, low, high = _scipy_welch(a, b)
    assert not row.relative_ci_cut and row.relative_ci == pytest.approx((low / 95e6, high / 95e6))
    assert row.to_dict()["relative_ci_cut"] is False


def test_the_cut_does_not_change_the_verdict() -> None:
    # a significant fall of loss whose interval reaches −193 %: still 'better', p from the uncut test
    a, b = np.array([0.05, 0.06, 0.10]), np.array([0.0010, 0.0010, 0.0011])
    row = compare(obs("loss_ratio", a, kind="udp"), obs("loss_ratio", b, kind="udp")).rows[0]
    p, low, high = _scipy_welch(a, b)
    assert p < 0.05 and low / a.mean() < -1 < high / a.mean() < 0
    assert row.p_holm == pytest.approx(p)  # one row: Holm leaves p as it is
    assert (row.relative_ci_cut, row.verdict) == (True, "better")
    assert row.relative_ci == pytest.approx((-1.0, high / a.mean()))


def test_a_metric_that_can_be_negative_is_not_cut() -> None:
    # a clock offset can be below 0: its interval relative to A is left as Welch gives it
    key = {"pattern": "p", "measurement": "m", "kind": "tcp", "pair": "a→b", "treatment": "—"}
    row = Row(key | {"metric": "offset_ns"}, "welch", 3, 3, 10.0, 5.0, -5.0, -40.0, 30.0, 0.5, 0.5)
    assert not row.relative_ci_cut and row.relative_ci == (-4.0, 3.0)
    assert replace(row, key=key | {"metric": "rtt_ns"}).relative_ci == (-1.0, 3.0)  # an RTT cannot


def test_a_baseline_of_0_has_no_relative_change_and_says_so() -> None:
    # A lost nothing in any run, B lost in one: a change relative to A's 0 is undefined, not a number
    a, b = np.array([0.0, 0.0, 0.0]), np.array([0.0, 0.0001, 0.03])
    row = compare(obs("loss_ratio", a, kind="udp"), obs("loss_ratio", b, kind="udp")).rows[0]
    ci = stats.ttest_1samp(b, 0.0).confidence_interval(0.95)  # A has no spread: Welch is B's one-sample t
    assert ci.low < 0  # below −A = 0, which B − A cannot reach
    assert (row.ci_low, row.ci_high) == pytest.approx((ci.low, ci.high))  # the test's interval, uncut
    assert (row.ci_cut, row.relative_ci_cut) == (True, False)
    doc = row.to_dict()
    assert (doc["relative_change"], doc["relative_ci"]) == (None, [None, None])
    assert doc["relative_note"].startswith(
        "undefined: A's mean is 0, so a change relative to it has no meaning"
    )
    assert doc["ci_cut"] is True and doc["difference"] == pytest.approx(b.mean())
    # a baseline that is not 0 has no note
    other = compare(obs("loss_ratio", b + 0.01, kind="udp"), obs("loss_ratio", b, kind="udp")).rows[0]
    assert other.to_dict()["relative_note"] is None
