"""When the residuals say the model does not fit: tests that do not need its assumptions, and
advice on which result to read.

The one-factor ANOVA (and every pooled interval) assumes errors of equal variance at every level and
close to normal. ONL's loss data break the first: the residual SD is 0 at 1–2 receivers and 2–4
points at 6–10, growing with the mean. Checked here (scipy, statsmodels):

- Levene's test (|y − level mean|) and Brown–Forsythe's (|y − level median|, robust to skew) of
  equal variances;
- Welch's ANOVA (each level its own variance) for equal means under unequal variances;
- Kruskal–Wallis (ranks) for equal distributions without normality: H's χ² approximation when every
  level has more than 5 values, else a permutation p over H (scipy's `permutation_test`): exact, from
  every assignment of the values to the levels, while there are at most 20 000 of them, else from
  9 999 seeded random assignments; `method` says which;
- the slope b of log SD against log mean over the levels: b ≈ 1 means SD ∝ mean and a log transform
  makes the variance constant (Box–Cox λ ≈ 1 − b: b ≈ 0.5 → square root).

`advice` reads them in that order and says which analysis to trust.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy import stats
from statsmodels.stats.oneway import anova_oneway

from vnetbench.analysis.contrasts import EXACT_ARRANGEMENTS
from vnetbench.analysis.diagnostics import diagnostics
from vnetbench.analysis.jsonable import jsonable
from vnetbench.analysis.one_factor import OneFactorAnova

ALPHA = 0.05  # level of the assumption tests behind the advice
# Kruskal–Wallis: H is close to χ²[a − 1] only when every level has more than 5 values (scipy's
# `kruskal` docs: "each sample must have at least 5 measurements"; with 3 of 3 values the χ² p of the
# most extreme H is 0.027 where every assignment of the values gives 6/1680 = 0.0036). Smaller levels
# get a permutation p: exact up to EXACT_ARRANGEMENTS assignments (as Mann–Whitney's), else seeded
# Monte Carlo.
KRUSKAL_CHI2_MIN_LEVEL = 6
KRUSKAL_RESAMPLES = 9_999  # p to within √(p(1 − p)/9 999): ± 0.0022 at p = 0.05
KRUSKAL_SEED = 20_140_417  # fixed: the same data give the same p


@dataclass(frozen=True)
class TestResult:
    statistic: float
    p_value: float
    note: str | None = None  # why it was not run
    method: str | None = None  # how p was computed, where there is a choice (Kruskal–Wallis)
    p_is_bound: bool = False  # p is the smallest a Monte Carlo p can be: the true p is at most this

    def to_dict(self) -> dict[str, Any]:
        return jsonable(
            {
                "statistic": self.statistic,
                "p_value": self.p_value,
                "p_is_bound": self.p_is_bound,
                "note": self.note,
                "method": self.method,
            }
        )

    def p_text(self) -> str:
        """'p = 0.0036' with the method where there is one: 'p = 0.0036, exact', 'p ≤ 0.0001, Monte Carlo'."""
        p = f"p {'≤' if self.p_is_bound else '='} {self.p_value:.2g}"
        return p + (f", {self.method.split(':')[0]}" if self.method else "")


@dataclass(frozen=True)
class AssumptionChecks:
    levene: TestResult
    brown_forsythe: TestResult
    welch_anova: TestResult
    kruskal_wallis: TestResult
    shapiro_p: float | None
    sd_mean_slope: float | None  # b of log SD = c + b·log mean over the levels
    sd_mean_slope_note: str | None  # why there is no slope (too few levels to fit a line), else None
    read: str  # "anova" | "welch" | "kruskal" | "transform"
    advice: str

    def to_dict(self) -> dict[str, Any]:
        return jsonable(
            {
                "levene": self.levene.to_dict(),
                "brown_forsythe": self.brown_forsythe.to_dict(),
                "welch_anova": self.welch_anova.to_dict(),
                "kruskal_wallis": self.kruskal_wallis.to_dict(),
                "shapiro_p": self.shapiro_p,
                "sd_mean_slope": self.sd_mean_slope,
                "sd_mean_slope_note": self.sd_mean_slope_note,
                "read": self.read,
                "advice": self.advice,
            }
        )


def check_assumptions(anova: OneFactorAnova) -> AssumptionChecks:
    y = np.asarray(anova.observed, dtype=float)
    y = y - np.sort(y)[(y.size - 1) // 2]  # centred: the tests keep their digits at any offset
    groups = [y[np.asarray(anova.level_of == lv)] for lv in anova.levels]
    levene = _spread_test(groups, "mean")
    brown = _spread_test(groups, "median")
    kruskal = _kruskal(groups)
    welch = _welch(groups)
    slope, slope_note = _sd_mean_slope(anova)
    shapiro = diagnostics(anova).shapiro_p
    read, advice = _advise(anova, brown, welch, kruskal, shapiro, slope)
    return AssumptionChecks(levene, brown, welch, kruskal, shapiro, slope, slope_note, read, advice)


def _run(test: Any) -> TestResult:
    with np.errstate(all="ignore"):
        r = test()
    stat, p = float(r.statistic), float(r.pvalue)
    if not np.isfinite(p):
        return TestResult(stat, p, "undefined: no variation within or between the levels")
    return TestResult(stat, p)


def _spread_test(groups: list[np.ndarray], center: str) -> TestResult:
    """Levene's (center 'mean') or Brown–Forsythe's ('median') test: an ANOVA of |y − level centre|.
    Undefined when those distances do not vary within any level: it has no error term, and scipy
    returns F = ∞, p = 0 — "the variances differ" from data that cannot show it. A level of 2 values
    is always so (both lie equally far from its mean and median)."""
    centre = np.mean if center == "mean" else np.median
    distances = [np.abs(g - centre(g)) for g in groups]
    scale = max((float(np.max(np.abs(g))) for g in groups if g.size), default=0.0)
    if all(np.ptp(d) <= 1e-12 * max(scale, 1e-300) for d in distances if d.size):
        why = (
            "at most 2 values per level, which always lie equally far from their level's centre"
            if max(g.size for g in groups) <= 2
            else "every level's values lie equally far from its centre"
        )
        return TestResult(float("nan"), float("nan"), f"undefined: {why}")
    return _run(lambda: stats.levene(*groups, center=center))


def _kruskal(groups: list[np.ndarray]) -> TestResult:
    """Kruskal–Wallis H with its χ² p, or with a permutation p when a level is small (see
    KRUSKAL_CHI2_MIN_LEVEL): the share of assignments of the observed values to levels of the same
    sizes whose H is at least the observed one (ties keep their mid-ranks: conditional on them)."""
    chi2 = _run(lambda: stats.kruskal(*groups))
    if chi2.note is not None:
        return chi2
    if min(g.size for g in groups) >= KRUSKAL_CHI2_MIN_LEVEL:
        return TestResult(chi2.statistic, chi2.p_value, method="χ² approximation: every level has ≥ 6 values")
    sizes = [g.size for g in groups]
    arrangements = math.factorial(sum(sizes)) // math.prod(math.factorial(n) for n in sizes)
    exact = arrangements <= EXACT_ARRANGEMENTS

    def h(*samples: np.ndarray, axis: int = -1) -> np.ndarray:
        return stats.kruskal(*samples, axis=axis).statistic

    with np.errstate(all="ignore"):
        r = stats.permutation_test(
            groups,
            h,
            permutation_type="independent",
            vectorized=True,
            # n_resamples ≥ the number of distinct assignments: scipy enumerates them all (no rng)
            n_resamples=EXACT_ARRANGEMENTS if exact else KRUSKAL_RESAMPLES,
            alternative="greater",
            rng=np.random.default_rng(KRUSKAL_SEED),
        )
    p = float(r.pvalue)
    if exact:
        return TestResult(
            chi2.statistic,
            p,
            method=f"exact: every one of the {arrangements} assignments of the values to the levels",
        )
    random = f"Monte Carlo: {KRUSKAL_RESAMPLES} random assignments of the values to the levels"
    random += f" (seed {KRUSKAL_SEED}"
    if round(p * (KRUSKAL_RESAMPLES + 1)) == 1:  # p = (0 + 1)/(R + 1): no assignment reached H
        return TestResult(
            chi2.statistic,
            p,
            method=f"{random}; none reached H, so p ≤ 1/{KRUSKAL_RESAMPLES + 1})",
            p_is_bound=True,
        )
    se = math.sqrt(p * (1 - p) / KRUSKAL_RESAMPLES)
    return TestResult(chi2.statistic, p, method=f"{random}; standard error of p {se:.2g})")


def _welch(groups: list[np.ndarray]) -> TestResult:
    if any(g.size < 2 for g in groups):
        return TestResult(float("nan"), float("nan"), "undefined: a level has fewer than 2 observations")
    if any(np.ptp(g) == 0 for g in groups):
        return TestResult(
            float("nan"), float("nan"), "undefined: a level has zero variance (its weight n/s² is infinite)"
        )
    r = anova_oneway(groups, use_var="unequal", welch_correction=True)
    return TestResult(float(r.statistic), float(r.pvalue))


def _sd_mean_slope(anova: OneFactorAnova) -> tuple[float | None, str | None]:
    """The slope with no note, or None with why: a line through 2 points always fits, so its slope
    says nothing about how the SD follows the mean; the logs need a positive mean and SD."""
    means = np.array([e.mean for e in anova.effects])
    sds = np.array(
        [np.std(np.asarray(anova.observed)[np.asarray(anova.level_of == lv)], ddof=1) for lv in anova.levels]
    )
    ok = (means > 0) & (sds > 0)
    if means.size < 3:
        return None, f"undefined: needs 3 levels or more (this table has {means.size})"
    if ok.sum() < 3:
        return None, (
            f"undefined: needs 3 levels or more with a positive mean and SD ({int(ok.sum())} of "
            f"{means.size} have both)"
        )
    return float(np.polyfit(np.log(means[ok]), np.log(sds[ok]), 1)[0]), None


def _advise(
    anova: OneFactorAnova,
    brown: TestResult,
    welch: TestResult,
    kruskal: TestResult,
    shapiro: float | None,
    slope: float | None,
) -> tuple[str, str]:
    unequal = brown.note is None and brown.p_value < ALPHA
    normal = shapiro is None or shapiro >= ALPHA
    grows = slope is not None and slope > 0.5
    if unequal and grows and np.min(anova.observed) <= 0:
        if welch.note is None:
            return "welch", (
                f"The variances differ (Brown–Forsythe p = {brown.p_value:.2g}) and the SD grows with the "
                f"mean (slope {slope:.2f}), but the zeros rule out a log transform: read Welch's ANOVA "
                f"(p = {welch.p_value:.2g}) and Welch comparisons, not the pooled F and intervals."
            )
        return "kruskal", (
            f"The variances differ (Brown–Forsythe p = {brown.p_value:.2g}), the SD grows with the mean "
            f"(slope {slope:.2f}), zeros rule out a log transform and some levels have no spread at all "
            f"(Welch's ANOVA is undefined): read Kruskal–Wallis ({kruskal.p_text()}) for whether the "
            "levels differ and Welch comparisons of neighbouring levels, not the pooled intervals."
        )
    if unequal and grows:
        lam = 1 - slope
        return "transform", (
            f"The variances differ (Brown–Forsythe p = {brown.p_value:.2g}) and the SD grows with the mean "
            f"(slope {slope:.2f} of log SD on log mean; Box–Cox λ ≈ {lam:.2f}): read the analysis with "
            f"--transform {'log' if abs(lam) < 0.25 else 'boxcox'}, or Welch's ANOVA and Welch's "
            "intervals; the pooled intervals are too wide for the low-variance levels and too narrow "
            "for the others."
        )
    if unequal:
        w = "undefined here" if welch.note else f"p = {welch.p_value:.2g}"
        return "welch", (
            f"The variances differ (Brown–Forsythe p = {brown.p_value:.2g}): read Welch's ANOVA ({w}) and "
            "Welch comparisons rather than the pooled F and intervals."
        )
    variances = "the variances agree" if brown.note is None else "equal variances cannot be tested here"
    if not normal:
        return "kruskal", (
            f"The residuals are not normal (Shapiro–Wilk p = {shapiro:.2g}) and {variances}: read "
            f"Kruskal–Wallis ({kruskal.p_text()}) for whether the levels differ; with many "
            "replications the ANOVA is robust to this."
        )
    if brown.note is not None:
        return "anova", (
            f"Equal variances cannot be tested here ({brown.note.removeprefix('undefined: ')}): the ANOVA "
            "and its pooled intervals assume them; with 3 or more values per level they can be checked."
        )
    return "anova", "Equal variances and normal-looking residuals: the ANOVA and its intervals apply."
