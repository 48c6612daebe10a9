"""Lay out a validated campaign's topology: every namespace, veth, bridge, VXLAN and shaper, by name.

`build_layout(campaign, campaign_id)` decides every name, address, interface and shaper, so a build
can be tested without root, recorded in the store before anything is created, and shared by every
provider. How each kind of link is realised is described in `layout/__init__.py`.
"""

from __future__ import annotations

import itertools
import math
from collections import defaultdict

from vnetbench.layout.objects import (
    DEFAULT_HOST,
    DEFAULT_SITE,
    UNDERLAY_MTU,
    Bridge,
    Interface,
    Layout,
    Netem,
    Shaper,
    VethPair,
    Vxlan,
)
from vnetbench.spec.models import Campaign, Link, Topology
from vnetbench.spec.segments import UNDERLAY_NET, Segment, l2_segments


def site_of(topology: Topology, host: str) -> str:
    """The site of a host (the first site by default)."""
    for h in topology.hosts:
        if h.name == host:
            return h.site or (topology.sites[0].name if topology.sites else DEFAULT_SITE)
    return topology.sites[0].name if topology.sites else DEFAULT_SITE


def host_of_node(topology: Topology, node: str) -> str:
    """The host a node runs on (the first host by default)."""
    for n in topology.nodes:
        if n.name == node:
            return n.host or (topology.hosts[0].name if topology.hosts else DEFAULT_HOST)
    raise KeyError(node)


def host_of_switch(topology: Topology, switch: str) -> str:
    """The host a switch runs on (the first host by default)."""
    for s in topology.switches:
        if s.name == switch:
            return s.host or (topology.hosts[0].name if topology.hosts else DEFAULT_HOST)
    raise KeyError(switch)


NETWORK_BURST_MS = 8
NETWORK_QUEUE_BYTES = 125_000  # ~80 full frames: fair to 3 cubic flows at 20 and 100 mbit (fidelity-notes)


def link_shaper(link: Link) -> Shaper | None:
    """The shaper of each direction of a link (None: the link has no rate)."""
    frame = link.mtu + 14
    if link.pps and not link.rate:
        link = link.model_copy(update={"rate": link.pps * frame * 8})
    if not link.rate:
        return None
    bytes_per_s = link.rate / 8
    # Burst: at least two frames and BURST_MS at rate, so the token bucket is not starved by timer
    # granularity at high rates. With network shaping nothing slows the sender when the qdisc's
    # timer fires late on a busy machine, so a 1 ms bucket lost capacity for good (TCP alone
    # 99.2-99.6 % of the model at 20 mbit, load average 7); 4 ms: 99.85-99.99 %; beside a busy core
    # 4 ms still lost 3 of 24 TCP runs below 98 %, 8 ms none (fidelity-notes section 7).
    burst_ms = NETWORK_BURST_MS if link.shaping == "network" else 1
    burst = max(2 * frame, int(bytes_per_s * burst_ms / 1000))
    per_packet = math.ceil(bytes_per_s / link.pps) if link.pps else 0
    queue = link.queue or default_queue(link)
    if per_packet:  # the queue and burst are in charged bytes: scale them to whole charged frames
        burst = max(burst, 2 * per_packet)
        queue = max(queue, 4 * per_packet)
    return Shaper(link.shaper, link.rate, queue, burst, link.shaping, per_packet)


def default_queue(link: Link) -> int:
    """The shaper's queue limit in bytes when the link does not set `queue`.

    sender: 50 ms at rate. network: the link's own bandwidth-delay product (2 × (delay + jitter)),
    at least min(125 KB, 50 ms at rate) — a FIFO that short keeps three cubic flows within 25–42 %
    each (Jain ≥ 0.95) at 20 and 100 mbit, where a 50 ms queue at 100 mbit did not
    (docs/fidelity-notes.md). At least 4 frames either way.
    """
    assert link.rate
    bytes_per_s = link.rate / 8
    frame = link.mtu + 14
    if link.shaping == "sender":
        return max(int(bytes_per_s * 0.05), 4 * frame)
    one_way_ns = (link.delay or 0) + (link.jitter or 0)
    if link.delay_cdf:  # its median: a tail draw is not the path's usual RTT
        one_way_ns = max(one_way_ns, _cdf_median_ns(link.delay_cdf))
    bdp = int(bytes_per_s * 2 * one_way_ns / 1e9)
    return max(bdp, min(NETWORK_QUEUE_BYTES, int(bytes_per_s * 0.05)), 4 * frame)


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
        link.delay_hold,
    )


