"""From a validated topology to the exact kernel objects that realise it — pure data, no kernel access.

The layout decides every name, address, interface and shaper, so it can be tested without root,
recorded in the store before anything is created, and shared by every provider.

How a topology is realised (the emulated data centre):
- every node (VM) and every host (hypervisor) is a network namespace; a `wan` namespace carries
  the underlay of VXLAN overlays between hosts;
- a node–node link on one host is a veth pair straight between the two node namespaces;
- a node–switch link is a veth from the node into its host's namespace, enslaved to the switch;
- a link between different hosts is carried host to host by a veth "wire" (same site, plain L2)
  or a VXLAN tunnel over the underlay (`overlay: vxlan`); a node end attaches via a per-link bridge;
- each direction is shaped once, at the interface where it leaves its sending end.
Nothing is created in the root namespace, so deleting our namespaces deletes every link with them.
"""

from __future__ import annotations

import ipaddress
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Literal

from vnetbench.spec.models import Campaign, Link, Topology

Placement = Literal["same-host", "same-site", "cross-site"]
UNDERLAY_MTU = 9000
UNDERLAY_NET = ipaddress.ip_network("198.19.255.0/24")
DEFAULT_SITE = "site"
DEFAULT_HOST = "host"


@dataclass(frozen=True)
class Shaper:
    kind: Literal["tbf", "htb"]
    rate_bps: int
    queue_bytes: int
    burst_bytes: int


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


@dataclass(frozen=True)
class Segment:
    """An L2 broadcast domain and its subnet."""

    index: int
    subnet: str
    label: str
    addresses: dict[str, str] = field(default_factory=dict)  # node -> IP (no prefix)
    ifnames: dict[str, str] = field(default_factory=dict)  # node -> interface inside the node


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

    def path_mtu(self, src: str, dst: str) -> int:
        return min((link.mtu for link in self.path_links(src, dst)), default=1500)


class LayoutError(ValueError):
    """The topology is valid YAML but cannot be laid out (e.g. too many nodes on one segment)."""

    def __init__(self, loc: tuple[str | int, ...], message: str) -> None:
        super().__init__(message)
        self.loc = loc


def subnet_for(index: int) -> ipaddress.IPv4Network:
    """Segment k gets the k-th /24 of 198.18.0.0/15, leaving 198.19.255.0/24 for the underlay."""
    if index >= 511:
        raise LayoutError(("topology", "links"), "more than 511 L2 segments; 198.18.0.0/15 is full")
    return ipaddress.ip_network(f"198.{18 + index // 256}.{index % 256}.0/24")


def site_of(topology: Topology, host: str) -> str:
    for h in topology.hosts:
        if h.name == host:
            return h.site or (topology.sites[0].name if topology.sites else DEFAULT_SITE)
    return topology.sites[0].name if topology.sites else DEFAULT_SITE


def host_of_node(topology: Topology, node: str) -> str:
    for n in topology.nodes:
        if n.name == node:
            return n.host or (topology.hosts[0].name if topology.hosts else DEFAULT_HOST)
    raise KeyError(node)


def host_of_switch(topology: Topology, switch: str) -> str:
    for s in topology.switches:
        if s.name == switch:
            return s.host or (topology.hosts[0].name if topology.hosts else DEFAULT_HOST)
    raise KeyError(switch)


def _shaper(link: Link) -> Shaper | None:
    if not link.rate:
        return None
    bytes_per_s = link.rate / 8
    frame = link.mtu + 14
    # Burst: at least two frames and one millisecond at rate, so the token bucket is not starved
    # by timer granularity at high rates. Queue: 50 ms at rate unless the user says otherwise.
    burst = max(2 * frame, int(bytes_per_s / 1000))
    queue = link.queue or max(int(bytes_per_s * 0.05), 4 * frame)
    return Shaper(link.shaper, link.rate, queue, burst)


