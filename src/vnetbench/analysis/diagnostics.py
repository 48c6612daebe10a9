"""Visual tests of a model's assumptions (Jain, ch. 20): residuals against predicted response for
constant spread, normal quantile-quantile data for normal errors, and a model restricted to a range
of levels (ONL's "truncated model", which drops a point mass of zero-loss levels)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np
import pandas as pd
from scipy import stats

from vnetbench.analysis.inputs import DataError, Level, ordered_levels, require_columns
from vnetbench.analysis.jsonable import jsonable
from vnetbench.analysis.one_factor import OneFactorAnova, one_factor_anova
from vnetbench.analysis.stable import round_off_only

SHAPIRO_MAX_N = 5000  # scipy's Shapiro–Wilk p-value is not accurate beyond this


class Fitted(Protocol):
    observed: np.ndarray
    predicted: np.ndarray
    residuals: np.ndarray


@dataclass(frozen=True)
class Diagnostics:
    predicted: np.ndarray = field(repr=False)
    residuals: np.ndarray = field(repr=False)
    qq_theoretical: np.ndarray = field(repr=False)  # standard normal quantiles
    qq_ordered: np.ndarray = field(repr=False)  # residuals in increasing order
    qq_slope: float
    qq_intercept: float
    qq_r: float  # correlation of the QQ points: near 1 means normal-looking residuals
    shapiro_p: float | None  # Shapiro–Wilk test of normality (None when skipped: see shapiro_note)
    residual_ratio: float  # range of residuals / range of predicted responses
    shapiro_note: str | None = None  # why Shapiro–Wilk was not run

    @property
    def errors_small(self) -> bool:
        """Jain's rule of thumb: errors an order of magnitude below the response make trends in the
        residual plots ignorable."""
        return self.residual_ratio < 0.1

    def to_dict(self, points: bool = False) -> dict[str, Any]:
        out: dict[str, Any] = {
            "qq_slope": self.qq_slope,
            "qq_intercept": self.qq_intercept,
            "qq_r": self.qq_r,
            "shapiro_p": self.shapiro_p,
            "shapiro_note": self.shapiro_note,
            "residual_ratio": self.residual_ratio,
            "errors_small": self.errors_small,
        }
        if points:
            out |= {
                "predicted": self.predicted,
                "residuals": self.residuals,
                "qq_theoretical": self.qq_theoretical,
                "qq_ordered": self.qq_ordered,
            }
        return jsonable(out)


def diagnostics(result: Fitted) -> Diagnostics:
    """Residual data of any fitted result (one-factor, 2^k r, full factorial)."""
    e = np.asarray(result.residuals, dtype=float)
    yhat = np.asarray(result.predicted, dtype=float)
    (osm, osr), (slope, intercept, r) = stats.probplot(e, dist="norm")
    shapiro, note = None, shapiro_skipped(e, np.asarray(result.observed, dtype=float))
    if note is None:
        shapiro = float(stats.shapiro(e).pvalue)
    spread = float(np.ptp(yhat))
    return Diagnostics(
        predicted=yhat,
        residuals=e,
        qq_theoretical=np.asarray(osm),
        qq_ordered=np.asarray(osr),
        qq_slope=float(slope),
        qq_intercept=float(intercept),
        qq_r=float(r),
        shapiro_p=shapiro,
        residual_ratio=float(np.ptp(e)) / spread if spread > 0 else float("inf"),
        shapiro_note=note,
    )


def shapiro_skipped(residuals: np.ndarray, observed: np.ndarray) -> str | None:
    """Why a Shapiro–Wilk test of these residuals would say nothing, or None to run it."""
    if residuals.size < 3:
        return f"skipped: {residuals.size} residuals, the test needs at least 3"
    if residuals.size > SHAPIRO_MAX_N:
        return f"skipped: {residuals.size} residuals, scipy's p-value is not accurate above {SHAPIRO_MAX_N}"
    if not np.any(residuals):
        return "skipped: every residual is exactly 0 (each replicate equals its cell mean)"
    if round_off_only(residuals, observed):
        return (
            "skipped: the residuals are floating-point round-off (within 64 ulp of the response), "
            "not measured variation"
        )
    return None


def residual_spread_by_level(result: OneFactorAnova) -> pd.DataFrame:
    """SD of the residuals per level: very unequal values break the equal-variance assumption that a
    pooled s_e (and so every contrast interval) relies on."""
    frame = pd.DataFrame({"level": result.level_of, "residual": result.residuals})
    out = frame.groupby("level", sort=False)["residual"].agg(n="count", sd="std").reset_index()
    return out.set_index("level").loc[list(result.levels)].reset_index()


def truncated_model(
    frame: pd.DataFrame,
    response: str,
    factor: str,
    low: Level | None = None,
    high: Level | None = None,
    levels: Sequence[Level] | None = None,
    confidence: float = 0.95,
) -> OneFactorAnova:
    """The one-factor model fitted to a range of levels only: `low`..`high` inclusive, or an explicit
    list. ONL fits levels 6..10 to see whether the residuals are normal once the zero-loss levels
    are gone."""
    require_columns(frame, [factor])
    if levels is None:
        every = ordered_levels(frame[factor])
        if (low is not None and low not in every) or (high is not None and high not in every):
            raise DataError("levels", f"{low}..{high} not among {every}", "give levels present in the data")
        lo = every.index(low) if low is not None else 0
        hi = every.index(high) if high is not None else len(every) - 1
        levels = every[lo : hi + 1]
    return one_factor_anova(frame, response, factor, confidence, levels=levels)
