"""When the residuals say the model does not fit: tests that do not need its assumptions, and
advice on which result to read.

The one-factor ANOVA (and every pooled interval) assumes errors of equal variance at every level and
close to normal. ONL's loss data break the first: the residual SD is 0 at 1–2 receivers and 2–4
points at 6–10, growing with the mean. Checked here (scipy, statsmodels):

- Levene's test (|y − level mean|) and Brown–Forsythe's (|y − level median|, robust to skew) of
  equal variances;
- Welch's ANOVA (each level its own variance) for equal means under unequal variances;
- Kruskal–Wallis (ranks) for equal distributions without normality;
- the slope b of log SD against log mean over the levels: b ≈ 1 means SD ∝ mean and a log transform
  makes the variance constant (Box–Cox λ ≈ 1 − b: b ≈ 0.5 → square root).

`advice` reads them in that order and says which analysis to trust.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy import stats
from statsmodels.stats.oneway import anova_oneway

from vnetbench.analysis.diagnostics import diagnostics
from vnetbench.analysis.jsonable import jsonable
from vnetbench.analysis.one_factor import OneFactorAnova

ALPHA = 0.05  # level of the assumption tests behind the advice


@dataclass(frozen=True)
class TestResult:
    statistic: float
    p_value: float
    note: str | None = None  # why it was not run

    def to_dict(self) -> dict[str, Any]:
        return jsonable({"statistic": self.statistic, "p_value": self.p_value, "note": self.note})


@dataclass(frozen=True)
class AssumptionChecks:
    levene: TestResult
    brown_forsythe: TestResult
    welch_anova: TestResult
    kruskal_wallis: TestResult
    shapiro_p: float | None
    sd_mean_slope: float | None  # b of log SD = c + b·log mean over the levels
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
                "read": self.read,
                "advice": self.advice,
            }
        )


def check_assumptions(anova: OneFactorAnova) -> AssumptionChecks:
    y = np.asarray(anova.observed, dtype=float)
    y = y - np.sort(y)[(y.size - 1) // 2]  # centred: the tests keep their digits at any offset
    groups = [y[np.asarray(anova.level_of == lv)] for lv in anova.levels]
    levene = _run(lambda: stats.levene(*groups, center="mean"))
    brown = _run(lambda: stats.levene(*groups, center="median"))
    kruskal = _run(lambda: stats.kruskal(*groups))
    welch = _welch(groups)
    slope = _sd_mean_slope(anova)
    shapiro = diagnostics(anova).shapiro_p
    read, advice = _advise(anova, brown, welch, kruskal, shapiro, slope)
    return AssumptionChecks(levene, brown, welch, kruskal, shapiro, slope, read, advice)


def _run(test: Any) -> TestResult:
    with np.errstate(all="ignore"):
        r = test()
    stat, p = float(r.statistic), float(r.pvalue)
    if not np.isfinite(p):
        return TestResult(stat, p, "undefined: no variation within or between the levels")
    return TestResult(stat, p)


def _welch(groups: list[np.ndarray]) -> TestResult:
    if any(g.size < 2 for g in groups):
        return TestResult(float("nan"), float("nan"), "undefined: a level has fewer than 2 observations")
    if any(np.ptp(g) == 0 for g in groups):
        return TestResult(
            float("nan"), float("nan"), "undefined: a level has zero variance (its weight n/s² is infinite)"
        )
    r = anova_oneway(groups, use_var="unequal", welch_correction=True)
    return TestResult(float(r.statistic), float(r.pvalue))


def _sd_mean_slope(anova: OneFactorAnova) -> float | None:
    means = np.array([e.mean for e in anova.effects])
    sds = np.array(
        [np.std(np.asarray(anova.observed)[np.asarray(anova.level_of == lv)], ddof=1) for lv in anova.levels]
    )
    ok = (means > 0) & (sds > 0)
    if ok.sum() < 3:
        return None
    return float(np.polyfit(np.log(means[ok]), np.log(sds[ok]), 1)[0])


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
            f"(Welch's ANOVA is undefined): read Kruskal–Wallis (p = {kruskal.p_value:.2g}) for whether the "
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
    if not normal:
        return "kruskal", (
            f"The residuals are not normal (Shapiro–Wilk p = {shapiro:.2g}) but the variances agree: read "
            f"Kruskal–Wallis (p = {kruskal.p_value:.2g}) for whether the levels differ; with many "
            "replications the ANOVA is robust to this."
        )
    return "anova", "Equal variances and normal-looking residuals: the ANOVA and its intervals apply."
