"""Transient removal: drop each measurement's warm-up before any statistic is taken (Jain, ch. 25).

Samples are long format (measurement_id, t_ns, metric, value) where t_ns is the offset from the
flow's start. Dropped rows are returned with their reason, like the outlier policy's.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pandas as pd

from vnetbench.analysis.inputs import DataError, require_columns
from vnetbench.analysis.outliers import Filtered

NS = 1_000_000_000


def drop_transient(
    samples: pd.DataFrame, omit_ns: int | Mapping[Any, int], measurement: str = "measurement_id"
) -> Filtered:
    """Keep rows with t_ns ≥ the measurement's omit; `omit_ns` is one value for all, or one per
    measurement_id (measurements not in the mapping keep every sample)."""
    require_columns(samples, [measurement, "t_ns"])
    if isinstance(omit_ns, Mapping):
        bad = {m: v for m, v in omit_ns.items() if v < 0}
        omit = samples[measurement].map(lambda m: omit_ns.get(m, 0)).astype("int64")
    else:
        bad = {"all": omit_ns} if omit_ns < 0 else {}
        omit = pd.Series(int(omit_ns), index=samples.index, dtype="int64")
    if bad:
        raise DataError("omit_ns", f"negative warm-up {bad}", "give the seconds to omit as nanoseconds ≥ 0")
    drop = samples["t_ns"] < omit
    reason = [
        f"transient: t {t / NS:g} s < omit {o / NS:g} s"
        for t, o in zip(samples.loc[drop, "t_ns"], omit[drop], strict=True)
    ]
    excluded = samples[drop].assign(reason=pd.Series(reason, index=samples.index[drop], dtype=object))
    policy = (
        f"transient: omit {omit_ns / NS:g} s"
        if not isinstance(omit_ns, Mapping)
        else "transient: omit per measurement"
    )
    return Filtered(samples[~drop].copy(), excluded, policy)
