"""tcp: bulk TCP goodput with iperf3, against the overhead model's TCP maximum."""

from __future__ import annotations

from typing import Any

from vnetbench.drivers import IPERF3
from vnetbench.kinds.base import Kind, Params, PathFacts
from vnetbench.kinds.overhead import expected_max_bps
from vnetbench.spec.models import TcpMeasurement


class TcpKind(Kind):
    name = "tcp"
    driver = IPERF3
    spec = TcpMeasurement

    def flow_timing(self, m: Any) -> tuple[int, int]:
        return int(m.duration), int(m.omit)

    def expected_max_bps(self, m: Any, path: PathFacts, params: Params) -> float | None:
        return expected_max_bps("tcp", path.rate_bps, path.mtu)


KIND = TcpKind()
