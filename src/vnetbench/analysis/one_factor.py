"""One-factor ANOVA in the textbook form (Jain, ch. 20), for equal or unequal replications.

Model: y_ij = μ + α_j + e_ij, with Σ r_j α_j = 0, so μ = ȳ.. (mean of all N observations) and
α_j = ȳ.j − ȳ.. . The sums of squares come from statsmodels (ols + anova_lm); F = MSA/MSE with
its p-value from scipy's F distribution (so an exact fit gives F = ∞, not a division warning);
the effects' intervals use Var(α_j) = s_e² (1/r_j − 1/N), which is Jain's s_e²(a−1)/(ar) when every
level has r replications.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
import statsmodels.formula.api as smf
from scipy import stats
from statsmodels.stats.anova import anova_lm

from vnetbench.analysis.inputs import DataError, Level, check_confidence, design_frame
from vnetbench.analysis.jsonable import jsonable

ROUND_OFF = 1e-12  # relative to SSY: sums of squares below it are zero


@dataclass(frozen=True)
class LevelEffect:
    level: Level
    n: int
    mean: float
    effect: float  # α_j = ȳ.j − ȳ..
    sd: float  # standard deviation of the estimate α_j
    ci_low: float
    ci_high: float

    @property
    def significant(self) -> bool:
        return self.ci_low > 0 or self.ci_high < 0


@dataclass(frozen=True)
class OneFactorAnova:
    response: str
    factor: str
    confidence: float
    levels: tuple[Level, ...]
    replications: tuple[int, ...]  # r_j per level, in `levels` order
    ssy: float  # Σ y²
    ss0: float  # N ȳ..²
    sst: float  # Σ (y − ȳ..)² = SSY − SS0
    ssa: float  # explained by the factor
    sse: float  # errors
    df_a: int
    df_e: int
    f: float
    f_table: float  # F[confidence; a−1, N−a]
    p_value: float
    t_quantile: float  # t[(1+confidence)/2; N−a], used by every interval
    grand_mean: float
    grand_mean_ci: tuple[float, float]
    effects: tuple[LevelEffect, ...]
    level_of: np.ndarray = field(repr=False)  # level of each observation
    observed: np.ndarray = field(repr=False)
    predicted: np.ndarray = field(repr=False)
    residuals: np.ndarray = field(repr=False)

    @property
    def n(self) -> int:
        return int(sum(self.replications))

    @property
    def a(self) -> int:
        return len(self.levels)

    @property
    def msa(self) -> float:
        return self.ssa / self.df_a

    @property
    def mse(self) -> float:
        return self.sse / self.df_e

    @property
    def s_e(self) -> float:
        return float(np.sqrt(self.mse))

    @property
    def pct_a(self) -> float:
        return 100 * self.ssa / self.sst if self.sst > 0 else float("nan")

    @property
    def pct_e(self) -> float:
        return 100 * self.sse / self.sst if self.sst > 0 else float("nan")

    def effect(self, level: Level) -> LevelEffect:
        for e in self.effects:
            if e.level == level:
                return e
        raise KeyError(f"level {level!r} not in {list(self.levels)}")

    def table(self) -> list[dict[str, Any]]:
        """Jain's ANOVA table, one dict per row (y, ȳ.., y − ȳ.., A, e)."""
        blank = {"pct_variation": None, "mean_square": None, "f": None, "f_table": None, "p_value": None}
        return [
            {"component": "y", "sum_of_squares": self.ssy, "dof": self.n} | blank,
            {"component": "ȳ..", "sum_of_squares": self.ss0, "dof": 1} | blank,
            {"component": "y − ȳ..", "sum_of_squares": self.sst, "dof": self.n - 1}
            | blank
            | {"pct_variation": 100.0},
            {
                "component": self.factor,
                "sum_of_squares": self.ssa,
                "pct_variation": self.pct_a,
                "dof": self.df_a,
                "mean_square": self.msa,
                "f": self.f,
                "f_table": self.f_table,
                "p_value": self.p_value,
            },
            {"component": "errors", "sum_of_squares": self.sse, "dof": self.df_e}
            | blank
            | {"pct_variation": self.pct_e, "mean_square": self.mse},
        ]

    def to_dict(self, observations: bool = False) -> dict[str, Any]:
        out: dict[str, Any] = {
            "response": self.response,
            "factor": self.factor,
            "confidence": self.confidence,
            "levels": list(self.levels),
            "replications": list(self.replications),
            "n": self.n,
            "ssy": self.ssy,
            "ss0": self.ss0,
            "sst": self.sst,
            "ssa": self.ssa,
            "sse": self.sse,
            "pct_a": self.pct_a,
            "pct_e": self.pct_e,
            "df_y": self.n,
            "df_0": 1,
            "df_t": self.n - 1,
            "df_a": self.df_a,
            "df_e": self.df_e,
            "msa": self.msa,
            "mse": self.mse,
            "f": self.f,
            "f_table": self.f_table,
            "p_value": self.p_value,
            "significant": self.f > self.f_table,
            "s_e": self.s_e,
            "t_quantile": self.t_quantile,
            "grand_mean": self.grand_mean,
            "grand_mean_ci": list(self.grand_mean_ci),
            "effects": [
                {
                    "level": e.level,
                    "n": e.n,
                    "mean": e.mean,
                    "effect": e.effect,
                    "sd": e.sd,
                    "ci": [e.ci_low, e.ci_high],
                    "significant": e.significant,
                }
                for e in self.effects
            ],
            "table": self.table(),
        }
        if observations:
            out["observations"] = {
                "level": list(self.level_of),
                "observed": list(self.observed),
                "predicted": list(self.predicted),
                "residual": list(self.residuals),
            }
        return jsonable(out)


