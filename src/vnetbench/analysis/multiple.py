"""Multiple comparisons: nine successive-difference intervals at 95 % each carry a 1 − 0.95⁹ = 37 %
chance that at least one says "significant" by accident. Two remedies (statsmodels):

- Tukey's HSD: every pair of levels of a one-factor model, simultaneous intervals
  ȳ_i − ȳ_j ∓ q[1−α; a, N−a]/√2 · s_e √(1/r_i + 1/r_j) (the Tukey–Kramer form for unequal r);
- Bonferroni and Holm adjustments of any family of contrasts: adjusted p-values (Holm is uniformly
  more powerful than Bonferroni and also controls the family-wise error), and Bonferroni's
  simultaneous intervals, t[1 − α/(2m); DF].
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy import stats
from statsmodels.sandbox.stats.multicomp import MultiComparison
from statsmodels.stats.multitest import multipletests

from vnetbench.analysis.contrasts import ContrastCI
from vnetbench.analysis.inputs import Level
from vnetbench.analysis.jsonable import jsonable
from vnetbench.analysis.one_factor import OneFactorAnova
from vnetbench.analysis.stable import excludes_zero


@dataclass(frozen=True)
class PairDifference:
    """ȳ(high) − ȳ(low) with Tukey's simultaneous interval and adjusted p-value."""

    high: Level
    low: Level
    estimate: float
    ci_low: float
    ci_high: float
    p_adjusted: float

    @property
    def significant(self) -> bool | None:
        return excludes_zero(self.ci_low, self.ci_high, self.ci_high - self.ci_low)

    def to_dict(self) -> dict[str, Any]:
        return jsonable(
            {
                "pair": [self.high, self.low],
                "estimate": self.estimate,
                "ci": [self.ci_low, self.ci_high],
                "p_adjusted": self.p_adjusted,
                "significant": self.significant,
            }
        )


@dataclass(frozen=True)
class AdjustedContrast:
    contrast: ContrastCI
    p_value: float  # unadjusted two-sided t test
    p_holm: float
    p_bonferroni: float
    bonferroni_ci: tuple[float, float]  # simultaneous over the family

    @property
    def significant_holm(self) -> bool | None:
        if not (self.contrast.sd > 0):
            return None
        return bool(self.p_holm < 1 - self.contrast.confidence)

    def to_dict(self) -> dict[str, Any]:
        return jsonable(
            {
                "label": self.contrast.label,
                "estimate": self.contrast.estimate,
                "p_value": self.p_value,
                "p_holm": self.p_holm,
                "p_bonferroni": self.p_bonferroni,
                "bonferroni_ci": list(self.bonferroni_ci),
                "significant_holm": self.significant_holm,
            }
        )


def tukey_hsd(anova: OneFactorAnova, confidence: float | None = None) -> list[PairDifference]:
    """Every pair of levels (later level minus earlier one), Tukey–Kramer simultaneous intervals."""
    confidence = anova.confidence if confidence is None else confidence
    y = np.asarray(anova.observed, dtype=float)
    y = y - np.sort(y)[(y.size - 1) // 2]  # centred: the differences keep their digits at any offset
    codes = np.array([anova.levels.index(lv) for lv in anova.level_of])
    if anova.mse == 0:
        return [_exact_pair(anova, i, j) for i, j in itertools.combinations(range(anova.a), 2)]
    table = MultiComparison(y, codes).tukeyhsd(alpha=1 - confidence)
    out = []
    for (g1, g2), diff, (lo, hi), p in zip(
        itertools.combinations(table.groupsunique, 2),
        table.meandiffs,
        table.confint,
        table.pvalues,
        strict=True,
    ):
        out.append(
            PairDifference(
                anova.levels[int(g2)], anova.levels[int(g1)], float(diff), float(lo), float(hi), float(p)
            )
        )
    return out


def _exact_pair(anova: OneFactorAnova, i: int, j: int) -> PairDifference:
    """Zero error variance: the difference is exact, its interval a point and its test undefined."""
    d = anova.effects[j].mean - anova.effects[i].mean
    return PairDifference(anova.levels[j], anova.levels[i], d, d, d, float("nan"))


def adjust(contrasts: Sequence[ContrastCI]) -> list[AdjustedContrast]:
    """Holm and Bonferroni adjustments over the family `contrasts` (e.g. the successive differences)."""
    if not contrasts:
        return []
    m = len(contrasts)
    p = np.array(
        [2 * stats.t.sf(abs(c.estimate / c.sd), c.dof) if c.sd > 0 else float("nan") for c in contrasts]
    )
    valid = np.isfinite(p)
    holm, bonf = np.full(m, np.nan), np.full(m, np.nan)
    if valid.any():
        holm[valid] = multipletests(p[valid], method="holm")[1]
        bonf[valid] = multipletests(p[valid], method="bonferroni")[1]
    out = []
    for c, pi, ph, pb in zip(contrasts, p, holm, bonf, strict=True):
        t = float(stats.t.ppf(1 - (1 - c.confidence) / (2 * m), c.dof))
        out.append(
            AdjustedContrast(
                c, float(pi), float(ph), float(pb), (c.estimate - t * c.sd, c.estimate + t * c.sd)
            )
        )
    return out
