"""Hour-of-day and day-of-week profiles of long periodic campaigns (GENI: hourly for 10 days).

Input: a UTC start time in integer nanoseconds and a value per measurement. Output: one row per
hour (0–23) or weekday (0 = Monday) with n, mean, SD and a t interval of the mean, so a daily
pattern (busy hours on a shared testbed) shows up as intervals that do not overlap.
"""

from __future__ import annotations

from typing import Literal

import numpy as np
import pandas as pd
from scipy import stats

from vnetbench.analysis.inputs import DataError, check_confidence, numeric_column, require_columns
from vnetbench.spec.units import cannot_be_negative

Period = Literal["hour", "weekday"]
WEEKDAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")


def periodic_profile(
    frame: pd.DataFrame,
    value: str = "value",
    start: str = "start_utc_ns",
    period: Period = "hour",
    confidence: float = 0.95,
    tz: str = "UTC",
) -> pd.DataFrame:
    """Rows: `hour` (or `weekday` and `day`), n, mean, sd, ci_low, ci_high. `tz` shifts the clock
    (e.g. "America/Chicago") when the question is the testbed's local busy hours."""
    check_confidence(confidence)
    require_columns(frame, [value, start])
    if period not in ("hour", "weekday"):
        raise DataError("period", f"'{period}' unknown", "use hour or weekday")
    when = pd.to_datetime(numeric_column(frame, start).astype("int64"), unit="ns", utc=True).dt.tz_convert(tz)
    key = when.dt.hour if period == "hour" else when.dt.day_of_week
    data = pd.DataFrame({period: key.to_numpy(), "v": numeric_column(frame, value).to_numpy()})
    out = data.groupby(period, sort=True)["v"].agg(n="count", mean="mean", sd="std").reset_index()
    t = stats.t.ppf((1 + confidence) / 2, np.maximum(out["n"] - 1, 1))
    half = np.where(out["n"] > 1, t * out["sd"] / np.sqrt(out["n"]), np.nan)
    out["ci_low"] = out["mean"] - half
    out["ci_high"] = out["mean"] + half
    if cannot_be_negative(value):  # without the impossible part of the interval (stable.cut_at_zero)
        out["ci_low"] = out["ci_low"].clip(lower=0.0)
    if period == "weekday":
        out.insert(1, "day", [WEEKDAYS[d] for d in out["weekday"]])
    return out


def by_hour_of_day(
    frame: pd.DataFrame,
    value: str = "value",
    start: str = "start_utc_ns",
    confidence: float = 0.95,
    tz: str = "UTC",
) -> pd.DataFrame:
    """Mean, SD and interval of `value` per hour of the day the measurement started."""
    return periodic_profile(frame, value, start, "hour", confidence, tz)


def by_day_of_week(
    frame: pd.DataFrame,
    value: str = "value",
    start: str = "start_utc_ns",
    confidence: float = 0.95,
    tz: str = "UTC",
) -> pd.DataFrame:
    """Mean, SD and interval of `value` per day of the week the measurement started."""
    return periodic_profile(frame, value, start, "weekday", confidence, tz)
