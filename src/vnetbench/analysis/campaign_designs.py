"""The campaign analysis of the designs that come after the ANOVA (issue #14): two factors with or
without replication (Jain ch. 21, 22) and 2^(k−p) fractions (ch. 19). Each fits its model and returns
it with its diagnostics and its JSON entry, like the designs in `campaign_analysis._fit`; their tables
are the report's (report/analysis_tables.py)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pandas as pd

from vnetbench.analysis.diagnostics import Diagnostics, diagnostics
from vnetbench.analysis.fractional import FractionalResult, fractional_factorial
from vnetbench.analysis.two_factor import TwoFactorResult, two_factor


def fit_two_factor(
    data: pd.DataFrame, response: str, factors: Sequence[str], confidence: float
) -> tuple[TwoFactorResult, Diagnostics, dict[str, Any]]:
    """Two-factor effects, level means and predicted responses with their intervals."""
    r = two_factor(data, response, factors, confidence)
    diag = diagnostics(r)
    return r, diag, {"model": "two-factor", "result": r.to_dict(), "diagnostics": diag.to_dict()}


def fit_fraction(
    data: pd.DataFrame, response: str, factors: Sequence[str], generators: Sequence[str], confidence: float
) -> tuple[FractionalResult, Diagnostics, dict[str, Any]]:
    """A 2^(k−p) fraction: the basic design's effects, each column named by its alias chain."""
    f = fractional_factorial(data, response, factors, generators, confidence)
    diag = diagnostics(f.effects)
    return f, diag, {"model": "2k-p"} | f.to_dict() | {"diagnostics": diag.to_dict()}
