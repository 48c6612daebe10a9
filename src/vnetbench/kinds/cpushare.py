"""cpushare: the EC2 study's timestamp loop on one node — the share of time the node gets a CPU."""

from __future__ import annotations

from vnetbench.drivers import CPUSHARE
from vnetbench.kinds.base import Kind
from vnetbench.spec.models import CpushareMeasurement


class CpushareKind(Kind):
    name = "cpushare"
    driver = CPUSHARE
    spec = CpushareMeasurement


KIND = CpushareKind()
