"""The L2 segments a topology forms and the addresses their nodes get — from the spec alone.

Switches joined by links form one broadcast domain; a node–node link is a domain of its own. Segment k
gets the k-th /24 of 198.18.0.0/15 (RFC 2544's benchmarking range) and its nodes the addresses .1, .2 …
in the order the links name them. Spec validation needs this (two links of a node into one segment,
pairs that share no segment), and the layout builds on it, so it lives here, below both.
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass, field

from vnetbench.spec.models import Topology

UNDERLAY_NET = ipaddress.ip_network("198.19.255.0/24")


@dataclass(frozen=True)
class Segment:
    """An L2 broadcast domain and its subnet."""

    index: int
    subnet: str
    label: str
    addresses: dict[str, str] = field(default_factory=dict)  # node -> IP (no prefix)
    ifnames: dict[str, str] = field(default_factory=dict)  # node -> interface inside the node


class SegmentError(ValueError):
    """The topology is valid YAML but its segments cannot be addressed (e.g. too many nodes on one)."""

    def __init__(self, loc: tuple[str | int, ...], message: str) -> None:
        super().__init__(message)
        self.loc = loc


def subnet_for(index: int) -> ipaddress.IPv4Network:
    """Segment k gets the k-th /24 of 198.18.0.0/15, leaving 198.19.255.0/24 for the underlay."""
    if index >= 511:
        raise SegmentError(("topology", "links"), "more than 511 L2 segments; 198.18.0.0/15 is full")
    return ipaddress.ip_network(f"198.{18 + index // 256}.{index % 256}.0/24")


def l2_segments(topo: Topology) -> tuple[list[Segment], list[Segment]]:
    """L2 segments: switches joined by links form one segment; a node–node link is its own.

    Returns the segments and, for each link in order, the segment it belongs to.
    """
    node_names = {n.name for n in topo.nodes}
    parent = {s.name: s.name for s in topo.switches}

    def find(x: str) -> str:
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for link in topo.links:
        a, b = link.endpoints
        if a in parent and b in parent:
            parent[find(a)] = find(b)

    segments: list[Segment] = []
    of_link: list[Segment] = []
    by_root: dict[str, Segment] = {}
    for link in topo.links:
        a, b = link.endpoints
        if a in node_names and b in node_names:
            seg = Segment(len(segments), str(subnet_for(len(segments))), link.label)
            segments.append(seg)
        else:
            root = find(a if a in parent else b)
            if root not in by_root:
                by_root[root] = Segment(len(segments), str(subnet_for(len(segments))), root)
                segments.append(by_root[root])
            seg = by_root[root]
        of_link.append(seg)
        for node in (e for e in (a, b) if e in node_names):
            if node not in seg.addresses:
                host_index = len(seg.addresses) + 1
                if host_index > 254:
                    raise SegmentError(("topology", "links"), f"segment {seg.label} has more than 254 nodes")
                seg.addresses[node] = str(ipaddress.ip_network(seg.subnet).network_address + host_index)
    return segments, of_link
