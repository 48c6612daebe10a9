"""Change points in a periodic series: E-divisive means with a permutation test.

The algorithm of Matteson & James, "A Nonparametric Approach for Multiple Change Point Analysis of
Multivariate Data" (JASA 109(505), 2014), as MongoDB's signal-processing-algorithms and Apache
Otava (formerly DataStax's hunter) use it to find performance regressions in CI histories (Daly et
al., "Change Point Detection in Software Performance Testing", ICPE 2020). Neither library fits
here: both pin old numpy/scipy. The published algorithm is small:

1. For a segment x_s..x_(e−1) and a split τ, with X the m points before τ and Y the k points from
   τ on, the energy statistic (α = 1) is
       Q(τ) = m·k/(m + k) · (2/(mk)·Σ|X_i − Y_j| − Σ_(i<j)|X_i − X_j|/C(m,2) − Σ_(i<j)|Y_i − Y_j|/C(k,2)):
   large when the two sides differ in distribution, not only in mean. The best split maximises Q.
2. The best split over all current segments is tested by permutation: the values are shuffled
   within each segment (so earlier change points are kept) and the largest Q recomputed, R times;
   p = (1 + #{Q_perm ≥ Q}) / (R + 1). If p ≤ `significance` the split is a change point and the
   search goes on in its two halves; otherwise it stops. The permutations stop as soon as so many
   exceed Q that p would be above `significance` whatever the rest gave (2 of 199 at 0.01): the
   same answer, and the last, unsuccessful test of a search costs a few permutations, not 199.

Sums of |x_i − x_j| over blocks come from a 2-D prefix sum of the distance matrix, so one segment of
n points costs O(n²) (a series is one value per run of a periodic campaign: hundreds to thousands).
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from vnetbench.analysis.inputs import DataError
from vnetbench.analysis.jsonable import jsonable

SIGNIFICANCE = 0.01
PERMUTATIONS = 199  # smallest attainable p = 1/200 = 0.005
MIN_SIZE = 5  # points on each side of a split
SEED = 0  # fixed: the same store gives the same report
MAX_POINTS = 5000  # the distance matrix of one segment is n² floats


@dataclass(frozen=True)
class ChangePoint:
    index: int  # first point of the new segment
    time: Any  # times[index] when times were given
    mean_before: float  # of the segment up to the previous change point
    mean_after: float  # of the segment up to the next change point
    p_value: float
    statistic: float

    @property
    def relative_change(self) -> float:
        return (
            (self.mean_after - self.mean_before) / abs(self.mean_before) if self.mean_before else float("nan")
        )

    def to_dict(self) -> dict[str, Any]:
        return jsonable(
            {
                "index": self.index,
                "time": self.time,
                "mean_before": self.mean_before,
                "mean_after": self.mean_after,
                "relative_change": self.relative_change,
                "p_value": self.p_value,
                "statistic": self.statistic,
            }
        )


def _best_split(x: np.ndarray, min_size: int) -> tuple[float, int]:
    """(max Q, τ) over τ = min_size .. n − min_size of one segment; (−inf, −1) when too short."""
    n = x.size
    if n < 2 * min_size:
        return float("-inf"), -1
    d = np.abs(x[:, None] - x[None, :])
    # Only the block sums that start at (0, 0) are needed: rows up to τ against all (from the row
    # sums) and against each other (twice the pairs i < j < τ, from each row's sum left of the
    # diagonal) — one cumulative sum of d instead of a 2-D prefix sum (a third of the time).
    rows_to = np.concatenate(([0.0], d.sum(1).cumsum()))  # Σ_{i<τ} Σ_j d_ij
    left_of_diagonal = np.concatenate(([0.0], d.cumsum(1)[np.arange(1, n), np.arange(n - 1)]))
    pairs_below = np.concatenate(([0.0], left_of_diagonal.cumsum()))  # Σ_{i<j<τ} d_ij
    tau = np.arange(min_size, n - min_size + 1)
    m, k = tau.astype(float), (n - tau).astype(float)
    within_left = pairs_below[tau]
    between = rows_to[tau] - 2 * pairs_below[tau]
    within_right = (rows_to[n] - 2 * rows_to[tau] + 2 * pairs_below[tau]) / 2
    e = 2 * between / (m * k) - within_left / (m * (m - 1) / 2) - within_right / (k * (k - 1) / 2)
    q = m * k / (m + k) * e
    best = int(np.argmax(q))
    return float(q[best]), int(tau[best])


def _strongest(x: np.ndarray, bounds: list[int], min_size: int) -> tuple[float, int]:
    """The best split over all segments [bounds[i], bounds[i+1]): (Q, absolute index)."""
    best_q, best_at = float("-inf"), -1
    for start, end in itertools.pairwise(bounds):
        q, tau = _best_split(x[start:end], min_size)
        if q > best_q:
            best_q, best_at = q, start + tau
    return best_q, best_at


def change_points(
    values: Sequence[float] | np.ndarray,
    times: Sequence[Any] | None = None,
    significance: float = SIGNIFICANCE,
    permutations: int = PERMUTATIONS,
    min_size: int = MIN_SIZE,
    seed: int = SEED,
) -> list[ChangePoint]:
    """Change points of a series in time order (E-divisive means, permutation test)."""
    x = np.asarray(values, dtype=float)
    if x.ndim != 1 or not np.all(np.isfinite(x)):
        raise DataError("values", "must be a series of finite numbers", "drop the missing runs first")
    if times is not None and len(times) != x.size:
        raise DataError("times", f"{len(times)} times for {x.size} values", "give one time per value")
    if x.size > MAX_POINTS:
        raise DataError(
            "values", f"{x.size} points", f"aggregate to at most {MAX_POINTS} (e.g. hourly means)"
        )
    if not 0 < significance < 1:
        raise DataError("significance", f"{significance} is not a probability", "use e.g. 0.01")
    x_c = x - np.median(x)  # centred: distances keep their digits at any offset
    rng = np.random.default_rng(seed)
    bounds = [0, x.size]
    found: list[tuple[int, float, float]] = []
    while True:
        q, at = _strongest(x_c, bounds, min_size)
        if at < 0 or not np.isfinite(q) or q <= 0:
            break
        exceed = 0
        shuffled = x_c.copy()
        for _ in range(permutations):
            for start, end in itertools.pairwise(bounds):
                shuffled[start:end] = rng.permutation(x_c[start:end])
            exceed += _strongest(shuffled, bounds, min_size)[0] >= q
            if (1 + exceed) / (permutations + 1) > significance:
                break  # p only grows from here: not a change point, and the search ends with it
        p = (1 + exceed) / (permutations + 1)
        if p > significance:
            break
        found.append((at, p, q))
        bounds = sorted([*bounds, at])
    out = []
    for at, p, q in sorted(found):
        i = bounds.index(at)
        before, after = x[bounds[i - 1] : at], x[at : bounds[i + 1]]
        time = times[at] if times is not None else None
        out.append(ChangePoint(at, time, float(before.mean()), float(after.mean()), p, q))
    return out
