"""Change points in a pair's series for the dashboard: the statistics' E-divisive means finder
(analysis/changepoints.py) on the newest runs of one homogeneous line of the series (one pattern,
sweep point or offered rate and treatment: views.series_lines), never over points of different lines.

The finder's permutation test is quadratic in the series length (with one step in it: 240 points
~0.1 s, 480 ~0.6 s, 2000 ~10 s on this 2-core machine; a line without a change stops after a few
permutations: 2 / 9 / 108 ms), and the dashboard answers while a campaign runs, so only the newest
LIVE_POINTS runs are searched; `vnetbench analyze` searches the whole series.
"""

from __future__ import annotations

from collections.abc import Sequence

from vnetbench.analysis.changepoints import MIN_SIZE
from vnetbench.analysis.changepoints import change_points as find_change_points

LIVE_POINTS = 480  # 20 days of hourly runs
MIN_POINTS = 2 * MIN_SIZE  # a line with fewer ok points is not searched


def change_points(values: Sequence[float]) -> list[int] | None:
    """Indices into `values` where a new level begins ([] when none); None when the series is too short."""
    if len(values) < MIN_POINTS:
        return None
    start = max(0, len(values) - LIVE_POINTS)
    return [start + cp.index for cp in find_change_points(list(values[start:]))]
