"""The textbook analysis of any table of observations (`vnetbench stats FILE.csv`): one design fitted
to one response, in Jain's form — one-factor ANOVA, a full factorial, or a 2^k r design."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from vnetbench.analysis.contrasts import factor_successive_differences, successive_differences
from vnetbench.analysis.diagnostics import diagnostics
from vnetbench.analysis.full_factorial import full_factorial_anova
from vnetbench.analysis.inputs import DataError
from vnetbench.analysis.one_factor import one_factor_anova
from vnetbench.analysis.two_k_r import two_k_r

DESIGNS = ("one-factor", "factorial", "2k-r")


@dataclass
class TableAnalysis:
    design: str  # one of DESIGNS
    result: Any  # OneFactorAnova | FactorialAnova | TwoKRResult
    json: dict[str, Any]
    contrasts: list[Any] = field(default_factory=list)  # successive differences (all factors, in order)


def analyse_table(
    frame: pd.DataFrame, response: str, factors: list[str], design: str, confidence: float
) -> TableAnalysis:
    """Fit `design` to the table; DataError names the option or column at fault and the fix."""
    if design not in DESIGNS:
        raise DataError("--design", f"'{design}' is not a design", f"use one of {', '.join(DESIGNS)}")
    for flag, col in [("--response", response), *(("--factor", f) for f in factors)]:
        if col not in frame.columns:
            have = ", ".join(map(str, frame.columns))
            raise DataError(flag, f"column '{col}' is not in the table", f"use one of its columns: {have}")
    base = {"design": design, "response": response, "factors": factors, "confidence": confidence}
    if design == "one-factor":
        if len(factors) != 1:
            raise DataError(
                "--factor",
                f"one-factor design takes exactly one factor, got {len(factors)}",
                "give one --factor, or use --design factorial / 2k-r for several",
            )
        a = one_factor_anova(frame, response, factors[0], confidence)
        steps = successive_differences(a)
        json = base | {
            "anova": a.to_dict(),
            "successive_differences": [c.to_dict() for c in steps],
            "diagnostics": diagnostics(a).to_dict(),
        }
        return TableAnalysis(design, a, json, steps)
    if design == "2k-r":
        r = two_k_r(frame, response, factors, confidence)
        return TableAnalysis(
            design, r, base | {"result": r.to_dict(), "diagnostics": diagnostics(r).to_dict()}
        )
    f = full_factorial_anova(frame, response, factors, confidence)
    by_factor = {factor: factor_successive_differences(f, factor) for factor in factors}
    json = base | {
        "result": f.to_dict(),
        "successive_differences": {k: [c.to_dict() for c in v] for k, v in by_factor.items()},
        "diagnostics": diagnostics(f).to_dict(),
    }
    return TableAnalysis(design, f, json, [c for v in by_factor.values() for c in v])
