"""udp: iperf3 at an offered rate — given, or `link`: the link's overhead-model maximum × rate_factor."""

from __future__ import annotations

from typing import Any

from vnetbench.kinds.base import Offered, Params, PathFacts
from vnetbench.kinds.iperf3_flow import Iperf3FlowKind
from vnetbench.kinds.overhead import expected_max_bps, udp_efficiency
from vnetbench.spec.models import UdpMeasurement


class UdpKind(Iperf3FlowKind):
    name = "udp"
    spec = UdpMeasurement
    # drivers/iperf3.py `_udp` and `_udp_loss`; udp_start_delay_s is the runner's handshake watchdog
    summary_metrics = Iperf3FlowKind.cpu_metrics | {
        "throughput_bps", "sender_throughput_bps", "offered_bps", "packets_sent", "packets_received",
        "out_of_order_packets", "iperf3_lost_packets", "run_packets_sent", "run_packets_received",
        "lost_packets", "loss_ratio", "jitter_last_ns", "jitter_mean_ns", "udp_start_delay_s",
    }  # fmt: skip

    def offered(self, m: Any, path: PathFacts | None, params: Params) -> Offered | None:
        if m.rate != "link":
            return Offered(float(m.rate) * m.rate_factor, int(m.length))
        if path is None or path.rate_bps is None:
            return None
        base = udp_efficiency(m.length, path.mtu).goodput_bps(path.rate_bps)
        return Offered(base * m.rate_factor, int(m.length))

    def expected_max_bps(self, m: Any, path: PathFacts, params: Params) -> float | None:
        return expected_max_bps("udp", path.rate_bps, path.mtu, m.length)

    def path_problem(self, m: Any, path: PathFacts, src: str, dst: str) -> tuple[str, str] | None:
        if m.rate == "link" and path.rate_bps is None:
            message = f"'link' but the path {src}→{dst} has no link with a rate; give a rate (e.g. 100mbit)"
            return "rate", message + " or set a rate on the link"
        return None

    def datagram_bytes(self, m: Any) -> int | None:
        return int(m.length) if m.length else None


KIND = UdpKind()
