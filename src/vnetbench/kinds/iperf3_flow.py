"""What the iperf3 kinds (tcp, udp) share: a test of `duration` whose first `omit` the tool leaves out."""

from __future__ import annotations

from typing import Any, ClassVar

from vnetbench.drivers import IPERF3
from vnetbench.kinds.base import Kind


class Iperf3FlowKind(Kind):
    """An iperf3 test: -t duration, -O omit."""

    driver = IPERF3
    # drivers/iperf3.py `_cpu`, for TCP and UDP alike
    cpu_metrics: ClassVar[frozenset[str]] = frozenset({"sender_cpu_ratio", "receiver_cpu_ratio"})

    def planned_ns(self, m: Any) -> int:
        """iperf3 -O runs its omitted warm-up before the -t test: `omit` + `duration` in all."""
        return int(m.duration) + int(m.omit)

    def flow_timing(self, m: Any) -> tuple[int, int]:
        return int(m.duration), int(m.omit)
