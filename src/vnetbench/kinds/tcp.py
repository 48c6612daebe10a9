"""tcp: bulk TCP goodput with iperf3, against the overhead model's TCP maximum."""

from __future__ import annotations

from typing import Any

from vnetbench.kinds.base import Params, PathFacts
from vnetbench.kinds.iperf3_flow import Iperf3FlowKind
from vnetbench.kinds.overhead import expected_max_bps
from vnetbench.spec.models import TcpMeasurement


class TcpKind(Iperf3FlowKind):
    name = "tcp"
    spec = TcpMeasurement

    def expected_max_bps(self, m: Any, path: PathFacts, params: Params) -> float | None:
        return expected_max_bps("tcp", path.rate_bps, path.mtu)


KIND = TcpKind()
