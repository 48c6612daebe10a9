"""cpushare: the EC2 study's timestamp loop on one node — the share of time the node gets a CPU."""

from __future__ import annotations

from vnetbench.drivers import CPUSHARE
from vnetbench.kinds.base import Kind
from vnetbench.spec.models import CpushareMeasurement


class CpushareKind(Kind):
    name = "cpushare"
    driver = CPUSHARE
    spec = CpushareMeasurement
    # drivers/probe.py `CpushareDriver.parse`
    summary_metrics = frozenset({
        "cpu_share_ratio", "rusage_cpu_ratio", "steal_ratio", "gaps_count", "gaps_sum_ns", "gap_p50_ns",
        "gap_p99_ns", "gap_max_ns", "mean_iteration_ns", "wall_ns", "threshold_ns",
    })  # fmt: skip


KIND = CpushareKind()
