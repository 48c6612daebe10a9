"""Sums of squares that no scale or offset of the response can spoil, and F tests that say when they
are undefined.

Throughput in bit/s at 9.4 Gbit/s with a few kbit/s of spread has a coefficient of variation below
1e-6: computed around zero, its sums of squares lose most of their digits (Σy² ≈ 1e21 while the
error sum is ≈ 1e7). Here every model works on the response *centred* on one of its own values and
every residual is taken around its cell's mean with a two-pass (anchored) mean, so

- a response scaled by 1e9 and shifted by 1e10 gives the same F, p and relative intervals;
- replicates that are identical give residuals that are exactly 0 (not 1e-17 of round-off), so a
  constant response has SSA = SSE = 0 exactly and no threshold is needed to recognise it.

`f_test` turns (SS, DF, SSE, DF_e) into F and p, or into a note when the test is undefined: with
zero error variance there is no random error to test the factor against (F would be ∞ or 0/0), and
such a term is neither "significant" nor "not significant".
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy import stats

NOTE_CONSTANT = "undefined: the response is constant, there is no variation to explain"
NOTE_NO_ERROR = (
    "undefined: zero error variance (every replicate equals its cell mean exactly), so there is no "
    "random error to test against; the cells differ exactly as their means show"
)


def centred(y: np.ndarray) -> tuple[float, np.ndarray]:
    """(anchor, y − anchor) with the anchor one of the observations (the median one): values equal to
    it become exactly 0, and the rest keep every significant digit of their spread."""
    y = np.asarray(y, dtype=float)
    if y.size == 0:
        return 0.0, y
    anchor = float(np.sort(y)[(y.size - 1) // 2])
    return anchor, y - anchor


def cell_fit(y: np.ndarray, cells: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(cell mean of each observation, residual y − cell mean) with an anchored two-pass mean per
    cell, so identical replicates give residuals of exactly 0."""
    y = np.asarray(y, dtype=float)
    codes = np.unique(np.asarray(cells), return_inverse=True)[1].ravel()
    fitted = np.empty_like(y)
    residual = np.empty_like(y)
    for c in np.unique(codes):
        idx = np.flatnonzero(codes == c)
        d = y[idx] - y[idx[0]]  # exactly 0 for every replicate equal to the first
        fitted[idx] = y[idx[0]] + d.mean()
        residual[idx] = d - d.mean()
    return fitted, residual


def sum_sq(x: np.ndarray) -> float:
    x = np.asarray(x, dtype=float)
    return float(np.dot(x, x))


@dataclass(frozen=True)
class FTest:
    """F = (SS/df)/MSE with its p-value, or a note that says why the test is undefined."""

    f: float  # ∞ or NaN when undefined (note says which)
    f_table: float  # F[confidence; df, df_e]
    p_value: float  # NaN when undefined
    note: str | None = None

    @property
    def defined(self) -> bool:
        return self.note is None

    @property
    def significant(self) -> bool | None:
        """F beyond the table F; None when the test is undefined."""
        return None if self.note else bool(self.f > self.f_table)

    def to_dict(self) -> dict[str, Any]:
        """JSON has no ∞ or NaN: an undefined F or p is null, and `f_note` says why."""
        return {
            "f": self.f if self.defined else None,
            "f_table": self.f_table,
            "p_value": self.p_value if self.defined else None,
            "significant": self.significant,
            "f_note": self.note,
        }


def f_test(ss: float, df: int, sse: float, df_e: int, confidence: float, sst: float | None = None) -> FTest:
    """F test of one term. `sst` (the centred total) tells a constant response from exact replicates."""
    f_table = float(stats.f.ppf(confidence, df, df_e)) if df > 0 and df_e > 0 else math.nan
    if df_e < 1:
        return FTest(math.nan, f_table, math.nan, "undefined: no degrees of freedom are left for the errors")
    if sse > 0:
        f = (ss / df) / (sse / df_e)
        return FTest(f, f_table, float(stats.f.sf(f, df, df_e)))
    if (sst if sst is not None else ss) == 0:
        return FTest(math.nan, f_table, math.nan, NOTE_CONSTANT)
    return FTest(math.inf if ss > 0 else math.nan, f_table, math.nan, NOTE_NO_ERROR)


def t_interval(estimate: float, sd: float, t: float) -> tuple[float, float]:
    return estimate - t * sd, estimate + t * sd


def cut_at_zero(low: float, high: float, nonnegative: bool) -> tuple[float, float]:
    """The interval of a mean whose metric cannot be negative, without its impossible part.

    With few repetitions a t interval of, say, an RTT can reach below 0 ms. Cutting it at 0 keeps its
    confidence: the true mean is never below 0, so every interval that covered it still does (the
    interval intersected with the parameter space). NaN bounds stay NaN.
    """
    if nonnegative and low < 0:
        return 0.0, max(high, 0.0)
    return low, high


def excludes_zero(low: float, high: float, sd: float) -> bool | None:
    """Significance of an interval; None when it has no width because there is no error variance."""
    if not (sd > 0 and math.isfinite(sd)):
        return None
    return bool(low > 0 or high < 0)


def round_off_only(residuals: np.ndarray, observed: np.ndarray) -> bool:
    """Residuals no larger than a few units in the last place of the observations: what is left after
    subtracting means of identical values, not measured variation (a normality test on them would
    judge floating-point rounding)."""
    e = np.asarray(residuals, dtype=float)
    y = np.asarray(observed, dtype=float)
    if e.size == 0:
        return True
    scale = float(np.max(np.abs(y))) if y.size else 0.0
    return float(np.max(np.abs(e))) <= 64 * np.finfo(float).eps * scale
