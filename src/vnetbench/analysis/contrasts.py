"""Confidence intervals of contrasts of a one-factor model (Jain, ch. 20).

A contrast is u = Σ h_j α_j with Σ h_j = 0. Its estimate is Σ h_j ȳ.j (μ cancels), and since the
level means are independent with variance σ²/r_j:

    Var(u) = s_e² Σ h_j² / r_j          (Jain: s_e² Σ h_j² / r for r replications each)

with s_e² = MSE on N − a degrees of freedom, so u ∓ t[1−α/2; N−a] · s_u. For a difference of two
levels (h = +1, −1, r each) that is s_u = s_e √(2/r).
"""

from __future__ import annotations

import itertools
import math
import warnings
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy import stats

from vnetbench.analysis.full_factorial import FactorialAnova
from vnetbench.analysis.inputs import DataError, Level, check_confidence
from vnetbench.analysis.jsonable import jsonable
from vnetbench.analysis.one_factor import OneFactorAnova
from vnetbench.analysis.stable import excludes_zero
from vnetbench.spec.units import signed

SUM_TOLERANCE = 1e-9


def welch(b: np.ndarray, a: np.ndarray) -> Any:
    """Welch's t test of mean(b) − mean(a): scipy's result (statistic, df, pvalue,
    confidence_interval). Nearly identical values (a group without spread, e.g. equal throughputs
    at a shaper's rate) are fine for Welch's t, whose variance term is then ~0, but scipy warns of
    "precision loss" on them, which would only alarm the user in the middle of the output.

    With one group without spread the test is still defined: it is then the one-sample t test of the
    other group against that group's value (DF n − 1 of the other group). With neither group having
    any spread it is not (t = d/0): the difference is exact, the same in every repetition, and no
    test applies, as for a contrast without error variance (`ContrastCI.exact`); callers treat that
    case before calling (placement, reproducibility, compare)."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="Precision loss occurred", category=RuntimeWarning)
        return stats.ttest_ind(b, a, equal_var=False)


EXACT_ARRANGEMENTS = 20_000  # C(m + n, m) up to which Mann–Whitney's p enumerates every arrangement


def mann_whitney(b: np.ndarray, a: np.ndarray) -> Any:
    """Two-sided Mann–Whitney U test of b against a: scipy's result (statistic, pvalue).

    With few arrangements C(m + n, m) the p-value is exact, from every split of the pooled values
    with ties as mid-ranks (the permutation test conditional on the ties). scipy's default falls back
    to the normal approximation as soon as two values tie, and at 3 v 3 with a tie that gave
    p = 0.047 where no arrangement can give less than 2/C(6, 3) = 0.1."""
    b, a = np.asarray(b, dtype=float), np.asarray(a, dtype=float)
    if math.comb(a.size + b.size, a.size) <= EXACT_ARRANGEMENTS:
        # n_resamples ≥ the number of distinct splits: scipy enumerates them all (exact, no rng)
        method: Any = stats.PermutationMethod(n_resamples=EXACT_ARRANGEMENTS)
    else:
        method = "auto"  # exact without ties while one side has ≤ 8 values, else normal with tie correction
    return stats.mannwhitneyu(b, a, alternative="two-sided", method=method)


@dataclass(frozen=True)
class ContrastCI:
    label: str
    weights: dict[Level, float]  # h_j per level
    estimate: float  # Σ h_j ȳ.j
    sd: float  # s_e √(Σ h_j² / r_j)
    dof: int
    t_quantile: float
    confidence: float
    ci_low: float
    ci_high: float

    @property
    def half_width(self) -> float:
        return self.t_quantile * self.sd

    @property
    def significant(self) -> bool | None:
        """The interval excludes zero; None when it has no width (zero error variance: t is undefined)."""
        return excludes_zero(self.ci_low, self.ci_high, self.sd)

    @property
    def exact(self) -> bool:
        """No error variance (s_e = 0: every repetition gave its level's mean exactly), so the
        estimate has no random error. Its test is undefined (`significant` is None), but a nonzero
        exact estimate is a real difference, seen identically in every repetition."""
        return self.sd == 0

    @property
    def rise(self) -> bool:
        """The contrast is shown to be above 0: significant with its interval above 0, or exact and
        positive (identical in every repetition). Capacity's rule for a degradation."""
        return self.estimate > 0 if self.exact else bool(self.significant) and self.ci_low > 0

    def to_dict(self) -> dict[str, Any]:
        return jsonable(
            {
                "label": self.label,
                "weights": [{"level": k, "h": v} for k, v in self.weights.items()],
                "estimate": self.estimate,
                "sd": self.sd,
                "dof": self.dof,
                "t_quantile": self.t_quantile,
                "confidence": self.confidence,
                "ci": [self.ci_low, self.ci_high],
                "half_width": self.half_width,
                "significant": self.significant,
                "exact": self.exact,
            }
        )


def contrast(
    anova: OneFactorAnova,
    weights: Mapping[Level, float],
    label: str | None = None,
    confidence: float | None = None,
) -> ContrastCI:
    """Interval of Σ h_j α_j; `weights` maps levels to h_j (levels left out have h_j = 0)."""
    confidence = anova.confidence if confidence is None else confidence
    check_confidence(confidence)
    unknown = [lv for lv in weights if lv not in anova.levels]
    if unknown:
        raise DataError(
            "weights", f"level(s) {unknown} not in the model", f"use levels of {list(anova.levels)}"
        )
    h = {lv: float(w) for lv, w in weights.items()}
    if abs(sum(h.values())) > SUM_TOLERANCE:
        raise DataError(
            "weights",
            f"Σh_j = {sum(h.values()):g}, not 0, so this is not a contrast (μ would not cancel)",
            "make the weights sum to zero, e.g. +1 and −1 for a difference of two levels",
        )
    by_level = {e.level: e for e in anova.effects}
    estimate = sum(w * by_level[lv].mean for lv, w in h.items())
    sd = anova.s_e * float(np.sqrt(sum(w * w / by_level[lv].n for lv, w in h.items())))
    t = float(stats.t.ppf((1 + confidence) / 2, anova.df_e))
    name = label or " ".join(f"{signed(w)}·α({lv})" for lv, w in h.items() if w)  # −1 as in 'α(B) − α(A)'
    return ContrastCI(name, h, estimate, sd, anova.df_e, t, confidence, estimate - t * sd, estimate + t * sd)


def difference(anova: OneFactorAnova, high: Level, low: Level, confidence: float | None = None) -> ContrastCI:
    """α(high) − α(low)."""
    return contrast(anova, {high: 1.0, low: -1.0}, f"α({high}) − α({low})", confidence)


def successive_differences(anova: OneFactorAnova, confidence: float | None = None) -> list[ContrastCI]:
    """α(j+1) − α(j) for neighbouring levels in the model's level order (the form of ONL Table 5)."""
    lv = anova.levels
    return [difference(anova, lv[i + 1], lv[i], confidence) for i in range(len(lv) - 1)]


def factor_successive_differences(
    anova: FactorialAnova, factor: str, confidence: float | None = None
) -> list[ContrastCI]:
    """m(j+1) − m(j) between neighbouring levels of one factor of a full-factorial model, where m(j)
    is the level's marginal mean: the unweighted mean of its cell means (over the other factors'
    combinations). With cell weights h_c = ±1/(cells at that level), Var = s_e² Σ h_c²/r_c on the
    model's error DF (Jain ch. 22: 2 s_e²/(b r) for a balanced two-factor design)."""
    confidence = anova.confidence if confidence is None else confidence
    check_confidence(confidence)
    if factor not in anova.factors:
        raise DataError("factor", f"'{factor}' is not in the model", f"use one of {list(anova.factors)}")
    cells = anova.cell_means
    levels = list(anova.levels[factor])
    t = float(stats.t.ppf((1 + confidence) / 2, anova.df_e))
    out = []
    for low, high in itertools.pairwise(levels):
        hi_cells, lo_cells = cells[cells[factor] == high], cells[cells[factor] == low]
        estimate = float(hi_cells["cell_mean"].mean() - lo_cells["cell_mean"].mean())
        var = sum((1 / len(g)) ** 2 * float((1 / g["cell_n"]).sum()) for g in (hi_cells, lo_cells))
        sd = anova.s_e * float(np.sqrt(var))
        label = f"{factor}: m({high}) − m({low})"
        out.append(
            ContrastCI(label, {high: 1.0, low: -1.0}, estimate, sd, anova.df_e, t, confidence,
                       estimate - t * sd, estimate + t * sd)
        )  # fmt: skip
    return out
