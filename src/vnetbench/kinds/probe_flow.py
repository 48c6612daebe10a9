"""What the constant-rate vnb-probe flows (pps, trace, background) share: a UDP payload rate and size."""

from __future__ import annotations

from typing import Any

from vnetbench.kinds.base import Kind, Offered, Params, PathFacts, quantiles
from vnetbench.kinds.overhead import expected_max_bps


class ProbeFlowKind(Kind):
    """A vnb-probe send → recv flow; its offered rate is its `pps` × `size`, or its `rate`."""

    # drivers/probe.py `sender_summary`, `receiver_summary` and `count_from_the_sender`
    summary_metrics = (
        quantiles("send_lateness", ("min", "p50", "p99", "max", "mean"), "ns")
        | quantiles("wake_lateness", ("min", "p50", "p99", "max", "mean"), "ns")
        | quantiles("burst", ("mean", "p50", "p99", "max"), "packets")
        | {
            "target_pps", "target_bps", "payload_bytes", "frame_bytes", "sent_packets", "fin_sent_packets",
            "missed_slots_packets", "send_errors", "achieved_pps", "achieved_bps", "achieved_l2_bps",
            "achieved_to_target_ratio", "mean_batch_packets", "pacing_quantum_ns", "sendmmsg_batch_messages",
            "sender_cpu_ratio",
            "received_packets", "duplicate_packets", "late_packets", "lost_packets", "loss_ratio",
            "reordered_packets", "received_pps", "received_bps", "throughput_bps", "received_l2_bps",
            "jitter_rfc3550_mean_ns", "ipdv_p99_ns", "pdv_p99_ns", "owd_p50_ns", "kernel_drops_packets",
            "foreign_packets", "exact_loss", "receiver_cpu_ratio", "loss_from_sender_count",
            "out_of_range_packets", "truncated_packets", "jitter_rfc3550_last_ns",
        }
    )  # fmt: skip

    def offered(self, m: Any, path: PathFacts | None, params: Params) -> Offered | None:
        rate = float(m.pps) * m.size * 8 if m.pps else float(m.rate)
        return Offered(rate, int(m.size))

    def expected_max_bps(self, m: Any, path: PathFacts, params: Params) -> float | None:
        offered = self.offered(m, path, params)
        assert offered is not None
        return expected_max_bps("udp", path.rate_bps, path.mtu, offered.payload_bytes)

    def unfragmented_sizes(self, m: Any) -> tuple[str, list[int]] | None:
        return "size", [int(m.size)]