def link_one_way_ns(link: Link) -> int:
    """The longest one-way delay a link's frames usually see: delay + jitter, or its delay CDF's top."""
    if link.delay_cdf:
        return max(d for _, d in link.delay_cdf)
    return (link.delay or 0) + (link.jitter or 0)


def _cdf_median_ns(points: tuple[tuple[float, int], ...]) -> int:
    for (p0, d0), (p1, d1) in itertools.pairwise(points):
        if p1 >= 0.5:
            return int(d0 + (0.5 - p0) / (p1 - p0) * (d1 - d0))
    return points[-1][1]


def build_layout(campaign: Campaign, campaign_id: str) -> Layout:
    """Lay out the campaign's topology. Assumes references were checked (spec/references.py)."""
    return _Builder(campaign.topology, campaign_id).layout()


class _Builder:
    """One topology's layout, link by link (the order of links decides interface names and addresses)."""

    def __init__(self, topo: Topology, campaign_id: str) -> None:
        self.topo = topo
        self.campaign_id = campaign_id
        self.prefix = prefix = f"vnb{campaign_id}"
        self.node_names = [n.name for n in topo.nodes]
        self.switch_host = {s.name: host_of_switch(topo, s.name) for s in topo.switches}
        self.node_host = {n: host_of_node(topo, n) for n in self.node_names}
        hosts = [h.name for h in topo.hosts] + list(self.node_host.values()) + list(self.switch_host.values())
        self.host_site = {h: site_of(topo, h) for h in dict.fromkeys(hosts)}
        self.node_ns = {n: f"{prefix}-n-{n}" for n in self.node_names}
        self.host_ns = {h: f"{prefix}-h-{h}" for h in self.host_site}
        self.namespaces = {ns: f"node:{n}" for n, ns in self.node_ns.items()}
        self.namespaces.update({ns: f"host:{h}" for h, ns in self.host_ns.items()})
        self.switch_kind = {s.name: s.kind for s in topo.switches}
        self.bridges = [
            Bridge(self.host_ns[self.switch_host[s.name]], f"sw{i}", s.kind, 1500, s.name)
            for i, s in enumerate(topo.switches)
        ]
        self.switch_bridge = {b.label: b for b in self.bridges}
        self.segments, self.link_segment = l2_segments(topo)
        self.node_if_count: dict[str, int] = defaultdict(int)
        self.veths: list[VethPair] = []
        self.vxlans: list[Vxlan] = []
        self.underlay: dict[str, str] = {}  # host -> underlay IP, assigned on first use

    def layout(self) -> Layout:
        for k, link in enumerate(self.topo.links):
            a, b = link.endpoints
            if self.end_host(a) == self.end_host(b):
                self.link_on_one_host(k, link, self.link_segment[k])
            else:
                self.link_between_hosts(k, link, self.link_segment[k])
        if self.underlay:
            self.add_underlay()
        topo = self.topo
        cpu_quota = {f"host:{h.name}": h.cpu for h in topo.hosts if h.cpu}
        cpu_quota.update({f"node:{n.name}": n.cpu for n in topo.nodes if n.cpu})
        return Layout(
            campaign_id=self.campaign_id,
            prefix=self.prefix,
            namespaces=self.namespaces,
            bridges=[_with_mtu(br, topo.links, self.switch_bridge) for br in self.bridges],
            veths=self.veths,
            vxlans=self.vxlans,
            segments=self.segments,
            node_ns=self.node_ns,
            host_ns=self.host_ns,
            node_host=self.node_host,
            host_site=self.host_site,
            cpu_quota=cpu_quota,
            links=list(topo.links),
        )

    def end_host(self, end: str) -> str:
        return self.node_host[end] if end in self.node_host else self.switch_host[end]

    def node_iface(self, node: str, link: Link, seg: Segment, ovs_peer: bool) -> Interface:
        ifname = f"eth{self.node_if_count[node]}"
        self.node_if_count[node] += 1
        seg.ifnames[node] = ifname
        return Interface(
            self.node_ns[node],
            ifname,
            link.mtu,
            address=f"{seg.addresses[node]}/24",
            shaper=link_shaper(link),
            netem=_netem(link),
            tx_offload_off=ovs_peer,
        )

    def port(self, ns: str, name: str, link: Link, master: str, ovs: bool) -> Interface:
        """A bridge port that shapes (and delays) what the bridge sends down this link."""
        shaper, netem = link_shaper(link), _netem(link)
        return Interface(ns, name, link.mtu, master=master, shaper=shaper, netem=netem, tx_offload_off=ovs)

    def link_on_one_host(self, k: int, link: Link, seg: Segment) -> None:
        a, b = link.endpoints
        node_ns, switch_kind, switch_bridge = self.node_ns, self.switch_kind, self.switch_bridge
        if a in node_ns and b in node_ns:  # node–node: one veth straight between them
            self.veths.append(
                VethPair(self.node_iface(a, link, seg, False), self.node_iface(b, link, seg, False))
            )
            return
        ns = self.host_ns[self.end_host(a)]
        if a in node_ns or b in node_ns:  # node–switch
            node, switch = (a, b) if a in node_ns else (b, a)
            ovs = switch_kind[switch] == "ovs"
            name = f"p{self.node_names.index(node)}x{self.node_if_count[node]}"
            port = self.port(ns, name, link, switch_bridge[switch].name, ovs)
            self.veths.append(VethPair(self.node_iface(node, link, seg, ovs), port))
            return
        ovs = "ovs" in (switch_kind[a], switch_kind[b])  # switch–switch
        self.veths.append(
            VethPair(
                self.port(ns, f"s{k}a", link, switch_bridge[a].name, ovs),
                self.port(ns, f"s{k}b", link, switch_bridge[b].name, ovs),
            )
        )

    def link_between_hosts(self, k: int, link: Link, seg: Segment) -> None:
        """Attach each end locally, then join the two hosts by a wire (veth) or a VXLAN tunnel."""
        a, b = link.endpoints
        local_master: dict[str, str] = {}
        is_switch: dict[str, bool] = {}
        for end in (a, b):
            ns = self.host_ns[self.end_host(end)]
            if end in self.node_ns:
                lb = f"lb{k}"
                self.bridges.append(Bridge(ns, lb, "linux-bridge", link.mtu, link.label))
                name = f"p{self.node_names.index(end)}x{self.node_if_count[end]}"
                port = Interface(ns, name, link.mtu, master=lb)
                self.veths.append(VethPair(self.node_iface(end, link, seg, False), port))
                local_master[end], is_switch[end] = lb, False
            else:
                local_master[end], is_switch[end] = self.switch_bridge[end].name, True
        # A node end is already shaped at the node; a switch end is shaped where the link leaves its host.
        shaper_at = {end: (link_shaper(link) if is_switch[end] else None) for end in (a, b)}
        netem_at = {end: (_netem(link) if is_switch[end] else None) for end in (a, b)}
        ovs_at = {end: is_switch[end] and self.switch_kind[end] == "ovs" for end in (a, b)}
        if link.overlay == "vxlan":
            for end, peer in ((a, b), (b, a)):
                host = self.end_host(end)
                iface = Interface(
                    self.host_ns[host],
                    f"vx{k}",
                    link.mtu,
                    master=local_master[end],
                    shaper=shaper_at[end],
                    netem=netem_at[end],
                )
                local = self.uplink_ip(host)  # before the peer's: underlay addresses go in link order
                remote = self.uplink_ip(self.end_host(peer))
                self.vxlans.append(Vxlan(iface, k + 1, local, remote, "up0"))
            return
        wire = [
            Interface(
                self.host_ns[self.end_host(end)],
                f"w{k}",
                link.mtu,
                master=local_master[end],
                shaper=shaper_at[end],
                netem=netem_at[end],
                tx_offload_off=ovs_at[end],
            )
            for end in (a, b)
        ]
        self.veths.append(VethPair(wire[0], wire[1]))

    def uplink_ip(self, host: str) -> str:
        if host not in self.underlay:
            self.underlay[host] = str(UNDERLAY_NET.network_address + len(self.underlay) + 1)
        return self.underlay[host]

    def add_underlay(self) -> None:
        """The `wan` namespace: one bridge joining every host's uplink (up0) that carries VXLAN."""
        wan = f"{self.prefix}-wan"
        self.namespaces[wan] = "wan"
        self.bridges.append(Bridge(wan, "wan0", "linux-bridge", UNDERLAY_MTU, "underlay"))
        for i, (host, ip) in enumerate(self.underlay.items()):
            self.veths.append(
                VethPair(
                    Interface(
                        self.host_ns[host], "up0", UNDERLAY_MTU, address=f"{ip}/{UNDERLAY_NET.prefixlen}"
                    ),
                    Interface(wan, f"h{i}", UNDERLAY_MTU, master="wan0"),
                )
            )


def _with_mtu(bridge: Bridge, links: list[Link], switch_bridge: dict[str, Bridge]) -> Bridge:
    """A switch takes the largest MTU of its links (the kernel would clamp to the smallest port)."""
    if bridge.label not in switch_bridge:
        return bridge
    mtus = [link.mtu for link in links if bridge.label in link.endpoints]
    return Bridge(bridge.ns, bridge.name, bridge.kind, max(mtus, default=1500), bridge.label)
