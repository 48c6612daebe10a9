"""tcp: bulk TCP goodput with iperf3, against the overhead model's TCP maximum."""

from __future__ import annotations

from typing import Any

from vnetbench.kinds.base import Params, PathFacts
from vnetbench.kinds.iperf3_flow import Iperf3FlowKind
from vnetbench.kinds.overhead import expected_max_bps
from vnetbench.spec.models import TcpMeasurement


class TcpKind(Iperf3FlowKind):
    name = "tcp"
    spec = TcpMeasurement
    # drivers/iperf3.py `_tcp` and `_tcp_window`
    summary_metrics = Iperf3FlowKind.cpu_metrics | {
        "throughput_bps", "sender_throughput_bps", "bytes_received", "retransmits",
        "mean_rtt_ns", "min_rtt_ns", "max_rtt_ns", "max_cwnd_bytes", "max_snd_wnd_bytes",
        "iperf3_throughput_bps", "window_bytes_received", "window_ns",
    }  # fmt: skip

    def expected_max_bps(self, m: Any, path: PathFacts, params: Params) -> float | None:
        return expected_max_bps("tcp", path.rate_bps, path.mtu)


KIND = TcpKind()
