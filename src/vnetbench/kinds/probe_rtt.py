"""probe-rtt: isochronous UDP round trips with vnb-probe (rtt → echo), the echo's own time removed."""

from __future__ import annotations

from typing import Any

from vnetbench.drivers import PROBE_RTT
from vnetbench.kinds.base import Kind
from vnetbench.spec.models import ProbeRttMeasurement


class ProbeRttKind(Kind):
    name = "probe-rtt"
    driver = PROBE_RTT
    spec = ProbeRttMeasurement

    def planned_ns(self, m: Any) -> int:
        return int(m.count * m.interval)

    def flow_timing(self, m: Any) -> tuple[int, int]:
        return 0, 0  # the prober sends `count` probes, not for a duration


KIND = ProbeRttKind()
