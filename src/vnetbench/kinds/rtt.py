"""rtt: ICMP echo round trips with iputils ping (per-packet timestamps)."""

from __future__ import annotations

from typing import Any

from vnetbench.drivers import PING
from vnetbench.kinds.base import Kind
from vnetbench.spec.models import RttMeasurement


class RttKind(Kind):
    name = "rtt"
    driver = PING
    spec = RttMeasurement

    def planned_ns(self, m: Any) -> int:
        return int(m.count * m.interval)

    def flow_timing(self, m: Any) -> tuple[int, int]:
        return 0, 0  # ping runs `count` echoes, not for a duration


KIND = RttKind()
