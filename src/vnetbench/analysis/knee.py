"""The knee of a packet-rate sweep: the highest offered rate received whole before the first that was
not. The report's sweep tables (report/sections/probe.py, over its DataFrames) and the dashboard's
sweep cells (dashboard/views.py, over a pair's rows) share these levels.

A point passes when less than 1 % was lost and the sender sent at least 95 % of the offered rate: a
sender that cannot keep up has saturated the path (on a veth its receive work runs on the sender's
CPU) as surely as a drop shows it. 95 %, not 99 %: on a loaded machine stalls over the sender's 5 ms
threshold skip a few slots without the path being saturated.
"""

from __future__ import annotations

import math
from collections.abc import Iterable

KNEE_LOSS = 0.01  # a sweep point "passes" when it lost less than this
KNEE_SENT = 0.95  # ... and the sender sent at least this share of the offered rate (stalls cost < 5 %)


def passes(offered_pps: float, loss: float | None, achieved_pps: float | None = None) -> bool:
    """Whether one sweep point was received whole (an unknown sender rate does not fail it)."""
    if loss is None or not math.isfinite(loss) or loss >= KNEE_LOSS:
        return False
    return achieved_pps is None or not math.isfinite(achieved_pps) or achieved_pps >= KNEE_SENT * offered_pps


def knee(points: Iterable[tuple[float, float | None, float | None]]) -> float | None:
    """The highest offered rate that passed before the first that did not (None: none passed), of
    (offered_pps, loss_ratio, achieved_pps or None) points in any order."""
    best = None
    for offered, loss, achieved in sorted(points, key=lambda p: p[0]):
        if not passes(offered, loss, achieved):
            break
        best = offered
    return best
