"""2^k r factorial designs (Jain, ch. 18), and 2^k designs without replication (r = 1, ch. 17).

Each factor is coded −1 (its low level) / +1 (high). With the sign table of all 2^k columns
(I, A, B, AB, …), the effect of a column is q = Σ sign · ȳ_cell / 2^k, its sum of squares is
2^k r q², SSE = Σ (y − ȳ_cell)², and every effect has the same standard deviation
s_q = s_e / √(2^k r), with s_e² = SSE / (2^k (r − 1)). With r = 1 there is no error estimate:
the allocation of variation (SS_X / SST) is the whole analysis, and the intervals are undefined.

The sums are computed on the centred response (analysis/stable.py); the tests check the q's and
sums of squares against statsmodels' OLS on the ±1 columns with all interactions.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats

from vnetbench.analysis.inputs import DataError, Level, brief, check_confidence, design_frame
from vnetbench.analysis.jsonable import jsonable
from vnetbench.analysis.stable import cell_fit, centred, cut_at_zero, excludes_zero, sum_sq
from vnetbench.spec.units import cannot_be_negative

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
    def significant(self) -> bool | None:
        """The interval excludes 0; None without replication (r = 1) or without error variance."""
        return excludes_zero(self.ci_low, self.ci_high, self.sd)


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
    letters: str = LETTERS  # the factors' letters in order (a fraction's basic columns: "ABC", "BCD")

    @property
    def k(self) -> int:
        return len(self.factors)

    @property
    def df_e(self) -> int:
        return 2**self.k * (self.r - 1)

    @property
    def s_e(self) -> float:
        return float(np.sqrt(self.sse / self.df_e)) if self.df_e > 0 else float("nan")

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

    def compares(self, e: FactorialEffect) -> str:
        """What an effect's sign means in the factors' levels, so that a reader can tell which way it
        points: q = (mean where its column is +1 − mean where it is −1) / 2 (Jain ch. 17–18).
        'cc: reno − cubic' for a main effect (its +1 level minus its −1 level); for two factors
        'cc, flows alike − unlike: (cubic, 1), (reno, 4) − (cubic, 4), (reno, 1)'; for more,
        'cc, flows, rate: even − odd count at −1 (cubic, 1, 10mbit)'; '' for the mean (I)."""
        if e.letters == "I":
            return ""
        involved = [self.factors[self.letters.index(c)] for c in e.letters]
        names = ", ".join(involved)
        if len(involved) == 1:
            lo, hi = self.coding[involved[0]]
            return f"{names}: {hi} − {lo}"
        if len(involved) == 2:
            (a_lo, a_hi), (b_lo, b_hi) = (self.coding[f] for f in involved)
            alike, unlike = f"({a_lo}, {b_lo}), ({a_hi}, {b_hi})", f"({a_lo}, {b_hi}), ({a_hi}, {b_lo})"
            return f"{names} alike − unlike: {alike} − {unlike}"
        lows = ", ".join(str(self.coding[f][0]) for f in involved)
        return f"{names}: even − odd count at −1 ({lows})"

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
                        "compares": self.compares(e),
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


def _replications(counts: pd.Series, k: int, factors: Sequence[str], response: str) -> int:
    """r: every one of the 2^k combinations measured the same r ≥ 1 times (else DataError)."""
    if len(counts) != 2**k:
        raise DataError(
            "factor",
            f"only {len(counts)} of the 2^{k} = {2**k} combinations of {list(factors)} were measured",
            "measure every combination of levels",
        )
    if counts.nunique() != 1:
        raise DataError(
            f"column '{response}'",
            f"replications per combination range from {counts.min()} to {counts.max()}",
            "a 2^k r design needs the same r for every combination (else use --design factorial)",
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
    coding = two_level_coding(data, factors, low)
    x = {f"x{i}": np.where(data[f] == coding[f][0], -1.0, 1.0) for i, f in enumerate(factors)}
    model = pd.DataFrame({"y": data[response].to_numpy(), **x})
    r = _replications(model.groupby(list(x)).size(), k, factors, response)
    return _effects(model, response, list(factors), coding, confidence, r)


def two_level_coding(
    data: pd.DataFrame, factors: Sequence[str], low: Mapping[str, Level] | None
) -> dict[str, tuple[Level, Level]]:
    """Factor → (level coded −1, level coded +1); `low` names the −1 level, else the first level."""
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


def _effects(
    model: pd.DataFrame,
    response: str,
    factors: list[str],
    coding: dict[str, tuple[Level, Level]],
    confidence: float,
    r: int,
    letters: Sequence[str] = LETTERS,
    names: Mapping[str, str] | None = None,
) -> TwoKRResult:
    """Jain's sign-table computation on the response centred on one of its values (analysis/stable.py):
    q_X = Σ sign_X·ȳ / 2^k, SS_X = 2^k r q_X², SSE around the cell means. `letters` are the factors'
    letters and `names` relabels columns (a fractional design's alias chains)."""
    k = len(factors)
    anchor, d = centred(model["y"].to_numpy())
    xs = [f"x{i}" for i in range(k)]
    fitted, residuals = cell_fit(d, model.groupby(xs).ngroup().to_numpy())
    cell = pd.DataFrame({"d": fitted}).join(model[xs]).groupby(xs)["d"].first()
    signs = np.array(cell.index.tolist(), dtype=float).reshape(len(cell), k)
    means = cell.to_numpy()
    sse = sum_sq(residuals)
    sst = sum_sq(d - d.mean())
    df_e = 2**k * (r - 1)
    t = float(stats.t.ppf((1 + confidence) / 2, df_e)) if df_e > 0 else float("nan")
    s_q = float(np.sqrt(sse / df_e / (2**k * r))) if df_e > 0 else float("nan")

    def make(letters: str, name: str, q: float, ss: float | None) -> FactorialEffect:
        pct = 100 * ss / sst if ss is not None and sst > 0 else None
        low, high = q - t * s_q, q + t * s_q
        if letters == "I":  # q0 is the grand mean: cut at 0 where the response cannot be negative
            low, high = cut_at_zero(low, high, cannot_be_negative(response))
        return FactorialEffect(letters, name, q, s_q, low, high, ss, pct)

    effects = [make("I", "mean", anchor + float(means.mean()), None)]
    for cols in columns(k):
        q = float(np.dot(np.prod(signs[:, list(cols)], axis=1), means)) / 2**k
        word = "".join(letters[i] for i in cols)
        name = (names or {}).get(word, ":".join(factors[i] for i in cols))
        effects.append(make(word, name, q, 2**k * r * q * q))
    grand = anchor + float(d.mean())
    return TwoKRResult(
        response=response,
        factors=tuple(factors),
        coding=coding,
        confidence=confidence,
        r=r,
        sign_table=sign_table(model, factors, coding, letters),
        effects=tuple(effects),
        ssy=len(d) * grand**2 + sst,
        ss0=len(d) * grand**2,
        sst=sst,
        sse=sse,
        t_quantile=t,
        observed=anchor + d,
        predicted=anchor + fitted,
        residuals=residuals,
        letters="".join(letters[:k]),
    )


def sign_table(
    model: pd.DataFrame,
    factors: Sequence[str],
    coding: Mapping[str, tuple[Level, Level]],
    letters: Sequence[str] = LETTERS,
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
            row["".join(letters[j] for j in cols)] = int(np.prod([signs[j] for j in cols]))
        for j, f in enumerate(factors):
            row[f"{f} (level)"] = coding[f][0] if signs[j] < 0 else coding[f][1]  # never clashes with "A"
        row["observations"] = [float(v) for v in cell]
        row["sum"] = float(cell.sum())
        row["mean"] = float(cell.mean())
        rows.append(row)
    return pd.DataFrame(rows)


def predicted_responses(result: TwoKRResult, future: int = 1) -> list[dict[str, Any]]:
    """Jain 18.6: the predicted response of every combination (its cell mean, the full model) with
    s_ŷ = s_e/√n_eff, n_eff = 2^k r/2^k = r, and the interval of the mean of `future` new runs,
    ŷ ∓ t·s_e·√(1/n_eff + 1/future). Undefined (NaN) without replication."""
    t, s_e, r = result.t_quantile, result.s_e, result.r
    nonnegative = cannot_be_negative(result.response)  # a mean's intervals are cut at 0 for it
    out = []
    for row in result.sign_table.to_dict("records"):
        y = float(row["mean"])
        half_mean = t * s_e / float(np.sqrt(r))
        half_pred = t * s_e * float(np.sqrt(1 / r + 1 / future))
        levels = {f: row[f"{f} (level)"] for f in result.factors}
        out.append(
            {
                "levels": levels,
                "predicted": y,
                "ci": list(cut_at_zero(y - half_mean, y + half_mean, nonnegative)),
            }
            | {
                "prediction_interval": list(cut_at_zero(y - half_pred, y + half_pred, nonnegative)),
                "future_observations": future,
            }
        )
    return jsonable(out)