def _netem(link: Link) -> Netem | None:
    if link.delay is None and link.jitter is None and link.loss is None and link.delay_cdf is None:
        return None
    return Netem(
        link.delay,
        link.jitter,
        link.loss,
        link.jitter_distribution,
        link.reorder,
        link.loss_model,
        link.loss_burst,
        link.emulator,
        link.label,
        link.delay_cdf,
    )


def build_layout(campaign: Campaign, campaign_id: str) -> Layout:
    """Lay out the campaign's topology. Assumes references were checked (spec/references.py)."""
    topo = campaign.topology
    prefix = f"vnb{campaign_id}"
    node_names = [n.name for n in topo.nodes]
    switch_host = {s.name: host_of_switch(topo, s.name) for s in topo.switches}
    node_host = {n: host_of_node(topo, n) for n in node_names}
    hosts = list(
        dict.fromkeys([h.name for h in topo.hosts] + list(node_host.values()) + list(switch_host.values()))
    )
    host_site = {h: site_of(topo, h) for h in hosts}
    node_ns = {n: f"{prefix}-n-{n}" for n in node_names}
    host_ns = {h: f"{prefix}-h-{h}" for h in hosts}
    namespaces = {ns: f"node:{n}" for n, ns in node_ns.items()}
    namespaces.update({ns: f"host:{h}" for h, ns in host_ns.items()})

    switch_kind = {s.name: s.kind for s in topo.switches}
    bridges = [
        Bridge(host_ns[switch_host[s.name]], f"sw{i}", s.kind, 1500, s.name)
        for i, s in enumerate(topo.switches)
    ]
    switch_bridge = {b.label: b for b in bridges}

    segments, link_segment = l2_segments(topo)
    node_if_count: dict[str, int] = defaultdict(int)
    veths: list[VethPair] = []
    vxlans: list[Vxlan] = []
    underlay: dict[str, str] = {}  # host -> underlay IP, assigned on first use

    def node_iface(node: str, link: Link, seg: Segment, ovs_peer: bool) -> Interface:
        ifname = f"eth{node_if_count[node]}"
        node_if_count[node] += 1
        seg.ifnames[node] = ifname
        return Interface(
            node_ns[node],
            ifname,
            link.mtu,
            address=f"{seg.addresses[node]}/24",
            shaper=_shaper(link),
            netem=_netem(link),
            tx_offload_off=ovs_peer,
        )

    def end_host(end: str) -> str:
        return node_host[end] if end in node_host else switch_host[end]

    def uplink_ip(host: str) -> str:
        if host not in underlay:
            underlay[host] = str(UNDERLAY_NET.network_address + len(underlay) + 1)
        return underlay[host]

    for k, link in enumerate(topo.links):
        a, b = link.endpoints
        seg = link_segment[k]
        if a in node_ns and b in node_ns and node_host[a] == node_host[b]:
            veths.append(VethPair(node_iface(a, link, seg, False), node_iface(b, link, seg, False)))
            continue
        if end_host(a) == end_host(b):
            ns = host_ns[end_host(a)]
            if a in node_ns or b in node_ns:  # node–switch on one host
                node, switch = (a, b) if a in node_ns else (b, a)
                ovs = switch_kind[switch] == "ovs"
                port = Interface(
                    ns,
                    f"p{node_names.index(node)}x{node_if_count[node]}",
                    link.mtu,
                    master=switch_bridge[switch].name,
                    shaper=_shaper(link),
                    netem=_netem(link),
                    tx_offload_off=ovs,
                )
                veths.append(VethPair(node_iface(node, link, seg, ovs), port))
            else:  # switch–switch on one host
                ovs = "ovs" in (switch_kind[a], switch_kind[b])
                veths.append(
                    VethPair(
                        Interface(
                            ns,
                            f"s{k}a",
                            link.mtu,
                            master=switch_bridge[a].name,
                            shaper=_shaper(link),
                            netem=_netem(link),
                            tx_offload_off=ovs,
                        ),
                        Interface(
                            ns,
                            f"s{k}b",
                            link.mtu,
                            master=switch_bridge[b].name,
                            shaper=_shaper(link),
                            netem=_netem(link),
                            tx_offload_off=ovs,
                        ),
                    )
                )
            continue

        # Different hosts: attach each end locally, then join the two hosts by a wire or a tunnel.
        local_master: dict[str, str] = {}
        end_is_switch: dict[str, bool] = {}
        for end in (a, b):
            ns = host_ns[end_host(end)]
            if end in node_ns:
                lb = f"lb{k}"
                bridges.append(Bridge(ns, lb, "linux-bridge", link.mtu, link.label))
                port = Interface(ns, f"p{node_names.index(end)}x{node_if_count[end]}", link.mtu, master=lb)
                veths.append(VethPair(node_iface(end, link, seg, False), port))
                local_master[end], end_is_switch[end] = lb, False
            else:
                local_master[end], end_is_switch[end] = switch_bridge[end].name, True
        # A node end is already shaped at the node; a switch end is shaped where the link leaves its host.
        shaper_at = {end: (_shaper(link) if end_is_switch[end] else None) for end in (a, b)}
        netem_at = {end: (_netem(link) if end_is_switch[end] else None) for end in (a, b)}
        ovs_at = {end: end_is_switch[end] and switch_kind[end] == "ovs" for end in (a, b)}
        if link.overlay == "vxlan":
            for end, peer in ((a, b), (b, a)):
                host = end_host(end)
                vxlans.append(
                    Vxlan(
                        Interface(
                            host_ns[host],
                            f"vx{k}",
                            link.mtu,
                            master=local_master[end],
                            shaper=shaper_at[end],
                            netem=netem_at[end],
                        ),
                        vni=k + 1,
                        local=uplink_ip(host),
                        remote=uplink_ip(end_host(peer)),
                        underlay_dev="up0",
                    )
                )
        else:
            veths.append(
                VethPair(
                    Interface(
                        host_ns[end_host(a)],
                        f"w{k}",
                        link.mtu,
                        master=local_master[a],
                        shaper=shaper_at[a],
                        netem=netem_at[a],
                        tx_offload_off=ovs_at[a],
                    ),
                    Interface(
                        host_ns[end_host(b)],
                        f"w{k}",
                        link.mtu,
                        master=local_master[b],
                        shaper=shaper_at[b],
                        netem=netem_at[b],
                        tx_offload_off=ovs_at[b],
                    ),
                )
            )

    if underlay:
        wan = f"{prefix}-wan"
        namespaces[wan] = "wan"
        bridges.append(Bridge(wan, "wan0", "linux-bridge", UNDERLAY_MTU, "underlay"))
        for i, (host, ip) in enumerate(underlay.items()):
            veths.append(
                VethPair(
                    Interface(host_ns[host], "up0", UNDERLAY_MTU, address=f"{ip}/{UNDERLAY_NET.prefixlen}"),
                    Interface(wan, f"h{i}", UNDERLAY_MTU, master="wan0"),
                )
            )

    cpu_quota = {f"host:{h.name}": h.cpu for h in topo.hosts if h.cpu}
    cpu_quota.update({f"node:{n.name}": n.cpu for n in topo.nodes if n.cpu})
    bridges = [_with_mtu(br, topo.links, switch_bridge) for br in bridges]
    return Layout(
        campaign_id,
        prefix,
        namespaces,
        bridges,
        veths,
        vxlans,
        segments,
        node_ns,
        host_ns,
        node_host,
        host_site,
        cpu_quota,
        list(topo.links),
    )


def _with_mtu(bridge: Bridge, links: list[Link], switch_bridge: dict[str, Bridge]) -> Bridge:
    """A switch takes the largest MTU of its links (the kernel would clamp to the smallest port)."""
    if bridge.label not in switch_bridge:
        return bridge
    mtus = [link.mtu for link in links if bridge.label in link.endpoints]
    return Bridge(bridge.ns, bridge.name, bridge.kind, max(mtus, default=1500), bridge.label)


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
                    raise LayoutError(("topology", "links"), f"segment {seg.label} has more than 254 nodes")
                seg.addresses[node] = str(ipaddress.ip_network(seg.subnet).network_address + host_index)
    return segments, of_link
