"""HOOK for change points in a pair's series (issue 16 asks for them "from the comparison issue, when it
lands"). No change-point finder is in vnetbench.analysis yet, so this answers None and the series page
says "change points: not available". When the statistics engineer's function lands (e.g.
vnetbench.analysis.changepoints), call it here and return the indices where a new level starts; the
JSON API and the chart already draw them.
"""

from __future__ import annotations

from collections.abc import Sequence


def change_points(values: Sequence[float]) -> list[int] | None:
    """Indices into `values` where a new level begins, or None while no finder is installed."""
    del values  # used once a finder exists
    return None
