"""The overhead model: the most goodput a link of rate R can carry (docs/architecture.md).

goodput_max = R × payload / on_wire_bytes. A tc shaper (tbf/htb) counts the Ethernet header but not
preamble, FCS or inter-frame gap (`l2`); a physical Ethernet link counts all of them (`physical`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

Framing = Literal["l2", "physical"]

ETH_HEADER = 14
ETH_PHYSICAL_EXTRA = 4 + 8 + 12  # FCS, preamble + start delimiter, inter-frame gap
IPV4_HEADER = 20
TCP_HEADER = 20
TCP_TIMESTAMPS = 12  # Linux negotiates timestamps by default
UDP_HEADER = 8
ICMP_HEADER = 8


@dataclass(frozen=True)
class Efficiency:
    payload_bytes: int  # application bytes per unit (segment or datagram)
    wire_bytes: int  # bytes the link accounts for that unit
    ratio: float  # payload / wire

    def goodput_bps(self, rate_bps: float) -> float:
        return rate_bps * self.ratio


def _frame_extra(framing: Framing) -> int:
    return ETH_HEADER + (ETH_PHYSICAL_EXTRA if framing == "physical" else 0)


def tcp_efficiency(mtu: int = 1500, framing: Framing = "l2", timestamps: bool = True) -> Efficiency:
    """TCP payload per frame of an MTU-sized segment (timestamps on, as Linux negotiates them)."""
    payload = mtu - IPV4_HEADER - TCP_HEADER - (TCP_TIMESTAMPS if timestamps else 0)
    wire = mtu + _frame_extra(framing)
    return Efficiency(payload, wire, payload / wire)


def udp_efficiency(payload: int, mtu: int = 1500, framing: Framing = "l2") -> Efficiency:
    """A datagram larger than the MTU is fragmented: each fragment pays its own IP and L2 headers."""
    ip_payload = payload + UDP_HEADER
    per_fragment = (mtu - IPV4_HEADER) // 8 * 8
    fragments = max(1, math.ceil(ip_payload / per_fragment))
    wire = ip_payload + fragments * (IPV4_HEADER + _frame_extra(framing))
    return Efficiency(payload, wire, payload / wire)


def frame_bytes(payload: int, framing: Framing = "physical") -> int:
    """Ethernet frame size of a UDP datagram (a 18-byte payload is the 64-byte minimum frame)."""
    return payload + UDP_HEADER + IPV4_HEADER + ETH_HEADER + (4 if framing == "physical" else 0)


def expected_max_bps(
    transport: str, rate_bps: int | None, mtu: int = 1500, udp_payload: int = 1470, framing: Framing = "l2"
) -> float | None:
    """The overhead-model maximum goodput of a transport ("tcp" or "udp") on a link; None when unshaped.

    A measurement kind knows its transport and payload: ask `kinds.kind_of(kind).expected_max_bps`.
    """
    if rate_bps is None:
        return None
    if transport == "tcp":
        return tcp_efficiency(mtu, framing).goodput_bps(rate_bps)
    if transport == "udp":
        return udp_efficiency(udp_payload, mtu, framing).goodput_bps(rate_bps)
    return None


def fragments_per_datagram(payload_bytes: int, mtu: int) -> int:
    """IPv4 fragments one UDP datagram becomes (8 KB over MTU 1500: 6, as the ONL study counted)."""
    ip_payload = payload_bytes + UDP_HEADER
    if ip_payload + IPV4_HEADER <= mtu:
        return 1
    per_fragment = (mtu - IPV4_HEADER) // 8 * 8
    return math.ceil(ip_payload / per_fragment)
