"""Jain's fairness index of simultaneous flows, and how it varies over replications.

f(x) = (Σx)² / (n Σx²): 1 when every flow gets the same, 1/n when one flow gets everything.

The index is bounded, so its interval over replications is a bootstrap percentile interval of the
mean: every resampled mean lies between the smallest and the largest replication, hence in [1/n, 1]
(a t interval, symmetric around the mean, ran past 1 for indices near 1).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from vnetbench.analysis.inputs import DataError, check_confidence, numeric_column, require_columns


def jain_index(values: Sequence[float] | np.ndarray | pd.Series) -> float:
    """Jain's fairness index (Σx)²/(n·Σx²) of non-negative allocations (NaN when all are 0)."""
    x = np.asarray(values, dtype=float)
    if x.size == 0 or np.any(x < 0) or not np.all(np.isfinite(x)):
        raise ValueError("Jain's index needs one or more finite, non-negative allocations")
    total = float(np.sum(x * x))
    if total == 0:
        return float("nan")  # all zero: undefined
    # Cauchy–Schwarz bounds it to [1/n, 1]; the clip only removes rounding (equal flows gave 1 + 1 ulp).
    return float(np.clip(x.sum() ** 2 / (x.size * total), 1 / x.size, 1.0))


BOOTSTRAP_RESAMPLES = 10_000
BOOTSTRAP_SEED = 0  # fixed: the same store gives the same report


def bootstrap_mean_interval(
    values: Sequence[float] | np.ndarray, confidence: float = 0.95
) -> tuple[float, float]:
    """Percentile bootstrap interval of the mean of `values` (resampled with replacement).

    It never leaves [min(values), max(values)], so it keeps a bounded quantity such as Jain's index
    inside its bounds. With few values it is narrow (two values give about their range): it shows
    the spread that was measured, not what more replications could find."""
    check_confidence(confidence)
    v = np.asarray(values, dtype=float)
    if v.size < 2:
        return float("nan"), float("nan")
    rng = np.random.default_rng(BOOTSTRAP_SEED)
    means = v[rng.integers(0, v.size, size=(BOOTSTRAP_RESAMPLES, v.size))].mean(axis=1)
    low, high = np.quantile(means, [(1 - confidence) / 2, (1 + confidence) / 2])
    # a mean of floats can land an ulp outside its values: keep the interval inside them
    return float(np.clip(low, v.min(), v.max())), float(np.clip(high, v.min(), v.max()))


def fairness_by_group(frame: pd.DataFrame, value: str, group: Sequence[str]) -> pd.DataFrame:
    """One row per group of simultaneous flows (e.g. group = configuration columns + replication):
    the group's columns, `n_flows` and `jain_index` (a factor may well be called `flows`)."""
    require_columns(frame, [value, *group])
    data = frame.assign(**{value: numeric_column(frame, value)})
    if (data[value] < 0).any():
        raise DataError(f"column '{value}'", "has negative values", "fairness needs allocations ≥ 0")
    out = data.groupby(list(group), sort=True, observed=True)[value].agg(
        n_flows="count", jain_index=jain_index
    )
    return out.reset_index()


def fairness_spread(
    frame: pd.DataFrame,
    value: str,
    config: Sequence[str],
    replication: str,
    confidence: float = 0.95,
) -> pd.DataFrame:
    """Per configuration: the index of each replication's flows, then its mean, SD, min, max and a
    bootstrap percentile interval of the mean over replications (ONL Table 2's "fairness" and "SD of
    fairness"); the interval stays in [1/n, 1] where a t interval would not."""
    check_confidence(confidence)
    per_rep = fairness_by_group(frame, value, [*config, replication])
    rows = []
    for keys, g in per_rep.groupby(list(config), sort=True, observed=True):
        j = g["jain_index"].to_numpy(dtype=float)
        n = j.size
        mean = float(j.mean())
        sd = float(j.std(ddof=1)) if n > 1 else float("nan")
        low, high = bootstrap_mean_interval(j, confidence)
        keys = keys if isinstance(keys, tuple) else (keys,)
        rows.append(
            dict(zip(config, keys, strict=True))
            | {
                "replications": n,
                "mean": mean,
                "sd": sd,
                "min": float(j.min()),
                "max": float(j.max()),
                "ci_low": low,
                "ci_high": high,
            }
        )
    return pd.DataFrame(rows)
