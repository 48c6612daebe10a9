"""Planning repetitions (Jain §13.9), assumption checks and transforms, against closed forms."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from tests.helpers.stats_app import ONL
from vnetbench.analysis.assumptions import check_assumptions
from vnetbench.analysis.inputs import DataError
from vnetbench.analysis.one_factor import one_factor_anova
from vnetbench.analysis.planning import parse_precision, plan_repetitions, repetitions_needed
from vnetbench.analysis.transform import transform_response


def test_jains_sample_size_example() -> None:
    """Jain §13.9: a pilot gives x̄ = 20 s, s = 5 s; ±1 s (r = 5 %) at 95 % needs
    n = (100·1.960·5/(5·20))² = 96.04 → 97. With t instead of z: the smallest n with
    t[0.975; n−1]·5/√n ≤ 1 is 99 (t[0.975; 98] = 1.9845 → 0.99689; n = 98 gives 1.00268)."""
    assert repetitions_needed(20, 5, 0.05) == (97, 99)
    assert stats.t.ppf(0.975, 98) * 5 / np.sqrt(99) <= 1 < stats.t.ppf(0.975, 97) * 5 / np.sqrt(98)


def test_plan_per_treatment_at_any_offset() -> None:
    frame = pd.DataFrame(
        {"f": ["a"] * 4 + ["b"] * 4, "y": [9.4e9 + d for d in (0, 1e6, -1e6, 2e6, 0, 0, 1e3, -1e3)]}
    )
    rows = {r.group["f"]: r for r in plan_repetitions(frame, "y", ["f"], parse_precision("0.01%"))}
    sd_a = np.std([0, 1e6, -1e6, 2e6], ddof=1)
    assert rows["a"].sd == pytest.approx(sd_a)
    z = stats.norm.ppf(0.975)
    assert rows["a"].needed_jain == math.ceil((z * sd_a / (1e-4 * rows["a"].mean)) ** 2)
    assert rows["b"].needed == 2  # kbit/s spread at 9.4 Gbit/s is far inside ±0.01 %


def test_a_treatment_with_mean_zero_has_no_relative_precision_and_the_others_are_planned() -> None:
    """a: −1, 1, −2, 2 → mean 0, s = √(10/3) = 1.8257; ±10 % of 0 is no interval, so no n; the
    pilot's half-width is t[0.975; 3]·s/√4 = 3.1824 × 1.8257/2 = 2.905. c: 0.1, 0.2, −0.3 → mean 0
    (floats give −1.4e-17, rounding: n ≈ 1e34 once crashed scipy's t quantile). b: 9, 11 → mean 10, s = √2,
    target ±1: Jain's n = ⌈(1.96·√2)²⌉ = ⌈7.68⌉ = 8; with t, n = 10 gives t[0.975; 9]·√2/√10 = 1.012
    > 1 and n = 11 gives t[0.975; 10]·√2/√11 = 0.950: 11."""
    frame = pd.DataFrame({"f": ["a"] * 4 + ["b"] * 2 + ["c"] * 3, "y": [-1, 1, -2, 2, 9, 11, 0.1, 0.2, -0.3]})
    rows = {r.group["f"]: r for r in plan_repetitions(frame, "y", ["f"], 0.1)}
    a = rows["a"]
    assert (a.mean, a.needed_jain, a.needed, a.half_width_ratio) == (0, None, None, math.inf)
    assert a.sd == pytest.approx(math.sqrt(10 / 3))
    assert a.note is not None and "the mean is 0, so ±10 % of it is an interval of no width" in a.note
    assert "±2.905 from this pilot" in a.note
    assert a.to_dict()["repetitions_needed"] is None and a.to_dict()["note"] == a.note
    assert (rows["c"].mean, rows["c"].needed, rows["c"].note is not None) == (0, None, True)
    assert (rows["b"].needed_jain, rows["b"].needed, rows["b"].note) == (8, 11, None)


def test_a_zero_mean_given_directly_names_the_treatment_and_what_to_do() -> None:
    """repetitions_needed(mean=0, sd > 0) has no n, as plan_repetitions' row for such a treatment: the
    error says why (±1 % of 0 has no width) with the row's words, and names the treatment when given
    one, else the parameter; its fix is the absolute half-width. A constant 0 (sd = 0) needs no more
    repetitions: (1, 2) as for any constant."""
    with pytest.raises(DataError) as named:
        repetitions_needed(0, 1.5, 0.01, treatment="receivers=5")
    assert named.value.field == "treatment receivers=5"
    assert named.value.problem == (
        "the mean is 0, so ±1 % of it is an interval of no width, which no number of repetitions reaches"
    )
    assert "absolute half-width t·s/√n" in named.value.fix
    with pytest.raises(DataError) as unnamed:
        repetitions_needed(0, 1.5, 0.01)
    assert unnamed.value.field == "mean" and unnamed.value.problem == named.value.problem
    assert repetitions_needed(0, 0, 0.01) == (1, 2)


def test_a_mean_that_is_0_but_for_rounding_gives_jains_n_instead_of_crashing() -> None:
    """mean 1e-17, s = 1, ±10 %: Jain's n = (1.959964·1/(0.1·1e-17))² = 3.841459e36 (z² = 3.841459,
    χ²₁'s 95 % point). scipy's t quantile raised TypeError at such an n; beyond 10⁹ repetitions the
    t-based n is given as Jain's (t[n − 1]/z − 1 ≤ (1 + z²)/(4·10⁹) = 1.2e-9 there)."""
    jain, needed = repetitions_needed(1e-17, 1.0, 0.1)
    assert jain == needed == pytest.approx(3.841459e36, rel=1e-6)


@pytest.mark.parametrize("text", ["0", "150%", "x", "1"])
def test_bad_precision(text: str) -> None:
    with pytest.raises(DataError, match="target-precision"):
        parse_precision(text)


def welch_anova_by_hand(groups: list[np.ndarray]) -> tuple[float, float]:
    """Welch (1951): w_j = n_j/s_j², ȳ_w = Σw_jȳ_j/Σw_j, A = Σw_j(ȳ_j − ȳ_w)²/(k − 1),
    Λ = Σ(1 − w_j/Σw)²/(n_j − 1), F = A / (1 + 2(k−2)Λ/(k²−1)) on (k−1, (k²−1)/(3Λ)) DF."""
    k = len(groups)
    n = np.array([g.size for g in groups])
    m = np.array([g.mean() for g in groups])
    w = n / np.array([g.var(ddof=1) for g in groups])
    mw = (w * m).sum() / w.sum()
    lam = ((1 - w / w.sum()) ** 2 / (n - 1)).sum()
    f = ((w * (m - mw) ** 2).sum() / (k - 1)) / (1 + 2 * (k - 2) * lam / (k * k - 1))
    return f, stats.f.sf(f, k - 1, (k * k - 1) / (3 * lam))


def test_assumption_checks_on_growing_variance() -> None:
    """SD ∝ mean (lognormal-like): Brown–Forsythe finds unequal variances, the log SD / log mean
    slope is near 1, and the advice is a log transform. Levene's F equals the one-factor ANOVA F of
    |y − level mean| (its definition); Welch's ANOVA and Kruskal–Wallis by their formulas."""
    rng = np.random.default_rng(11)
    levels = [1, 2, 4, 8]
    frame = pd.DataFrame(
        [{"f": lv, "y": lv * 10 * math.exp(rng.normal(0, 0.2))} for lv in levels for _ in range(8)]
    )
    a = one_factor_anova(frame, "y", "f")
    c = check_assumptions(a)
    dev = frame.assign(y=(frame["y"] - frame.groupby("f")["y"].transform("mean")).abs())
    assert c.levene.statistic == pytest.approx(one_factor_anova(dev, "y", "f").f)
    groups = [frame.loc[frame["f"] == lv, "y"].to_numpy() for lv in levels]
    f, p = welch_anova_by_hand(groups)
    assert (c.welch_anova.statistic, c.welch_anova.p_value) == pytest.approx((f, p))
    ranks = stats.rankdata(frame["y"])
    n = len(ranks)
    h = 12 / (n * (n + 1)) * sum(ranks[frame["f"] == lv].sum() ** 2 / 8 for lv in levels) - 3 * (n + 1)
    assert c.kruskal_wallis.statistic == pytest.approx(h)
    # 8 values per level: H's χ²[a − 1] approximation, p = P(χ²₃ > H)
    assert c.kruskal_wallis.p_value == pytest.approx(stats.chi2.sf(h, 3))
    assert c.kruskal_wallis.method is not None and c.kruskal_wallis.method.startswith("χ²")
    assert c.brown_forsythe.p_value < 0.05
    assert c.sd_mean_slope == pytest.approx(1, abs=0.35)
    assert c.read == "transform" and "--transform log" in c.advice


def h_by_hand(ranks: np.ndarray, sizes: list[int]) -> float:
    """Kruskal & Wallis (1952): H = 12/(N(N + 1))·Σ R_j²/n_j − 3(N + 1) over the rank sums R_j of
    consecutive blocks of `ranks` (mid-ranks for ties), divided by 1 − Σ(t³ − t)/(N³ − N) over the
    groups of t tied values."""
    n = ranks.size
    sums = np.add.reduceat(ranks, np.cumsum([0, *sizes[:-1]]))
    h = 12 / (n * (n + 1)) * float(np.sum(sums**2 / np.array(sizes))) - 3 * (n + 1)
    t = np.unique(ranks, return_counts=True)[1]
    return h / (1 - float(np.sum(t**3 - t)) / (n**3 - n))


def every_assignment_p(values: list[float], sizes: list[int]) -> float:
    """Share of all N!/(Π n_j!) assignments of the values to groups of these sizes whose H is at
    least the observed one (the first n_1 values are group 1, …), by enumeration."""
    ranks = stats.rankdata(values)
    observed = h_by_hand(ranks, sizes)
    reached: list[bool] = []

    def split(rest: tuple[int, ...], left: list[int], order: list[int]) -> None:
        if not left:
            reached.append(h_by_hand(ranks[order], sizes) >= observed - 1e-9)
            return
        for pick in itertools.combinations(rest, left[0]):
            split(tuple(i for i in rest if i not in pick), left[1:], [*order, *pick])

    split(tuple(range(len(values))), sizes, [])
    assert len(reached) == math.factorial(len(values)) // math.prod(math.factorial(n) for n in sizes)
    return sum(reached) / len(reached)


@pytest.mark.parametrize(
    ("values", "chi2_p"),
    [
        # ranks 1–3, 4–6, 7–9: H = 12/90·(6² + 15² + 24²)/3 − 30 = 7.2, the largest H of 3 × 3; 6 of the
        # 1680 assignments (the 3! orders of the blocks) reach it: p = 0.0036 (Kruskal & Wallis's
        # table: 0.004), where χ²₂ says e^(−3.6) = 0.027
        ([1, 2, 3, 4, 5, 6, 7, 8, 9], math.exp(-3.6)),
        ([1, 1, 2, 2, 3, 3, 4, 4, 5], None),  # ties: mid-ranks and the tie correction
        ([3, 1, 6, 2, 5, 9, 4, 8, 7], None),
    ],
)
def test_kruskal_wallis_with_three_values_per_level_is_exact(
    values: list[float], chi2_p: float | None
) -> None:
    frame = pd.DataFrame({"f": np.repeat([1, 2, 3], 3), "y": values})
    kw = check_assumptions(one_factor_anova(frame, "y", "f")).kruskal_wallis
    assert kw.statistic == pytest.approx(h_by_hand(stats.rankdata(values), [3, 3, 3]))
    assert kw.p_value == pytest.approx(every_assignment_p(values, [3, 3, 3]))
    assert kw.method == "exact: every one of the 1680 assignments of the values to the levels"
    assert not kw.p_is_bound and kw.p_text().endswith(", exact")
    if chi2_p is not None:
        assert kw.p_value == pytest.approx(6 / 1680)
        assert stats.chi2.sf(kw.statistic, 2) == pytest.approx(chi2_p)  # what it used to say


def test_kruskal_wallis_with_four_levels_of_four_is_a_seeded_monte_carlo() -> None:
    """16!/(4!)⁴ = 63 063 000 assignments, too many to enumerate: 9 999 seeded random ones. The
    test draws its own 20 000 with numpy and H by hand; the two estimates agree within 4 standard
    errors of their difference, and the χ² p (0.03 here) is not what is reported."""
    values = [1.2, 2.9, 0.4, 3.3, 2.1, 4.0, 3.1, 1.8, 3.6, 4.4, 5.0, 2.5, 4.9, 3.9, 6.1, 5.5]
    frame = pd.DataFrame({"f": np.repeat([1, 2, 3, 4], 4), "y": values})
    kw = check_assumptions(one_factor_anova(frame, "y", "f")).kruskal_wallis
    ranks = stats.rankdata(values)
    observed = h_by_hand(ranks, [4] * 4)
    rng = np.random.default_rng(2024)
    null = np.array([h_by_hand(rng.permutation(ranks), [4] * 4) for _ in range(20_000)])
    p = float(np.mean(null >= observed - 1e-9))
    se = math.sqrt(p * (1 - p) * (1 / 9_999 + 1 / 20_000))
    assert abs(kw.p_value - p) < 4 * se
    assert kw.method is not None and kw.method.startswith("Monte Carlo: 9999 random assignments")
    assert abs(stats.chi2.sf(observed, 3) - p) > 4 * se  # the approximation it replaces is off
    again = check_assumptions(one_factor_anova(frame, "y", "f")).kruskal_wallis
    assert again.p_value == kw.p_value  # seeded: the same data give the same p


def test_equal_variances_read_the_anova() -> None:
    rng = np.random.default_rng(12)
    frame = pd.DataFrame([{"f": lv, "y": 100 + lv + rng.normal(0, 1)} for lv in range(3) for _ in range(10)])
    c = check_assumptions(one_factor_anova(frame, "y", "f"))
    assert c.read == "anova"


def test_two_values_per_level_cannot_test_equal_variances() -> None:
    """With 2 values a level's |y − centre| are equal, so Levene's ANOVA of them has no error term:
    scipy's own levene gives F = ∞, p = 0 here ("the variances differ", from data that cannot show
    it; was the advice of `vnetbench stats` on a 2-repetition campaign). Now: undefined, and the
    advice says the pooled analysis assumes equal variances untested."""
    frame = pd.DataFrame({"f": ["a", "a", "b", "b", "c", "c"], "y": [1.0, 2.0, 1.0, 5.0, 3.0, 4.0]})
    groups = [frame.loc[frame["f"] == lv, "y"].to_numpy() for lv in "abc"]
    with np.errstate(divide="ignore"):
        assert stats.levene(*groups).statistic == math.inf  # the degenerate F this replaces
    c = check_assumptions(one_factor_anova(frame, "y", "f"))
    why = "at most 2 values per level, which always lie equally far from their level's centre"
    for test in (c.levene, c.brown_forsythe):
        assert math.isnan(test.p_value) and test.note == f"undefined: {why}"
    assert c.read == "anova"
    assert c.advice == (
        f"Equal variances cannot be tested here ({why}): the ANOVA and its pooled intervals assume them; "
        "with 3 or more values per level they can be checked."
    )
    # one level of 3 values gives the distances a spread: the test is defined again, F by its definition
    frame = pd.concat([frame, pd.DataFrame({"f": ["c"], "y": [6.0]})], ignore_index=True)
    c = check_assumptions(one_factor_anova(frame, "y", "f"))
    dev = frame.assign(y=(frame["y"] - frame.groupby("f")["y"].transform("mean")).abs())
    assert c.levene.note is None and c.levene.statistic == pytest.approx(one_factor_anova(dev, "y", "f").f)


def test_onl_loss_says_which_result_to_read() -> None:
    """ONL's Table 3: SD 0 at 1–2 receivers, 2–4 points at 6–10; zeros forbid a plain log."""
    a = one_factor_anova(pd.read_csv(ONL), "loss", "receivers")
    c = check_assumptions(a)
    assert c.brown_forsythe.p_value < 0.05
    assert c.welch_anova.note is not None  # zero-variance levels: Welch's weights are infinite
    assert c.read == "kruskal" and "zeros rule out a log transform" in c.advice
    # 5 values per level, 50!/(5!)¹⁰ ≈ 4.9e43 assignments: Monte Carlo, and none of 9 999 reaches H = 48.3
    # (χ²₉ would say 2.2e-07): p is the bound 1/10 000, and the advice says so
    assert c.kruskal_wallis.p_is_bound and c.kruskal_wallis.p_value == pytest.approx(1 / 10_000)
    assert "Kruskal–Wallis (p ≤ 0.0001, Monte Carlo)" in c.advice


def test_transforms() -> None:
    frame = pd.DataFrame({"f": [1, 1, 2, 2], "y": [1.0, np.e, np.e**2, np.e**3]})
    logged, t = transform_response(frame, "y", "log")
    assert logged["y"].tolist() == pytest.approx([0, 1, 2, 3]) and t.label == "log(y)"
    boxed, t = transform_response(frame, "y", "boxcox")
    expected, lam = stats.boxcox(frame["y"].to_numpy())
    assert t.lam == pytest.approx(lam) and boxed["y"].tolist() == pytest.approx(expected.tolist())
    with pytest.raises(DataError, match="row 2 of the data is 0"):
        transform_response(pd.DataFrame({"f": [1, 2], "y": [1.0, 0.0]}), "y", "log")
