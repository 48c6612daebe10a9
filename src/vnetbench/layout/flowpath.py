"""The path of a flow through the layout: every interface, queue and bridge a packet crosses, in order.

Pure data from the layout (no kernel access). A packet from node A to node B leaves A's interface
(tx, through its shaper if any), arrives at the veth peer (rx); if that peer is a bridge port, the
bridge forwards it out of another port (tx, through that port's shaper), and so on until B's
interface receives it. A VXLAN device hands the packet to its host's underlay (up0), which crosses
the `wan` bridge to the remote host, whose VXLAN device delivers it to its bridge.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, Literal

from vnetbench.layout.objects import Interface, Layout

Direction = Literal["tx", "rx", "fwd"]  # fwd: a bridge, an OVS switch or a delay node


@dataclass(frozen=True)
class Hop:
    ns: str
    name: str  # interface, or bridge for a "fwd" hop
    direction: Direction
    kind: str  # veth | vxlan | linux-bridge | ovs
    where: str  # the namespace's role: node:vm1, host:h1, wan
    shaper: str | None = None  # tbf | htb on a tx hop that is shaped
    master: str | None = None  # the bridge an interface is a port of

    @property
    def label(self) -> str:
        return f"{self.where}/{self.name}"

    @property
    def key(self) -> str:
        return f"{self.ns}/{self.name}/{self.direction}"


@dataclass
class FlowPath:
    src: str
    dst: str
    src_ns: str
    dst_ns: str
    mtu: int
    hops: list[Hop] = field(default_factory=list)
    # Set when flows run together: counters another flow of the step also moves cannot be split
    # between them (hop keys "NS/NAME/DIRECTION"; "src"/"dst" for a namespace's SNMP counters).
    shared: list[str] = field(default_factory=list)

    @property
    def namespaces(self) -> list[str]:
        return list(dict.fromkeys([self.src_ns, *(h.ns for h in self.hops), self.dst_ns]))

    def to_json(self) -> dict[str, Any]:
        return {
            "src": self.src,
            "dst": self.dst,
            "src_ns": self.src_ns,
            "dst_ns": self.dst_ns,
            "mtu": self.mtu,
            "hops": [asdict(h) for h in self.hops],
            "shared": list(self.shared),
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> FlowPath:
        hops = [Hop(**h) for h in data.get("hops", [])]
        return cls(
            data["src"],
            data["dst"],
            data["src_ns"],
            data["dst_ns"],
            int(data["mtu"]),
            hops,
            data.get("shared", []),
        )


def mark_shared(paths: list[FlowPath]) -> None:
    """Flows started together: mark the hops and end namespaces each one shares with another."""
    for path in paths:
        others = [p for p in paths if p is not path]
        keys = {h.key for p in others for h in p.hops}
        path.shared = [h.key for h in path.hops if h.key in keys]
        ends = {p.src_ns for p in others} | {p.dst_ns for p in others}
        path.shared += [end for end, ns in (("src", path.src_ns), ("dst", path.dst_ns)) if ns in ends]


class _Graph:
    def __init__(self, layout: Layout) -> None:
        self.layout = layout
        self.iface: dict[tuple[str, str], Interface] = {}
        self.peer: dict[tuple[str, str], tuple[str, str]] = {}
        self.kind: dict[tuple[str, str], str] = {}
        for pair in layout.veths:
            a, b = (pair.a.ns, pair.a.name), (pair.b.ns, pair.b.name)
            self.iface[a], self.iface[b] = pair.a, pair.b
            self.peer[a], self.peer[b] = b, a
            self.kind[a] = self.kind[b] = "veth"
        self.vxlan_remote: dict[tuple[str, str], tuple[str, str]] = {}
        for vx in layout.vxlans:
            key = (vx.iface.ns, vx.iface.name)
            self.iface[key], self.kind[key] = vx.iface, "vxlan"
            for other in layout.vxlans:
                if other.vni == vx.vni and other.iface.ns != vx.iface.ns:
                    self.vxlan_remote[key] = (other.iface.ns, other.iface.name)
        self.bridge_kind = {(b.ns, b.name): b.kind for b in layout.bridges}
        # a delay node (vnb-probe delay) forwards between its two interfaces like a two-port switch
        self.delay_across: dict[tuple[str, str], tuple[str, str]] = {}
        for node in layout.delay_nodes:
            self.delay_across[(node.ns, node.a)] = (node.ns, node.b)
            self.delay_across[(node.ns, node.b)] = (node.ns, node.a)

    def hop(self, key: tuple[str, str], direction: Direction) -> Hop:
        iface = self.iface[key]
        shaper = None
        if direction == "tx" and iface.shaper:
            # "tbf, network shaping": the sender never hears of its drops; "tbf": back-pressure
            network = iface.shaper.placement == "network"
            shaper = iface.shaper.kind + (", network shaping" if network else "")
        return Hop(
            key[0], key[1], direction, self.kind[key], self.layout.namespaces[key[0]], shaper, iface.master
        )

    def ports(self, ns: str, bridge: str) -> list[tuple[str, str]]:
        return [k for k, i in self.iface.items() if k[0] == ns and i.master == bridge]

    def walk(
        self, out: tuple[str, str], target: tuple[str, str], seen: set[tuple[str, str]]
    ) -> list[Hop] | None:
        """Hops from sending on `out` until `target` receives, or None if it is not reachable that way."""
        if out in seen:
            return None
        seen.add(out)
        if self.kind[out] == "vxlan":
            remote = self.vxlan_remote.get(out)
            if remote is None:
                return None
            underlay = (
                self.walk((out[0], "up0"), (remote[0], "up0"), seen) if (out[0], "up0") in self.iface else []
            )
            if underlay is None:
                return None
            arrived = remote
            hops = [self.hop(out, "tx"), *underlay, self.hop(remote, "rx")]
        else:
            arrived = self.peer[out]
            hops = [self.hop(out, "tx"), self.hop(arrived, "rx")]
        if arrived == target:
            return hops
        if arrived in self.delay_across:
            ns = arrived[0]
            fwd = Hop(ns, "delay-node", "fwd", "delay-node", self.layout.namespaces[ns])
            rest = self.walk(self.delay_across[arrived], target, seen)
            return None if rest is None else [*hops, fwd, *rest]
        master = self.iface[arrived].master
        if master is None:
            return None
        ns = arrived[0]
        fwd = Hop(
            ns, master, "fwd", self.bridge_kind.get((ns, master), "linux-bridge"), self.layout.namespaces[ns]
        )
        for port in self.ports(ns, master):
            if port == arrived:
                continue
            rest = self.walk(port, target, seen)
            if rest is not None:
                return [*hops, fwd, *rest]
        return None


def flow_path(layout: Layout, src: str, dst: str) -> FlowPath:
    """The hops of a packet from node src to node dst (empty hops if they share no segment)."""
    src_ns, dst_ns = layout.node_ns[src], layout.node_ns[dst]
    path = FlowPath(src, dst, src_ns, dst_ns, layout.path_mtu(src, dst))
    seg = layout.shared_segment(src, dst)
    if seg is None:
        return path
    graph = _Graph(layout)
    hops = graph.walk((src_ns, seg.ifnames[src]), (dst_ns, seg.ifnames[dst]), set())
    path.hops = hops or []
    return path
