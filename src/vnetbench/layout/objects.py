"""The kernel objects a topology is realised with, and the `Layout` that holds them — pure data.

A `Layout` also answers the questions every stage asks of a pair of nodes: the address one uses to
reach the other, their placement (same host / same site / cross site), the links between them, the
bottleneck rate and the path MTU.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from typing import Literal

from vnetbench.spec.models import Link
from vnetbench.spec.segments import Segment

Placement = Literal["same-host", "same-site", "cross-site"]
UNDERLAY_MTU = 9000
DEFAULT_SITE = "site"
DEFAULT_HOST = "host"


@dataclass(frozen=True)
class Shaper:
    kind: Literal["tbf", "htb"]
    rate_bps: int
    queue_bytes: int
    burst_bytes: int
    # network: the sender hands every frame over at once (a cloning redirect through an IFB relay,
    # providers/local/netshaping.py); sender: the interface's own root qdisc pushes back on it
    placement: Literal["network", "sender"] = "sender"
    # minimum bytes charged per frame (tbf's mpu): with a link's `pps`, rate / pps, so that small
    # frames are limited to pps packets/s; 0: every frame costs its length
    min_frame_bytes: int = 0


@dataclass(frozen=True)
class Netem:
    """Delay, jitter and loss of the frames leaving one interface (netem, or a delay node)."""

    delay_ns: int | None
    jitter_ns: int | None
    loss_ratio: float | None
    jitter_distribution: str = "uniform"
    reorder: bool = False
    loss_model: str = "random"
    loss_burst: float = 4.0
    emulator: str = "auto"  # auto | netem | delay-node (see delaynodes.py)
    link: str = ""
    delay_cdf: tuple[tuple[float, int], ...] | None = None  # (probability, ns) points; replaces delay/jitter
    hold_ns: int | None = None  # a drawn delay is kept this long (a delay node only); None: drawn per frame


@dataclass(frozen=True)
class Interface:
    ns: str
    name: str
    mtu: int
    address: str | None = None  # CIDR, e.g. 198.18.0.1/24
    master: str | None = None  # bridge (Linux or OVS) in the same namespace
    shaper: Shaper | None = None
    netem: Netem | None = None
    tx_offload_off: bool = False  # needed on veths that talk to a userspace OVS datapath


@dataclass(frozen=True)
class DelayNode:
    """A namespace between the two halves of a link, where `vnb-probe delay` forwards frames a <-> b."""

    ns: str
    a: str  # interface towards the link's first half
    b: str
    mtu: int
    a_to_b: Netem | None  # what frames crossing from a to b get (None: passed at once)
    b_to_a: Netem | None
    link: str


@dataclass(frozen=True)
class VethPair:
    a: Interface
    b: Interface


@dataclass(frozen=True)
class Vxlan:
    iface: Interface
    vni: int
    local: str
    remote: str
    underlay_dev: str


@dataclass(frozen=True)
class Bridge:
    ns: str
    name: str
    kind: Literal["linux-bridge", "ovs"]
    mtu: int
    label: str  # the switch's name in the spec, or the link it serves


@dataclass
class Layout:
    campaign_id: str
    prefix: str
    namespaces: dict[str, str]  # namespace name -> role ("node:vm1", "host:h1", "wan")
    bridges: list[Bridge]
    veths: list[VethPair]
    vxlans: list[Vxlan]
    segments: list[Segment]
    node_ns: dict[str, str]
    host_ns: dict[str, str]
    node_host: dict[str, str]
    host_site: dict[str, str]
    cpu_quota: dict[str, float]  # cgroup key ("host:h1" / "node:vm1") -> fraction of a core
    links: list[Link]
    delay_nodes: list[DelayNode] = field(default_factory=list)  # filled by delaynodes.realise()

    def interfaces(self) -> list[Interface]:
        out = [iface for pair in self.veths for iface in (pair.a, pair.b)]
        return out + [vx.iface for vx in self.vxlans]

    def shared_segment(self, src: str, dst: str) -> Segment | None:
        for seg in self.segments:
            if src in seg.addresses and dst in seg.addresses:
                return seg
        return None

    def address_of(self, dst: str, seen_from: str) -> str:
        seg = self.shared_segment(seen_from, dst)
        if seg is None:
            raise KeyError(f"{seen_from} and {dst} share no link or switch")
        return seg.addresses[dst]

    def placement(self, src: str, dst: str) -> Placement:
        h1, h2 = self.node_host[src], self.node_host[dst]
        if h1 == h2:
            return "same-host"
        return "same-site" if self.host_site[h1] == self.host_site[h2] else "cross-site"

    def path_links(self, src: str, dst: str) -> list[Link]:
        """The links a packet from src to dst crosses (shortest path inside their shared segment)."""
        adjacency: dict[str, list[tuple[str, Link]]] = defaultdict(list)
        for link in self.links:
            a, b = link.endpoints
            adjacency[a].append((b, link))
            adjacency[b].append((a, link))
        frontier, came = [src], {src: None}
        while frontier:
            nxt = []
            for vertex in frontier:
                for other, link in adjacency[vertex]:
                    # Packets do not pass through other nodes (no routing), only through switches.
                    if other not in came and (other == dst or other not in self.node_ns):
                        came[other] = (vertex, link)
                        nxt.append(other)
            frontier = nxt
        if dst not in came:
            return []
        path, vertex = [], dst
        while came[vertex] is not None:
            vertex, link = came[vertex]
            path.append(link)
        return list(reversed(path))

    def bottleneck_rate(self, src: str, dst: str) -> int | None:
        rates = [link.rate for link in self.path_links(src, dst) if link.rate]
        return min(rates) if rates else None

    def path_pps(self, src: str, dst: str) -> int | None:
        """The smallest packet-rate capacity (a link's `pps`) on the path, if any link has one."""
        caps = [link.pps for link in self.path_links(src, dst) if link.pps]
        return min(caps) if caps else None

    def path_mtu(self, src: str, dst: str) -> int:
        return min((link.mtu for link in self.path_links(src, dst)), default=1500)
