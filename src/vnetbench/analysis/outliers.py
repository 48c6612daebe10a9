"""An explicit outlier policy for long-format samples (measurement_id, t_ns, metric, value).

Nothing is excluded unless a policy asks for it (`none` is the default), and every excluded row
comes back with the rule, the bounds and the group it was judged in, so a report can show it.

- `iqr`: Tukey's fences, outside [Q1 − k·IQR, Q3 + k·IQR] (k = 1.5).
- `mad`: Iglewicz–Hoaglin modified z-score, |x − median| / (1.4826 · MAD) > k (k = 3.5).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Literal

import numpy as np
import pandas as pd
from scipy import stats

from vnetbench.analysis.inputs import DataError, require_columns

Method = Literal["none", "iqr", "mad"]
DEFAULT_K = {"none": 0.0, "iqr": 1.5, "mad": 3.5}
MIN_GROUP = 4  # quartiles or a median deviation of fewer values say nothing about outliers


@dataclass(frozen=True)
class Filtered:
    """Rows kept, rows excluded (original columns + `reason`), and notes on groups left alone."""

    kept: pd.DataFrame
    excluded: pd.DataFrame
    policy: str
    notes: tuple[str, ...] = ()

    def summary(self) -> str:
        total = len(self.kept) + len(self.excluded)
        lines = [f"{self.policy}: excluded {len(self.excluded)} of {total} rows"]
        return "\n".join(lines + list(self.notes))


@dataclass(frozen=True)
class OutlierPolicy:
    method: Method = "none"
    k: float | None = None  # None: the method's usual constant
    by: tuple[str, ...] = ("measurement_id", "metric")  # outliers are judged among comparable values
    value: str = "value"
    _k: float = field(init=False, repr=False)

    def __post_init__(self) -> None:
        if self.method not in DEFAULT_K:
            raise DataError("outlier policy", f"unknown method '{self.method}'", "use none, iqr or mad")
        k = DEFAULT_K[self.method] if self.k is None else float(self.k)
        if self.method != "none" and not k > 0:
            raise DataError(
                "outlier policy", f"k = {self.k} must be positive", "e.g. 1.5 for iqr, 3.5 for mad"
            )
        object.__setattr__(self, "_k", k)

    def describe(self) -> str:
        if self.method == "none":
            return "outliers: none excluded (policy none)"
        return f"outliers: {self.method} with k = {self._k:g} per {', '.join(self.by)}"

    def apply(self, samples: pd.DataFrame) -> Filtered:
        require_columns(samples, [self.value, *self.by])
        if self.method == "none":
            return Filtered(
                samples.copy(), samples.iloc[0:0].assign(reason=pd.Series(dtype=str)), self.describe()
            )
        reason = pd.Series(pd.NA, index=samples.index, dtype=object)
        notes = []
        for keys, group in samples.groupby(list(self.by), sort=False, dropna=False):
            x = group[self.value].to_numpy(dtype=float)
            where = ", ".join(f"{c}={v}" for c, v in zip(self.by, np.atleast_1d(keys), strict=False))
            if x.size < MIN_GROUP:
                notes.append(f"{where}: {x.size} values, fewer than {MIN_GROUP}; none excluded")
                continue
            out, why = self._judge(x)
            if why is None:
                notes.append(f"{where}: {self.method} undefined (MAD is 0: most values equal); none excluded")
                continue
            for idx, v in zip(group.index[out], x[out], strict=True):
                reason[idx] = f"{why(v)} [{where}]"
        mask = reason.notna()
        excluded = samples[mask].assign(reason=reason[mask].astype(str))
        return Filtered(samples[~mask].copy(), excluded, self.describe(), tuple(notes))

    def _judge(self, x: np.ndarray) -> tuple[np.ndarray, Callable[[float], str] | None]:
        k = self._k
        if self.method == "iqr":
            q1, q3 = np.percentile(x, [25, 75])
            lo, hi = q1 - k * (q3 - q1), q3 + k * (q3 - q1)

            def why_iqr(v: float) -> str:
                fences = f"[Q1 − {k:g}·IQR, Q3 + {k:g}·IQR]"
                return f"iqr: {v:g} outside [{lo:g}, {hi:g}] = {fences}, Q1 {q1:g}, Q3 {q3:g}"

            return (x < lo) | (x > hi), why_iqr
        med = float(np.median(x))
        mad = float(stats.median_abs_deviation(x, scale="normal"))
        if mad == 0:
            return np.zeros(x.size, dtype=bool), None
        z = np.abs(x - med) / mad

        def why_mad(v: float) -> str:
            z = abs(v - med) / mad
            return f"mad: {v:g} has |x − median| / (1.4826·MAD) = {z:.3g} > {k:g}, median {med:g}"

        return z > k, why_mad


def apply_policy(
    samples: pd.DataFrame, policy: OutlierPolicy | Method = "none", by: Sequence[str] | None = None
) -> Filtered:
    """Convenience: `apply_policy(samples, "iqr")`."""
    if isinstance(policy, str):
        policy = OutlierPolicy(policy, by=tuple(by) if by else OutlierPolicy.by)
    return policy.apply(samples)
