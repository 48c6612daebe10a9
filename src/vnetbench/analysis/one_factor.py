"""One-factor ANOVA in the textbook form (Jain, ch. 20), for equal or unequal replications.

Model: y_ij = μ + α_j + e_ij, with Σ r_j α_j = 0, so μ = ȳ.. (mean of all N observations) and
α_j = ȳ.j − ȳ.. . The sums of squares are Jain's closed forms on the centred response
(analysis/stable.py; the tests check them against statsmodels' ols + anova_lm); F = MSA/MSE with
its p-value from scipy's F distribution, undefined (with a note) when the error variance is 0; the
effects' intervals use Var(α_j) = s_e² (1/r_j − 1/N), which is Jain's s_e²(a−1)/(ar) when every
level has r replications.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats

from vnetbench.analysis.inputs import DataError, Level, check_confidence, design_frame
from vnetbench.analysis.jsonable import jsonable
from vnetbench.analysis.stable import cell_fit, centred, cut_at_zero, excludes_zero, f_test, sum_sq
from vnetbench.spec.units import cannot_be_negative


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
    def significant(self) -> bool | None:
        """The interval excludes 0; None when it has no width (zero error variance)."""
        return excludes_zero(self.ci_low, self.ci_high, self.sd)


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
    f_note: str | None  # why F and p are undefined (zero error variance, constant response), else None
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
    def significant(self) -> bool | None:
        """F beyond the table F; None when the F test is undefined (see `f_note`)."""
        return None if self.f_note else bool(self.f > self.f_table)

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
                "f_note": self.f_note,
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
            "significant": self.significant,
            "f_note": self.f_note,
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

    # Jain's sums of squares on the response centred on one of its values (analysis/stable.py): no
    # scale or offset of y changes them, and identical replicates leave residuals of exactly 0.
    codes = groups.cat.codes.to_numpy()
    anchor, d = centred(y)
    fitted, residuals = cell_fit(d, codes)
    grand_d = float(d.mean())
    sst = sum_sq(d - grand_d)
    sse = sum_sq(residuals)
    ssa = float(sum(rj * (fitted[codes == j][0] - grand_d) ** 2 for j, rj in enumerate(r)))
    df_a, df_e = a - 1, n - a
    test = f_test(ssa, df_a, sse, df_e, confidence, sst)
    mse = sse / df_e
    t = float(stats.t.ppf((1 + confidence) / 2, df_e))
    grand = anchor + grand_d
    s_e = float(np.sqrt(mse))
    effects = []
    for j, (lv, rj) in enumerate(zip(order, r, strict=True)):
        mean_d = float(fitted[codes == j][0])
        sd = s_e * float(np.sqrt(1 / rj - 1 / n))
        alpha = mean_d - grand_d
        effects.append(LevelEffect(lv, int(rj), anchor + mean_d, alpha, sd, alpha - t * sd, alpha + t * sd))
    half = t * s_e / np.sqrt(n)
    return OneFactorAnova(
        response=response,
        factor=factor,
        confidence=confidence,
        levels=tuple(order),
        replications=tuple(int(x) for x in r),
        ssy=n * grand**2 + sst,
        ss0=n * grand**2,
        sst=sst,
        ssa=ssa,
        sse=sse,
        df_a=df_a,
        df_e=df_e,
        f=test.f,
        f_table=test.f_table,
        p_value=test.p_value,
        f_note=test.note,
        t_quantile=t,
        grand_mean=grand,
        grand_mean_ci=cut_at_zero(grand - half, grand + half, cannot_be_negative(response)),
        effects=tuple(effects),
        level_of=np.asarray(groups.astype(object)),
        observed=y,
        predicted=anchor + fitted,
        residuals=residuals,
    )


def level_mean_intervals(anova: OneFactorAnova, future: int = 1) -> list[dict[str, Any]]:
    """Per level: μ + α_j = ȳ.j with s_e/√r_j (Jain ch. 20), and the interval of the mean of `future`
    new observations at that level, ȳ.j ∓ t·s_e·√(1/r_j + 1/future) (ch. 18.6's prediction form)."""
    t, s_e = anova.t_quantile, anova.s_e
    nonnegative = cannot_be_negative(anova.response)  # both intervals cut at 0 for it (cut_at_zero)
    out = []
    for e in anova.effects:
        sd = s_e / float(np.sqrt(e.n))
        half = t * s_e * float(np.sqrt(1 / e.n + 1 / future))
        ci = cut_at_zero(e.mean - t * sd, e.mean + t * sd, nonnegative)
        prediction = cut_at_zero(e.mean - half, e.mean + half, nonnegative)
        out.append(
            {"level": e.level, "n": e.n, "mean": e.mean, "sd": sd, "ci": list(ci)}
            | {"prediction_interval": list(prediction), "future_observations": future}
        )
    return jsonable(out)
