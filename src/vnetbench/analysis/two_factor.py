"""Two-factor designs (Jain ch. 21 without replication, ch. 22 with r replications): the effects
μ, α_j, β_i, γ_ij with their intervals, the level means and the predicted responses.

Model: y_ijk = μ + α_j + β_i + γ_ij + e_ijk (factor A in columns j = 1..a, factor B in rows
i = 1..b). With one observation per cell (r = 1) there is no interaction term: the cell's deviation
from μ + α_j + β_i is the error, with (a − 1)(b − 1) degrees of freedom (ch. 21).

Every estimate is a linear combination Σ w_c ȳ_c of the cell means (unweighted, sum-to-zero
effects), so its variance is s_e² Σ w_c²/r_c. In a balanced design that is Jain's table 22.5:
s_μ = s_e/√(abr), s_α = s_e √((a−1)/(abr)), s_β = s_e √((b−1)/(abr)), s_γ = s_e √((a−1)(b−1)/(abr)),
and s_e/√(br) for a level mean μ + α_j. A predicted response ŷ (a cell mean, or μ + α_j + β_i when
r = 1) has the interval ŷ ∓ t·s_e·√(Σw²/r) for its mean and ŷ ∓ t·s_e·√(Σw²/r + 1/m) for the mean
of m future observations (Jain 18.6, with n_eff = 1/Σ(w²/r)).

The ANOVA table with replication is `full_factorial_anova`'s; without it, the sums of squares are
SSA = b Σα_j², SSB = a Σβ_i², SSE = Σ e², on the centred response (analysis/stable.py).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats

from vnetbench.analysis.full_factorial import AnovaTerm, FactorialAnova, full_factorial_anova
from vnetbench.analysis.inputs import DataError, Level, check_confidence, design_frame
from vnetbench.analysis.jsonable import jsonable
from vnetbench.analysis.stable import centred, cut_at_zero, excludes_zero, f_test, round_off_only, sum_sq
from vnetbench.spec.units import cannot_be_negative

FUTURE_OBSERVATIONS = 1  # m of the prediction interval: one more measurement of that cell


@dataclass(frozen=True)
class Estimate:
    """One effect, level mean or predicted response with its interval."""

    kind: str  # "mean", "alpha", "beta", "gamma", "level mean", "predicted"
    label: str  # "μ", "α(cubic)", "γ(cubic, 4)", …
    levels: tuple[Level, ...]
    value: float
    sd: float
    ci_low: float
    ci_high: float
    prediction: tuple[float, float] | None = None  # interval of m future observations (predicted only)

    @property
    def significant(self) -> bool | None:
        return excludes_zero(self.ci_low, self.ci_high, self.sd) if self.kind in EFFECT_KINDS else None

    def to_dict(self) -> dict[str, Any]:
        out = {
            "kind": self.kind,
            "label": self.label,
            "levels": list(self.levels),
            "value": self.value,
            "sd": self.sd,
            "ci": [self.ci_low, self.ci_high],
            "significant": self.significant,
        }
        if self.prediction is not None:
            out["prediction_interval"] = list(self.prediction)
        return out


EFFECT_KINDS = ("alpha", "beta", "gamma")


@dataclass(frozen=True)
class TwoFactorResult:
    response: str
    factors: tuple[str, str]  # (A: columns j, B: rows i)
    levels: dict[str, tuple[Level, ...]]
    confidence: float
    replicated: bool  # r ≥ 2 in some cell: interactions estimated
    terms: tuple[AnovaTerm, ...]
    sst: float
    sse: float
    df_e: int
    t_quantile: float
    estimates: tuple[Estimate, ...]
    observed: np.ndarray = field(repr=False)
    predicted: np.ndarray = field(repr=False)
    residuals: np.ndarray = field(repr=False)

    @property
    def s_e(self) -> float:
        return float(np.sqrt(self.sse / self.df_e))

    @property
    def pct_e(self) -> float:
        return 100 * self.sse / self.sst if self.sst > 0 else float("nan")

    def of_kind(self, kind: str) -> list[Estimate]:
        return [e for e in self.estimates if e.kind == kind]

    def estimate(self, label: str) -> Estimate:
        for e in self.estimates:
            if e.label == label:
                return e
        raise KeyError(label)

    def to_dict(self) -> dict[str, Any]:
        return jsonable(
            {
                "design": "two-factor" + ("" if self.replicated else " without replication"),
                "response": self.response,
                "factors": list(self.factors),
                "levels": {f: list(v) for f, v in self.levels.items()},
                "confidence": self.confidence,
                "terms": [t.to_dict() for t in self.terms],
                "sst": self.sst,
                "sse": self.sse,
                "pct_e": self.pct_e,
                "df_e": self.df_e,
                "s_e": self.s_e,
                "t_quantile": self.t_quantile,
                "estimates": [e.to_dict() for e in self.estimates],
            }
        )


def two_factor(
    frame: pd.DataFrame, response: str, factors: Sequence[str], confidence: float = 0.95
) -> TwoFactorResult:
    """Effects and intervals of a two-factor design, with or without replication."""
    check_confidence(confidence)
    if len(factors) != 2:
        raise DataError(
            "--factor",
            f"a two-factor design takes exactly two factors, got {len(factors)}",
            "give two --factor options (or use --design factorial for more)",
        )
    a_name, b_name = factors
    data = design_frame(frame, response, factors)
    a_levels, b_levels = list(data[a_name].cat.categories), list(data[b_name].cat.categories)
    anchor, d = centred(data[response].to_numpy())
    col, row = data[a_name].cat.codes.to_numpy(), data[b_name].cat.codes.to_numpy()
    counts = _cell_counts(row, col, (a_name, b_name), a_levels, b_levels)
    replicated = bool((counts > 1).any())
    sums = np.zeros(counts.shape)
    np.add.at(sums, (row, col), d)
    cells = _Cells(sums / counts, counts)  # centred cell means
    if replicated:
        anova: FactorialAnova = full_factorial_anova(frame, response, factors, confidence)
        terms, sse, df_e, sst = anova.terms, anova.sse, anova.df_e, anova.sst
        fitted = cells.means[row, col]
        residuals = anova.residuals
    else:
        fitted = cells.mu + cells.alpha[col] + cells.beta[row]
        residuals = d - fitted
        if round_off_only(residuals, anchor + d):
            # an exactly additive response: what is left is the rounding of μ + α + β, not an
            # interaction (it made F ≈ 1e31 "significant" where the test is undefined)
            residuals = np.zeros_like(d)
        sse, df_e, sst, terms = _additive_anova(cells, residuals, d, (a_name, b_name), confidence)
    t = float(stats.t.ppf((1 + confidence) / 2, df_e))
    scale = _Scale(anchor, t, float(np.sqrt(sse / df_e)), 1.0 / counts, cannot_be_negative(response))
    return TwoFactorResult(
        response=response,
        factors=(a_name, b_name),
        levels={a_name: tuple(a_levels), b_name: tuple(b_levels)},
        confidence=confidence,
        replicated=replicated,
        terms=tuple(terms),
        sst=sst,
        sse=sse,
        df_e=df_e,
        t_quantile=t,
        estimates=tuple(_estimates(cells, scale, a_levels, b_levels, replicated)),
        observed=anchor + d,
        predicted=anchor + fitted,
        residuals=np.asarray(residuals, dtype=float),
    )


def _cell_counts(
    row: np.ndarray, col: np.ndarray, names: tuple[str, str], a_levels: list[Level], b_levels: list[Level]
) -> np.ndarray:
    """Observations per cell (rows: B's levels, columns: A's); DataError for an unmeasured cell, or
    without replication for too few levels to leave error degrees of freedom."""
    a, b = len(a_levels), len(b_levels)
    counts = np.zeros((b, a), dtype=int)
    np.add.at(counts, (row, col), 1)
    if (counts == 0).any():
        i, j = np.argwhere(counts == 0)[0]
        raise DataError(
            "factor",
            f"the combination {names[0]}={a_levels[j]}, {names[1]}={b_levels[i]} was not measured",
            "a two-factor design measures every combination of levels",
        )
    if not (counts > 1).any() and (a < 2 or b < 2 or (a - 1) * (b - 1) < 1):
        raise DataError("factor", "too few levels to estimate errors", "use two factors with ≥ 2 levels")
    return counts


@dataclass(frozen=True)
class _Cells:
    """Centred cell means (rows: B's levels i, columns: A's levels j) and their counts."""

    means: np.ndarray
    counts: np.ndarray

    @property
    def mu(self) -> float:
        return float(self.means.mean())

    @property
    def alpha(self) -> np.ndarray:
        return self.means.mean(axis=0) - self.mu

    @property
    def beta(self) -> np.ndarray:
        return self.means.mean(axis=1) - self.mu


def _additive_anova(
    cells: _Cells, residuals: np.ndarray, d: np.ndarray, names: tuple[str, str], confidence: float
) -> tuple[float, int, float, tuple[AnovaTerm, ...]]:
    """(SSE, its DF, SST, the two terms) without replication (Jain ch. 21): no interaction term."""
    b, a = cells.means.shape
    sse, df_e = sum_sq(residuals), (a - 1) * (b - 1)
    sst = sum_sq(d - d.mean())
    terms = tuple(
        _term(name, ss, df, sse, df_e, sst, confidence)
        for name, ss, df in (
            (names[0], b * sum_sq(cells.alpha), a - 1),
            (names[1], a * sum_sq(cells.beta), b - 1),
        )
    )
    return sse, df_e, sst, terms


@dataclass(frozen=True)
class _Scale:
    """What turns a weighted sum of centred cell means into an estimate with its interval."""

    anchor: float  # the response's centre (added back to means, not to effects)
    t: float
    s_e: float
    inv_r: np.ndarray  # 1 / observations per cell
    nonnegative: bool = False  # the response cannot be negative: intervals of means are cut at 0

    def estimate(
        self, kind: str, label: str, levels: tuple[Level, ...], w: np.ndarray, value: float
    ) -> Estimate:
        var = float(np.sum(w * w * self.inv_r))
        sd = self.s_e * float(np.sqrt(var))
        shift = self.anchor if kind in ("mean", "level mean", "predicted") else 0.0
        lo, hi = value + shift - self.t * sd, value + shift + self.t * sd
        cut = self.nonnegative and kind in ("mean", "level mean", "predicted")  # means, not effects
        lo, hi = cut_at_zero(lo, hi, cut)
        pred = None
        if kind == "predicted":
            half = self.t * self.s_e * float(np.sqrt(var + 1 / FUTURE_OBSERVATIONS))
            pred = cut_at_zero(value + shift - half, value + shift + half, cut)
        return Estimate(kind, label, levels, value + shift, sd, lo, hi, pred)


def _estimates(
    cells: _Cells, scale: _Scale, a_levels: list[Level], b_levels: list[Level], replicated: bool
) -> list[Estimate]:
    """μ, α_j, β_i, (with replication) γ_ij, the level means and the predicted responses."""
    make = scale.estimate
    means, mu, alpha, beta = cells.means, cells.mu, cells.alpha, cells.beta
    b, a = means.shape
    every = np.full((b, a), 1 / (a * b))
    column = [np.where(np.arange(a) == j, 1 / b, 0.0) * np.ones((b, 1)) for j in range(a)]  # A's level j
    line = [
        np.where(np.arange(b) == i, 1 / a, 0.0)[:, None] * np.ones((1, a)) for i in range(b)
    ]  # B's level i
    estimates = [make("mean", "μ", (), every, mu)]
    estimates += [
        make("alpha", f"α({lv})", (lv,), column[j] - every, float(alpha[j])) for j, lv in enumerate(a_levels)
    ]
    estimates += [
        make("beta", f"β({lv})", (lv,), line[i] - every, float(beta[i])) for i, lv in enumerate(b_levels)
    ]
    if replicated:
        for i, j in np.ndindex(b, a):
            w = every - column[j] - line[i]  # δ_ij − column j/b − row i/a + 1/(ab)
            w[i, j] += 1
            gamma = float(means[i, j] - alpha[j] - beta[i] - mu)
            estimates.append(
                make("gamma", f"γ({a_levels[j]}, {b_levels[i]})", (a_levels[j], b_levels[i]), w, gamma)
            )
    estimates += [
        make("level mean", f"μ + α({lv})", (lv,), column[j], mu + float(alpha[j]))
        for j, lv in enumerate(a_levels)
    ]
    estimates += [
        make("level mean", f"μ + β({lv})", (lv,), line[i], mu + float(beta[i]))
        for i, lv in enumerate(b_levels)
    ]
    for i, j in np.ndindex(b, a):
        if replicated:
            w = np.zeros((b, a))
            w[i, j] = 1.0
            value = float(means[i, j])
        else:
            w = -every + column[j] + line[i]  # in the order of Jain's μ + α_j + β_i
            value = float(mu + alpha[j] + beta[i])
        estimates.append(
            make("predicted", f"ŷ({a_levels[j]}, {b_levels[i]})", (a_levels[j], b_levels[i]), w, value)
        )
    return estimates


def _term(name: str, ss: float, df: int, sse: float, df_e: int, sst: float, confidence: float) -> AnovaTerm:
    test = f_test(ss, df, sse, df_e, confidence, sst)
    pct = 100 * ss / sst if sst > 0 else float("nan")
    return AnovaTerm(name, ss, df, pct, ss / df, test.f, test.f_table, test.p_value, test.note)
