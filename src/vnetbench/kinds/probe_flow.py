"""What the constant-rate vnb-probe flows (pps, trace, background) share: a UDP payload rate and size."""

from __future__ import annotations

from typing import Any

from vnetbench.kinds.base import Kind, Offered, Params, PathFacts
from vnetbench.kinds.overhead import expected_max_bps


class ProbeFlowKind(Kind):
    """A vnb-probe send → recv flow; its offered rate is its `pps` × `size`, or its `rate`."""

    def offered(self, m: Any, path: PathFacts | None, params: Params) -> Offered | None:
        rate = float(m.pps) * m.size * 8 if m.pps else float(m.rate)
        return Offered(rate, int(m.size))

    def expected_max_bps(self, m: Any, path: PathFacts, params: Params) -> float | None:
        offered = self.offered(m, path, params)
        assert offered is not None
        return expected_max_bps("udp", path.rate_bps, path.mtu, offered.payload_bytes)
