"""2^k r factorial designs (Jain, ch. 18): k two-level factors, r replications of every combination.

Each factor is coded −1 (its low level) / +1 (high). With the sign table of all 2^k columns
(I, A, B, AB, …), the effect of a column is q = Σ sign · ȳ_cell / 2^k, its sum of squares is
2^k r q², SSE = Σ (y − ȳ_cell)², and every effect has the same standard deviation
s_q = s_e / √(2^k r), with s_e² = SSE / (2^k (r − 1)).

The fit is statsmodels' OLS on the ±1 columns with all interactions: in a balanced 2^k design its
coefficients are exactly the q's, and anova_lm's sums of squares are exactly 2^k r q².
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
import statsmodels.formula.api as smf
from scipy import stats
from statsmodels.stats.anova import anova_lm

from vnetbench.analysis.inputs import DataError, Level, brief, check_confidence, design_frame
from vnetbench.analysis.jsonable import jsonable

LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"


@dataclass(frozen=True)
class FactorialEffect:
    letters: str  # Jain's column name: "I", "A", "AB", …
    name: str  # the same with the factor names: "mean", "cc", "cc:flows", …
    q: float
    sd: float
    ci_low: float
    ci_high: float
    ss: float | None  # 2^k r q² (None for I, whose square is SS0)
    pct_variation: float | None  # share of SST

    @property
    def significant(self) -> bool:
        return self.ci_low > 0 or self.ci_high < 0


@dataclass(frozen=True)
class TwoKRResult:
    response: str
    factors: tuple[str, ...]
    coding: dict[str, tuple[Level, Level]]  # factor → (level coded −1, level coded +1)
    confidence: float
    r: int
    sign_table: pd.DataFrame = field(repr=False)  # one row per combination: signs, levels, cell mean
    effects: tuple[FactorialEffect, ...]
    ssy: float
    ss0: float
    sst: float
    sse: float
    t_quantile: float
    observed: np.ndarray = field(repr=False)
    predicted: np.ndarray = field(repr=False)
    residuals: np.ndarray = field(repr=False)

    @property
    def k(self) -> int:
        return len(self.factors)

    @property
    def df_e(self) -> int:
        return 2**self.k * (self.r - 1)

    @property
    def s_e(self) -> float:
        return float(np.sqrt(self.sse / self.df_e))

    @property
    def s_q(self) -> float:
        return self.s_e / float(np.sqrt(2**self.k * self.r))

    @property
    def pct_e(self) -> float:
        return 100 * self.sse / self.sst if self.sst > 0 else float("nan")

    def effect(self, letters: str) -> FactorialEffect:
        for e in self.effects:
            if letters in (e.letters, e.name):
                return e
        raise KeyError(letters)

    def to_dict(self) -> dict[str, Any]:
        return jsonable(
            {
                "design": f"2^{self.k} r",
                "response": self.response,
                "factors": list(self.factors),
                "coding": {f: {"-1": lo, "+1": hi} for f, (lo, hi) in self.coding.items()},
                "confidence": self.confidence,
                "k": self.k,
                "r": self.r,
                "sign_table": self.sign_table,
                "effects": [
                    {
                        "letters": e.letters,
                        "name": e.name,
                        "q": e.q,
                        "sd": e.sd,
                        "ci": [e.ci_low, e.ci_high],
                        "significant": e.significant,
                        "ss": e.ss,
                        "pct_variation": e.pct_variation,
                    }
                    for e in self.effects
                ],
                "ssy": self.ssy,
                "ss0": self.ss0,
                "sst": self.sst,
                "sse": self.sse,
                "pct_e": self.pct_e,
                "df_e": self.df_e,
                "s_e": self.s_e,
                "s_q": self.s_q,
                "t_quantile": self.t_quantile,
            }
        )


def columns(k: int) -> list[tuple[int, ...]]:
    """Sign-table columns after I, in Jain's order: A, B, C, AB, AC, BC, ABC, …"""
    return [c for size in range(1, k + 1) for c in itertools.combinations(range(k), size)]


def _coding(
    data: pd.DataFrame, factors: Sequence[str], low: Mapping[str, Level] | None
) -> dict[str, tuple[Level, Level]]:
    """(level coded −1, level coded +1) per factor; DataError unless each has exactly two levels."""
    coding: dict[str, tuple[Level, Level]] = {}
    for f in factors:
        cats = list(data[f].cat.categories)
        if len(cats) != 2:
            raise DataError(
                f"column '{f}'",
                f"has {len(cats)} levels {brief(cats)}; a 2^k design needs exactly two per factor",
                "use --design factorial for multi-level factors",
            )
        lo = (low or {}).get(f, cats[0])
        if lo not in cats:
            raise DataError("low", f"'{lo}' is not a level of '{f}'", f"choose one of {cats}")
        coding[f] = (lo, cats[1] if lo == cats[0] else cats[0])
    return coding


