"""Capacity recommendation from a one-factor study of loss against load (ONL §6.3).

Two criteria, each with its reasoning kept as text:
1. threshold: the largest level such that it and every lower level have a mean loss at or below
   the threshold (in the response's own unit: 0.01 for a ratio, 1.0 for percent);
2. significance: the first level whose increase over the previous level is significant, i.e. whose
   interval of α(j) − α(j−1) (textbook contrast, pooled s_e) lies above zero; the level before it is
   the last one before a significant degradation. When every repetition of every level gave the
   same value (s_e = 0) no test applies (the contrasts' `significant` is None), but the differences
   are exact: the first level whose mean is above the previous one is then the first *exact*
   increase, identical in every repetition, and counts the same way (`ContrastCI.rise`).
The recommendation is the lower of the two. Because a pooled s_e assumes equal variances, each
step is also checked with Welch's test (each level's own variance) and a disagreement is reported.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial
from typing import Any

import numpy as np

from vnetbench.analysis.contrasts import ContrastCI, successive_differences, welch
from vnetbench.analysis.inputs import Level
from vnetbench.analysis.jsonable import jsonable
from vnetbench.analysis.one_factor import OneFactorAnova
from vnetbench.spec.units import format_metric, format_metric_interval, metric_name


@dataclass(frozen=True)
class StepCheck:
    contrast: ContrastCI  # pooled textbook interval of α(j) − α(j−1)
    welch_ci: tuple[float, float] | None  # None when both levels have zero variance or r < 2

    @property
    def welch_significant(self) -> bool | None:
        if self.welch_ci is None:
            return None
        return self.welch_ci[0] > 0 or self.welch_ci[1] < 0


@dataclass(frozen=True)
class CapacityRecommendation:
    threshold: float
    confidence: float
    max_level_under_threshold: Level | None  # None: even the first level is above the threshold
    first_significant_increase: Level | None  # the level j whose α(j) − α(j−1) is significantly > 0
    first_exact_increase: Level | None  # s_e = 0: the first j with α(j) > α(j−1) in every repetition
    last_level_before_increase: Level | None
    recommended: Level | None
    steps: tuple[StepCheck, ...]
    reasoning: tuple[str, ...]

    @property
    def text(self) -> str:
        return "\n".join(self.reasoning)

    def to_dict(self) -> dict[str, Any]:
        return jsonable(
            {
                "threshold": self.threshold,
                "confidence": self.confidence,
                "max_level_under_threshold": self.max_level_under_threshold,
                "first_significant_increase": self.first_significant_increase,
                "first_exact_increase": self.first_exact_increase,
                "last_level_before_increase": self.last_level_before_increase,
                "recommended": self.recommended,
                "steps": [
                    s.contrast.to_dict() | {"welch_ci": s.welch_ci, "welch_significant": s.welch_significant}
                    for s in self.steps
                ],
                "reasoning": list(self.reasoning),
            }
        )


def recommend_capacity(
    anova: OneFactorAnova, threshold: float = 0.01, confidence: float | None = None
) -> CapacityRecommendation:
    """`anova` is a one-factor model of loss against an ordered load factor (receivers, tenants…)."""
    confidence = anova.confidence if confidence is None else confidence
    levels, means = anova.levels, [e.mean for e in anova.effects]
    r = anova.response
    show = partial(format_metric, r)  # in the unit a person reads (loss in %)
    unit = f"{metric_name(r)} ≤ {show(threshold)}"
    why: list[str] = []

    under, crossed = None, None
    for lv, m in zip(levels, means, strict=True):
        if m > threshold:
            crossed = (lv, m)
            break
        under = lv
    if under is None:
        why.append(f"Threshold: no level keeps {unit}; at the lowest level the mean is {show(means[0])}.")
    else:
        why.append(f"Threshold: {anova.factor} ≤ {under} keeps the mean {unit}.")
    if crossed is not None:
        why.append(
            f"At {anova.factor} = {crossed[0]} the mean {metric_name(r)} is {show(crossed[1])} "
            f"> {show(threshold)}."
        )
        after = levels[levels.index(crossed[0]) + 1 :]
        dips = [lv for lv in after if means[levels.index(lv)] <= threshold]
        if dips:
            why.append(
                f"(Levels {dips} dip back under the threshold after it was crossed; they are not counted.)"
            )

    steps = tuple(
        StepCheck(c, _welch(anova, i, confidence))
        for i, c in enumerate(successive_differences(anova, confidence))
    )
    first = next((levels[i + 1] for i, s in enumerate(steps) if s.contrast.rise), None)
    exact = bool(steps) and steps[0].contrast.exact  # s_e = 0: every contrast is exact
    before = levels[levels.index(first) - 1] if first is not None else levels[-1]
    why.append(_significance_reason(anova, steps, first, confidence))
    for i, s in enumerate(steps):
        pooled = s.contrast.rise
        if s.welch_significant is not None and s.welch_significant != pooled and i <= levels.index(before):
            lo, hi = s.welch_ci or (np.nan, np.nan)
            interval = format_metric_interval(r, lo, hi, unit=True, delta=True)  # of a difference: pp
            why.append(
                f"Caution: Welch's test (each level's own variance) "
                f"{'finds' if s.welch_significant else 'does not find'} "
                f"a significant change from {levels[i]} to {levels[i + 1]}: {interval}; "
                "the pooled s_e assumes equal variances — check the residual spread per level."
            )

    candidates = [lv for lv in (under, before) if lv is not None]
    recommended = min(candidates, key=levels.index) if under is not None else None
    if recommended is not None:
        why.append(f"Recommended maximum: {anova.factor} = {recommended} (the lower of the two criteria).")
    return CapacityRecommendation(
        threshold=threshold,
        confidence=confidence,
        max_level_under_threshold=under,
        first_significant_increase=None if exact else first,
        first_exact_increase=first if exact else None,
        last_level_before_increase=before if first is not None else None,
        recommended=recommended,
        steps=steps,
        reasoning=tuple(why),
    )


def _significance_reason(
    anova: OneFactorAnova, steps: tuple[StepCheck, ...], first: Level | None, confidence: float
) -> str:
    """The sentence of the second criterion: the first step that rises (significant, or exact when
    s_e = 0), with its numbers, or that none does."""
    show = partial(format_metric, anova.response)
    exact = bool(steps) and steps[0].contrast.exact
    identical = "every repetition of every level gave the same value (s_e = 0), so no test applies"
    if first is None:
        if exact:
            return f"Significance: {identical}, and no level's mean is above the previous one's."
        pct = f"{100 * confidence:g} %"
        return f"Significance: no step between neighbouring levels is a significant increase at {pct}."
    before = anova.levels[anova.levels.index(first) - 1]
    c = steps[anova.levels.index(first) - 1].contrast
    rise = f"Significance: from {before} to {first} the mean rises by {show(c.estimate, delta=True)}"
    if exact:
        return (
            f"{rise} in every repetition: {identical}, but an increase seen identically in every "
            "repetition is exact, not noise, and counts as a degradation."
        )
    # the interval and s are of the difference, in its unit: percentage points for a loss, as the rise
    # ('rises by +6.38 pp, 95 % interval (6.34, 6.43 %)' put a difference of percentages in %)
    interval = format_metric_interval(anova.response, c.ci_low, c.ci_high, unit=True, delta=True)
    return (
        f"{rise}, {100 * confidence:g} % interval {interval} excludes 0 "
        f"(s_e = {show(anova.s_e)}, t[{c.dof}] = {c.t_quantile:.4g}, "
        f"s = s_e·√(Σh²/r) = {show(c.sd, True, True).lstrip('+')})."
    )


def _welch(anova: OneFactorAnova, i: int, confidence: float) -> tuple[float, float] | None:
    lo_level, hi_level = anova.levels[i], anova.levels[i + 1]
    a = anova.observed[anova.level_of == lo_level]
    b = anova.observed[anova.level_of == hi_level]
    if a.size < 2 or b.size < 2 or (np.ptp(a) == 0 and np.ptp(b) == 0):
        return None
    ci = welch(b, a).confidence_interval(confidence)
    return float(ci.low), float(ci.high)
