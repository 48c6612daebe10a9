"""The textbook analysis of any table of observations (`vnetbench stats FILE.csv`): one design fitted
to one response, in Jain's form — one-factor ANOVA (with level means, multiple comparisons and the
checks of its assumptions), two factors with or without replication, a full factorial, a 2^k r
design or a 2^(k−p) fraction; optionally on a transformed response, and with a repetition plan."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from vnetbench.analysis.assumptions import AssumptionChecks, check_assumptions
from vnetbench.analysis.contrasts import factor_successive_differences, successive_differences
from vnetbench.analysis.diagnostics import diagnostics
from vnetbench.analysis.fractional import fractional_factorial
from vnetbench.analysis.full_factorial import full_factorial_anova
from vnetbench.analysis.inputs import DataError, check_confidence
from vnetbench.analysis.multiple import AdjustedContrast, PairDifference, adjust, tukey_hsd
from vnetbench.analysis.one_factor import level_mean_intervals, one_factor_anova
from vnetbench.analysis.planning import PlanRow, parse_precision, plan_repetitions
from vnetbench.analysis.transform import Transform, transform_response
from vnetbench.analysis.two_factor import two_factor
from vnetbench.analysis.two_k_r import predicted_responses, two_k_r

DESIGNS = ("one-factor", "two-factor", "factorial", "2k-r", "2k-p")
# the names a campaign file's design.kind gives the same designs (spec.models.Design): accepted too
DESIGN_ALIASES = {"full-factorial": "factorial"}


@dataclass
class TableAnalysis:
    design: str  # one of DESIGNS
    result: Any  # OneFactorAnova | TwoFactorResult | FactorialAnova | TwoKRResult | FractionalResult
    json: dict[str, Any]
    contrasts: list[Any] = field(default_factory=list)  # successive differences (all factors, in order)
    # one-factor: what comes after the ANOVA
    level_means: list[dict[str, Any]] = field(default_factory=list)
    adjusted: list[AdjustedContrast] = field(default_factory=list)  # Holm/Bonferroni successive differences
    tukey: list[PairDifference] = field(default_factory=list)
    assumptions: AssumptionChecks | None = None
    transform: Transform = field(default_factory=lambda: Transform("none"))
    precision: float | None = None  # --target-precision, as a share
    plan: list[PlanRow] = field(default_factory=list)  # repetitions per treatment for that precision


def analyse_table(
    frame: pd.DataFrame,
    response: str,
    factors: list[str],
    design: str,
    confidence: float,
    generators: list[str] | None = None,
    transform: str = "none",
    target_precision: str | None = None,
) -> TableAnalysis:
    """Fit `design` (one of DESIGNS, or a campaign's name of one: DESIGN_ALIASES) to the table;
    DataError names the option or column at fault and the fix."""
    design = DESIGN_ALIASES.get(design, design)
    if design not in DESIGNS:
        names = ", ".join(f"{d} (or {a})" if (a := _alias_of(d)) else d for d in DESIGNS)
        raise DataError("--design", f"'{design}' is not a design", f"use one of {names}")
    for flag, col in [("--response", response), *(("--factor", f) for f in factors)]:
        if col not in frame.columns:
            have = ", ".join(map(str, frame.columns))
            raise DataError(flag, f"column '{col}' is not in the table", f"use one of its columns: {have}")
    check_confidence(confidence)
    if generators and design != "2k-p":
        raise DataError("--generator", f"is for --design 2k-p, not {design}", "drop it or use --design 2k-p")
    precision = parse_precision(target_precision) if target_precision is not None else None
    frame, how = transform_response(frame, response, transform)
    base = {"design": design, "response": response, "factors": factors, "confidence": confidence}
    base["transform"] = how.to_dict()
    result = DESIGN_ANALYSES[design](frame, response, factors, confidence, generators or [])
    result.json = base | result.json
    result.transform = how
    if precision is not None:
        result.precision = precision
        result.plan = plan_repetitions(frame, response, factors, precision, confidence)
        result.json["plan"] = {
            "target_precision": precision,
            "treatments": [r.to_dict() for r in result.plan],
        }
    return result


def _one_factor(
    frame: pd.DataFrame, response: str, factors: list[str], confidence: float, _: list[str]
) -> TableAnalysis:
    if len(factors) != 1:
        raise DataError(
            "--factor",
            f"one-factor design takes exactly one factor, got {len(factors)}",
            "give one --factor, or use --design two-factor / factorial / 2k-r for several",
        )
    a = one_factor_anova(frame, response, factors[0], confidence)
    steps = successive_differences(a)
    means = level_mean_intervals(a)
    tukey, adjusted, checks = tukey_hsd(a), adjust(steps), check_assumptions(a)
    json = {
        "anova": a.to_dict(),
        "level_means": means,
        "successive_differences": [c.to_dict() for c in steps],
        "adjusted_successive_differences": [x.to_dict() for x in adjusted],
        "tukey_hsd": [p.to_dict() for p in tukey],
        "diagnostics": diagnostics(a).to_dict(),
        "assumptions": checks.to_dict(),
    }
    return TableAnalysis(
        "one-factor", a, json, steps, level_means=means, adjusted=adjusted, tukey=tukey, assumptions=checks
    )


def _two_factor(
    frame: pd.DataFrame, response: str, factors: list[str], confidence: float, _: list[str]
) -> TableAnalysis:
    r = two_factor(frame, response, factors, confidence)
    return TableAnalysis("two-factor", r, {"result": r.to_dict(), "diagnostics": diagnostics(r).to_dict()})


def _two_k_r(
    frame: pd.DataFrame, response: str, factors: list[str], confidence: float, _: list[str]
) -> TableAnalysis:
    r = two_k_r(frame, response, factors, confidence)
    json = {
        "result": r.to_dict(),
        "predicted_responses": predicted_responses(r),
        "diagnostics": diagnostics(r).to_dict(),
    }
    return TableAnalysis("2k-r", r, json)


def _two_k_p(
    frame: pd.DataFrame, response: str, factors: list[str], confidence: float, generators: list[str]
) -> TableAnalysis:
    f = fractional_factorial(frame, response, factors, generators, confidence)
    return TableAnalysis("2k-p", f, f.to_dict() | {"diagnostics": diagnostics(f.effects).to_dict()})


def _factorial(
    frame: pd.DataFrame, response: str, factors: list[str], confidence: float, _: list[str]
) -> TableAnalysis:
    f = full_factorial_anova(frame, response, factors, confidence)
    by_factor = {factor: factor_successive_differences(f, factor) for factor in factors}
    json = {
        "result": f.to_dict(),
        "successive_differences": {k: [c.to_dict() for c in v] for k, v in by_factor.items()},
        "diagnostics": diagnostics(f).to_dict(),
    }
    return TableAnalysis("factorial", f, json, [c for v in by_factor.values() for c in v])


DESIGN_ANALYSES: dict[str, Callable[[pd.DataFrame, str, list[str], float, list[str]], TableAnalysis]] = {
    "one-factor": _one_factor,
    "two-factor": _two_factor,
    "factorial": _factorial,
    "2k-r": _two_k_r,
    "2k-p": _two_k_p,
}


def _alias_of(design: str) -> str:
    """The campaign file's name of a design where it differs ('full-factorial' for factorial), else ''."""
    return next((alias for alias, name in DESIGN_ALIASES.items() if name == design), "")
