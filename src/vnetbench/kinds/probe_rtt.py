"""probe-rtt: isochronous UDP round trips with vnb-probe (rtt → echo), the echo's own time removed."""

from __future__ import annotations

from vnetbench.drivers import PROBE_RTT
from vnetbench.kinds.counted import CountedKind
from vnetbench.spec.models import ProbeRttMeasurement


class ProbeRttKind(CountedKind):
    name = "probe-rtt"
    driver = PROBE_RTT
    spec = ProbeRttMeasurement


KIND = ProbeRttKind()
