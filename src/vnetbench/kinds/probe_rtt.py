"""probe-rtt: isochronous UDP round trips with vnb-probe (rtt → echo), the echo's own time removed."""

from __future__ import annotations

from typing import Any

from vnetbench.drivers import PROBE_RTT
from vnetbench.kinds.base import quantiles
from vnetbench.kinds.counted import CountedKind
from vnetbench.spec.models import ProbeRttMeasurement


class ProbeRttKind(CountedKind):
    name = "probe-rtt"
    driver = PROBE_RTT
    spec = ProbeRttMeasurement
    # drivers/probe.py `ProbeRttDriver.parse`
    summary_metrics = (
        quantiles("rtt", ("min", "mean", "median", "p99", "max", "sd"), "ns")
        | quantiles("send_lateness", ("min", "p50", "p99", "max", "mean"), "ns")
        | {
            "sent_packets", "received_packets", "lost_packets", "loss_ratio", "duplicate_replies",
            "server_processing_p50_ns", "achieved_pps", "target_pps", "sender_cpu_ratio",
            "unreachable_events", "foreign_packets", "echo_foreign_packets", "echo_send_errors",
            "owd_up_p50_ns", "owd_down_p50_ns",
        }
    )  # fmt: skip

    def unfragmented_sizes(self, m: Any) -> tuple[str, list[int]] | None:
        return "size", [int(m.size)]


KIND = ProbeRttKind()
