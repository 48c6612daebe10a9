"""rtt: ICMP echo round trips with iputils ping (per-packet timestamps)."""

from __future__ import annotations

from vnetbench.drivers import PING
from vnetbench.kinds.base import quantiles
from vnetbench.kinds.counted import CountedKind
from vnetbench.spec.models import RttMeasurement


class RttKind(CountedKind):
    name = "rtt"
    driver = PING
    spec = RttMeasurement
    # drivers/ping.py `_summarize`
    summary_metrics = quantiles("rtt", ("min", "mean", "median", "p95", "p99", "max", "sd", "mdev"), "ns") | {
        "sent_packets", "received_packets", "loss_ratio", "duplicate_replies", "late_replies",
        "unreachable_events",
    }  # fmt: skip


KIND = RttKind()
