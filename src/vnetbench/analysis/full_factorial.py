"""ANOVA of a general full-factorial design (factors with any number of levels), from statsmodels.

The model has every main effect and every interaction; with r ≥ 2 replications per cell the errors
have Σ(r_cell − 1) degrees of freedom. Sums of squares are type II with sum-to-zero coding: in a
balanced design they equal Jain's (ch. 22) and add up to SST; in an unbalanced one they are the
usual marginal tests and no longer add up exactly (the table says so).
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
import statsmodels.formula.api as smf
from statsmodels.stats.anova import anova_lm

from vnetbench.analysis.inputs import DataError, check_confidence, design_frame
from vnetbench.analysis.jsonable import jsonable
from vnetbench.analysis.stable import cell_fit, centred, f_test, sum_sq


@dataclass(frozen=True)
class AnovaTerm:
    name: str  # "flows", "cc:flows", …
    ss: float
    df: int
    pct_variation: float
    ms: float
    f: float
    f_table: float
    p_value: float
    f_note: str | None = None  # why F and p are undefined, else None

    @property
    def significant(self) -> bool | None:
        return None if self.f_note else bool(self.f > self.f_table)

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "ss": self.ss,
            "df": self.df,
            "pct_variation": self.pct_variation,
            "ms": self.ms,
            "f": self.f,
            "f_table": self.f_table,
            "p_value": self.p_value,
            "significant": self.significant,
            "f_note": self.f_note,
        }


@dataclass(frozen=True)
class FactorialAnova:
    response: str
    factors: tuple[str, ...]
    confidence: float
    levels: dict[str, tuple[Any, ...]]
    balanced: bool
    terms: tuple[AnovaTerm, ...]
    ssy: float
    ss0: float
    sst: float
    sse: float
    df_e: int
    cell_means: pd.DataFrame = field(repr=False)  # per combination: levels, cell_n, cell_mean, cell_sd
    observed: np.ndarray = field(repr=False)
    predicted: np.ndarray = field(repr=False)
    residuals: np.ndarray = field(repr=False)

    @property
    def n(self) -> int:
        return int(self.observed.size)

    @property
    def mse(self) -> float:
        return self.sse / self.df_e

    @property
    def s_e(self) -> float:
        return float(np.sqrt(self.mse))

    @property
    def pct_e(self) -> float:
        return 100 * self.sse / self.sst if self.sst > 0 else float("nan")

    def term(self, name: str) -> AnovaTerm:
        for t in self.terms:
            if t.name == name:
                return t
        raise KeyError(name)

    def to_dict(self) -> dict[str, Any]:
        return jsonable(
            {
                "design": "full factorial",
                "response": self.response,
                "factors": list(self.factors),
                "confidence": self.confidence,
                "levels": {f: list(v) for f, v in self.levels.items()},
                "balanced": self.balanced,
                "n": self.n,
                "terms": [t.to_dict() for t in self.terms],
                "ssy": self.ssy,
                "ss0": self.ss0,
                "sst": self.sst,
                "sse": self.sse,
                "pct_e": self.pct_e,
                "df_e": self.df_e,
                "mse": self.mse,
                "s_e": self.s_e,
                "cell_means": self.cell_means,
            }
        )


def full_factorial_anova(
    frame: pd.DataFrame, response: str, factors: Sequence[str], confidence: float = 0.95
) -> FactorialAnova:
    """ANOVA of a general full-factorial design (multi-level factors, type II SS when unbalanced)."""
    check_confidence(confidence)
    data = design_frame(frame, response, factors)
    names = {f"f{i}": f for i, f in enumerate(factors)}
    model = pd.DataFrame({"y": data[response].to_numpy()})
    for code, f in names.items():
        model[code] = data[f].cat.codes.to_numpy()
    cells = model.groupby(list(names)).size()
    expected = int(np.prod([len(data[f].cat.categories) for f in factors]))
    if len(cells) != expected:
        raise DataError(
            "factor",
            f"only {len(cells)} of the {expected} combinations of {list(factors)} were measured",
            "a full-factorial design measures every combination of levels",
        )
    df_e = int((cells - 1).sum())
    if df_e < 1:
        raise DataError(
            f"column '{response}'",
            "no combination was replicated, so the error variance cannot be estimated",
            "replicate every combination (r ≥ 2), or analyse fewer factors",
        )

    # centred on one of its values (analysis/stable.py): no scale or offset of the response changes
    # F or p, and identical replicates leave residuals of exactly 0 (SSE from the cells, not a fit)
    anchor, d = centred(model["y"].to_numpy())
    model["y"] = d
    fitted, residuals = cell_fit(d, model.groupby(list(names)).ngroup().to_numpy())
    sse = sum_sq(residuals)
    sst = sum_sq(d - d.mean())
    formula = "y ~ " + " * ".join(f"C({c}, Sum)" for c in names)
    fit = smf.ols(formula, data=model).fit()
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")  # anova_lm's own F (and rank warnings) of an exact fit: unused
        table = anova_lm(fit, typ=2)
    terms = []
    for row_name, row in table.drop(index="Residual").iterrows():
        name = ":".join(names[p.split(",")[0].removeprefix("C(")] for p in str(row_name).split(":"))
        df = int(row["df"])
        ss = float(row["sum_sq"])
        test = f_test(ss, df, sse, df_e, confidence, sst)
        terms.append(
            AnovaTerm(
                name=name,
                ss=ss,
                df=df,
                pct_variation=100 * ss / sst if sst > 0 else float("nan"),
                ms=ss / df,
                f=test.f,
                f_table=test.f_table,
                p_value=test.p_value,
                f_note=test.note,
            )
        )
    grand = anchor + float(d.mean())
    grouped = data.groupby(list(factors), observed=True)[response]
    cell_means = grouped.agg(cell_n="count", cell_mean="mean", cell_sd="std").reset_index()
    return FactorialAnova(
        response=response,
        factors=tuple(factors),
        confidence=confidence,
        levels={f: tuple(data[f].cat.categories) for f in factors},
        balanced=cells.nunique() == 1,
        terms=tuple(terms),
        ssy=len(d) * grand**2 + sst,
        ss0=len(d) * grand**2,
        sst=sst,
        sse=sse,
        df_e=df_e,
        cell_means=cell_means,
        observed=anchor + d,
        predicted=anchor + fitted,
        residuals=residuals,
    )
