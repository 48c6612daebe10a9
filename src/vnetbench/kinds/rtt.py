"""rtt: ICMP echo round trips with iputils ping (per-packet timestamps)."""

from __future__ import annotations

from vnetbench.drivers import PING
from vnetbench.kinds.counted import CountedKind
from vnetbench.spec.models import RttMeasurement


class RttKind(CountedKind):
    name = "rtt"
    driver = PING
    spec = RttMeasurement


KIND = RttKind()