def _replications(counts: pd.Series, k: int, factors: Sequence[str], response: str) -> int:
    """r: every one of the 2^k combinations measured the same r ≥ 2 times (else DataError)."""
    if len(counts) != 2**k:
        raise DataError(
            "factor",
            f"only {len(counts)} of the 2^{k} = {2**k} combinations of {list(factors)} were measured",
            "measure every combination of levels",
        )
    if counts.nunique() != 1 or counts.iloc[0] < 2:
        raise DataError(
            f"column '{response}'",
            f"replications per combination range from {counts.min()} to {counts.max()}",
            "a 2^k r design needs the same r ≥ 2 for every combination (else use --design factorial)",
        )
    return int(counts.iloc[0])


def two_k_r(
    frame: pd.DataFrame,
    response: str,
    factors: Sequence[str],
    confidence: float = 0.95,
    low: Mapping[str, Level] | None = None,
) -> TwoKRResult:
    """Effects, allocation of variation and intervals of a 2^k r design.

    `low` names the level coded −1 per factor; by default the first in numeric (else appearance) order."""
    check_confidence(confidence)
    data = design_frame(frame, response, factors)
    k = len(factors)
    coding = _coding(data, factors, low)
    x = {f"x{i}": np.where(data[f] == coding[f][0], -1.0, 1.0) for i, f in enumerate(factors)}
    model = pd.DataFrame({"y": data[response].to_numpy(), **x})
    r = _replications(model.groupby(list(x)).size(), k, factors, response)

    fit = smf.ols("y ~ " + " * ".join(x), data=model).fit()
    anova = anova_lm(fit, typ=1)
    ci = fit.conf_int(alpha=1 - confidence)
    sst = float(fit.centered_tss)
    t = float(stats.t.ppf((1 + confidence) / 2, fit.df_resid))

    def make(letters: str, name: str, term: str, ss: float | None) -> FactorialEffect:
        pct = 100 * ss / sst if ss is not None and sst > 0 else None
        return FactorialEffect(
            letters, name, float(fit.params[term]), float(fit.bse[term]),
            float(ci.loc[term, 0]), float(ci.loc[term, 1]), ss, pct,
        )  # fmt: skip

    effects = [make("I", "mean", "Intercept", None)]
    for cols in columns(k):
        term = ":".join(f"x{i}" for i in cols)
        name = ":".join(factors[i] for i in cols)
        effects.append(make("".join(LETTERS[i] for i in cols), name, term, float(anova.loc[term, "sum_sq"])))

    ssy = float(fit.uncentered_tss)
    return TwoKRResult(
        response=response,
        factors=tuple(factors),
        coding=coding,
        confidence=confidence,
        r=r,
        sign_table=sign_table(model, factors, coding),
        effects=tuple(effects),
        ssy=ssy,
        ss0=ssy - sst,
        sst=sst,
        sse=float(anova.loc["Residual", "sum_sq"]),
        t_quantile=t,
        observed=model["y"].to_numpy(),
        predicted=fit.fittedvalues.to_numpy(),
        residuals=fit.resid.to_numpy(),
    )


def sign_table(
    model: pd.DataFrame, factors: Sequence[str], coding: Mapping[str, tuple[Level, Level]]
) -> pd.DataFrame:
    """Jain's sign table: rows in standard order (A changes fastest), columns I, A, B, AB, …, the
    levels they stand for, the cell's observations, their sum and mean."""
    k = len(factors)
    rows = []
    for i in range(2**k):
        signs = [1 if (i >> j) & 1 else -1 for j in range(k)]
        cell = model["y"][np.logical_and.reduce([model[f"x{j}"] == s for j, s in enumerate(signs)])]
        row: dict[str, Any] = {"I": 1}
        for cols in columns(k):
            row["".join(LETTERS[j] for j in cols)] = int(np.prod([signs[j] for j in cols]))
        for j, f in enumerate(factors):
            row[f"{f} (level)"] = coding[f][0] if signs[j] < 0 else coding[f][1]  # never clashes with "A"
        row["observations"] = [float(v) for v in cell]
        row["sum"] = float(cell.sum())
        row["mean"] = float(cell.mean())
        rows.append(row)
    return pd.DataFrame(rows)
