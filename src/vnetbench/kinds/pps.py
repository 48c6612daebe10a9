"""pps: a sweep of offered packet rates × packet sizes with vnb-probe; every (size, rate) is a step.

Sizes outer and rates ascending inside (the OpenStack study's order), each point with its own key
suffix `/s{size}/p{rate}` and its point in the step's params.
"""

from __future__ import annotations

from typing import Any

from vnetbench.drivers import PROBE
from vnetbench.kinds.base import Offered, Params, PathFacts, SweepPoint
from vnetbench.kinds.probe_flow import ProbeFlowKind
from vnetbench.spec.models import PpsMeasurement


def points(m: PpsMeasurement) -> list[dict[str, int]]:
    """Every (size, rate) of a sweep, sizes as written, rates ascending."""
    return [{"size": size, "pps": pps} for size in m.sizes for pps in sorted(set(m.rates))]


class PpsKind(ProbeFlowKind):
    name = "pps"
    driver = PROBE
    spec = PpsMeasurement

    def sweep(self, m: Any) -> list[SweepPoint]:
        return [SweepPoint(f"/s{p['size']}/p{p['pps']}", dict(p)) for p in points(m)]

    def offered(self, m: Any, path: PathFacts | None, params: Params) -> Offered | None:
        if "pps" not in params:  # not a sweep point: no one rate
            return None
        return Offered(float(params["pps"]) * params["size"] * 8, int(params["size"]))

    def unfragmented_sizes(self, m: Any) -> tuple[str, list[int]] | None:
        return "sizes", [int(size) for size in m.sizes]


KIND = PpsKind()