def one_factor_anova(
    frame: pd.DataFrame,
    response: str,
    factor: str,
    confidence: float = 0.95,
    levels: Sequence[Level] | None = None,
) -> OneFactorAnova:
    """ANOVA of `response` against the levels of `factor` (all levels, or only `levels`, in that order)."""
    check_confidence(confidence)
    data = design_frame(frame, response, [factor], {factor: levels} if levels is not None else None)
    y = data[response].to_numpy()
    groups = data[factor]
    order = list(groups.cat.categories)
    r = np.array([int((groups == lv).sum()) for lv in order])
    n, a = int(r.sum()), len(order)
    if n - a < 1:
        raise DataError(
            f"column '{response}'",
            "every level has a single observation, so the error variance cannot be estimated",
            "replicate: measure at least one level twice (Jain recommends r ≥ 3 for every level)",
        )

    model = pd.DataFrame({"y": y, "g": groups.cat.codes.to_numpy()})
    fit = smf.ols("y ~ C(g)", data=model).fit()
    anova = anova_lm(fit, typ=1)
    ssa = float(anova.loc["C(g)", "sum_sq"])
    sse = float(anova.loc["Residual", "sum_sq"])
    ssy = float(fit.uncentered_tss)
    if sse <= ROUND_OFF * ssy:
        sse = 0.0  # identical replicates: the fit's 1e-31 is round-off, and F must be ∞, not 1e30
    sst = float(fit.centered_tss)
    df_a, df_e = a - 1, n - a
    mse = sse / df_e
    # a design whose replicates agree exactly (MSE = 0) is perfectly significant
    f = ssa / df_a / mse if mse > 0 else (float("inf") if ssa > 0 else float("nan"))
    p = float(stats.f.sf(f, df_a, df_e)) if mse > 0 else (0.0 if ssa > 0 else float("nan"))

    t = float(stats.t.ppf((1 + confidence) / 2, df_e))
    grand = float(y.mean())
    s_e = float(np.sqrt(mse))
    effects = []
    for lv, rj in zip(order, r, strict=True):
        mean = float(y[(groups == lv).to_numpy()].mean())
        sd = s_e * float(np.sqrt(1 / rj - 1 / n))
        alpha = mean - grand
        effects.append(LevelEffect(lv, int(rj), mean, alpha, sd, alpha - t * sd, alpha + t * sd))
    half = t * s_e / np.sqrt(n)
    return OneFactorAnova(
        response=response,
        factor=factor,
        confidence=confidence,
        levels=tuple(order),
        replications=tuple(int(x) for x in r),
        ssy=ssy,
        ss0=ssy - sst,
        sst=sst,
        ssa=ssa,
        sse=sse,
        df_a=df_a,
        df_e=df_e,
        f=f,
        f_table=float(stats.f.ppf(confidence, df_a, df_e)),
        p_value=p,
        t_quantile=t,
        grand_mean=grand,
        grand_mean_ci=(grand - half, grand + half),
        effects=tuple(effects),
        level_of=np.asarray(groups.astype(object)),
        observed=y,
        predicted=fit.fittedvalues.to_numpy(),
        residuals=fit.resid.to_numpy(),
    )
