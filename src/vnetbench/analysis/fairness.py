"""Jain's fairness index of simultaneous flows, and how it varies over replications.

f(x) = (Σx)² / (n Σx²): 1 when every flow gets the same, 1/n when one flow gets everything.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd
from scipy import stats

from vnetbench.analysis.inputs import DataError, check_confidence, numeric_column, require_columns


def jain_index(values: Sequence[float] | np.ndarray | pd.Series) -> float:
    x = np.asarray(values, dtype=float)
    if x.size == 0 or np.any(x < 0) or not np.all(np.isfinite(x)):
        raise ValueError("Jain's index needs one or more finite, non-negative allocations")
    total = float(np.sum(x * x))
    return float(x.sum() ** 2 / (x.size * total)) if total > 0 else float("nan")  # all zero: undefined


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
    t interval of the mean over replications (ONL Table 2's "fairness" and "SD of fairness")."""
    check_confidence(confidence)
    per_rep = fairness_by_group(frame, value, [*config, replication])
    rows = []
    for keys, g in per_rep.groupby(list(config), sort=True, observed=True):
        j = g["jain_index"].to_numpy(dtype=float)
        n = j.size
        mean = float(j.mean())
        sd = float(j.std(ddof=1)) if n > 1 else float("nan")
        half = float(stats.t.ppf((1 + confidence) / 2, n - 1) * sd / np.sqrt(n)) if n > 1 else float("nan")
        keys = keys if isinstance(keys, tuple) else (keys,)
        rows.append(
            dict(zip(config, keys, strict=True))
            | {
                "replications": n,
                "mean": mean,
                "sd": sd,
                "min": float(j.min()),
                "max": float(j.max()),
                "ci_low": mean - half,
                "ci_high": mean + half,
            }
        )
    return pd.DataFrame(rows)
