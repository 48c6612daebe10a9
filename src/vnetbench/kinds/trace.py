"""trace: throughput over time in fine bins with vnb-probe (the EC2 study's millisecond traces)."""

from __future__ import annotations

from vnetbench.drivers import PROBE
from vnetbench.kinds.probe_flow import ProbeFlowKind
from vnetbench.spec.models import TraceMeasurement


class TraceKind(ProbeFlowKind):
    name = "trace"
    driver = PROBE
    spec = TraceMeasurement


KIND = TraceKind()
