"""A link's empirical delay distribution (`delay_cdf`): points (cumulative probability, one-way
delay) of its CDF, joined by straight lines (a piecewise-linear inverse CDF), e.g.

    delay_cdf: [[0, 24.7ms], [0.9, 26.2ms], [0.97, 40ms], [1, 375ms]]

Between two consecutive points the delay is uniform and carries their difference in probability.
The points are checked here (the units are parsed by the spec's duration type before);
that `delay_cdf` excludes `delay`, `jitter` and `jitter_distribution` is checked with the other
cross-field rules in references.py.
"""

from __future__ import annotations

from bisect import bisect_left
from itertools import pairwise
from typing import Annotated, Any

from pydantic import BeforeValidator, ValidationInfo

from vnetbench.spec.units import DurationNs, format_duration, no_bare_seconds

EXAMPLE = "e.g. [[0, 49.5ms], [0.75, 52.5ms], [0.95, 90ms], [1, 400ms]]"
Points = tuple[tuple[float, int], ...]


def _point_delay_unit(value: Any, info: ValidationInfo) -> Any:
    """A point's delay as a bare number of 1 or more (`[1, 40]`): refused as a link's `delay: 40` is,
    at the point (delay_cdf[j]); a stored spec keeps reading it as seconds."""
    if isinstance(value, list | tuple) and len(value) == 2:
        no_bare_seconds(value[1], info)
    return value


# One point (cumulative probability, one-way delay), its delay in the spec's duration units.
CdfPoint = Annotated[tuple[float, DurationNs], BeforeValidator(_point_delay_unit)]


def check_points(points: Points | None) -> Points | None:
    """The points unchanged, or ValueError saying what is wrong and what is accepted."""
    if points is None:
        return None
    if len(points) < 2:
        raise ValueError(f"needs at least two points (cumulative probability, delay), {EXAMPLE}")
    for p, _ in points:
        if not 0 <= p <= 1:
            raise ValueError(f"probability {p} is outside 0–1; give cumulative probabilities, {EXAMPLE}")
    if points[0][0] != 0 or points[-1][0] != 1:
        raise ValueError(
            f"the first point must have probability 0 (the least delay) and the last probability 1 "
            f"(the largest), {EXAMPLE}"
        )
    for (p0, d0), (p1, d1) in pairwise(points):
        if p1 <= p0:
            raise ValueError(f"probabilities must increase strictly: {p0} is followed by {p1}")
        if d1 < d0:
            raise ValueError(
                f"delays must not decrease: {format_duration(d0)} at {p0} is followed by "
                f"{format_duration(d1)} at {p1}"
            )
    return points


def quantile(points: Points, u: float) -> float:
    """The delay (ns) at cumulative probability u, as the delay node draws it."""
    u = min(max(u, 0.0), 1.0)
    i = min(max(bisect_left([p for p, _ in points], u), 1), len(points) - 1)
    (p0, d0), (p1, d1) = points[i - 1], points[i]
    return d0 + (u - p0) / (p1 - p0) * (d1 - d0)


def cdf(points: Points, delay_ns: float) -> float:
    """The configured probability that a frame's delay is at most delay_ns."""
    if delay_ns < points[0][1]:
        return 0.0
    for (p0, d0), (p1, d1) in pairwise(points):
        if delay_ns < d1:
            return p0 + (p1 - p0) * (delay_ns - d0) / (d1 - d0)
    return 1.0


def median_ns(points: Points) -> float:
    """The median of a delay CDF (ns)."""
    return quantile(points, 0.5)


def cli(points: Points) -> str:
    """The `vnb-probe delay --delay-cdf` form: 0:49500000ns,0.75:52500000ns,..."""
    return ",".join(f"{p!r}:{d}ns" for p, d in points)
