"""`shaping: network` — a link's shaper the sender never hears from, as in a network.

A qdisc on an interface is charged to the socket that sent each skb: with the shaper as the root
qdisc of the sending node's own interface and nothing else (`shaping: sender`), a UDP socket blocks
once the queue holds as much as its send buffer, and overload becomes back-pressure instead of loss.
Measured (docs/fidelity-notes.md): the skb keeps its owner across veths and into an ingress IFB, so
shaping "at the far end" does not help by itself; but `act_mirred` redirecting at *egress* sends a
clone (no owner) and consumes the original at once. So for a network-shaped interface IF:

    IF:  the link's tbf/htb (and netem) as its root qdisc, as with `shaping: sender`;
         clsact; egress filter u32 (match all) -> mirred egress redirect to qIF
    qIF: an IFB relay in the same namespace, with a long transmit queue and no shaper

Every frame leaves the sender's socket at once (as a clone) into the IFB, which hands it straight
back to IF past the filter; IF's root qdisc then shapes, queues and drops as a network would. The
IFB never drops (its queue holds TXQUEUE_FRAMES): were it to, mirred would report the failed
redirect and the sender's socket would get ENOBUFS — a signal a network does not give (a TCP sender
takes it as local congestion and backs off at once). The shaper's counters stay on IF.

Where IF forwards frames (a bridge port, a wire: not a node's own interface), the frames still
queued before the shaper crossed this CPU's shared input backlog (netdev_max_backlog), and so
would the shaper's output on IF's peer. When senders overload the host, the backlog is full of
frames the shaper will drop and the few it passes are dropped at the peer: measured, two tenants
at 55 K packets/s each into a 60 K packets/s link between two bridges delivered 3 K packets/s in
all. A network keeps what left a shaper apart from what has yet to reach it; here the peer takes
the shaper's output into a receive queue of its own (veth NAPI: GRO on, and TSO off on IF,
without which veth hands forwarded frames to the backlog), and the same overload delivers the
link's 60 K. A peer that is a node's own interface aggregates TCP segments as a VM's NIC with GRO
does (its stack is the only reader; half the CPU per Gbit of TCP with aggregation off, measured in
benchmarks/fidelity/receive_queue_cpu.py); a peer that forwards again (a bridge port, a wire)
gets a GRO size of 0, so frames go on one by one as they came. Peers that userspace reads with a
packet socket (userspace OVS ports, delay nodes) are left as they are.
Pure data: netlink Ops and interface choices from a layout.
"""

from __future__ import annotations

import socket

from pyroute2.netlink.rtnl import TC_H_CLSACT, TC_H_ROOT

from vnetbench.layout import Interface, Layout
from vnetbench.providers.local.netlink import Op, link_up, qdisc_op

CLSACT_HANDLE = 0xFFFF0000
EGRESS_PARENT = 0xFFFFFFF3  # TC_H_MAKE(TC_H_CLSACT, TC_H_MIN_EGRESS)
ETH_P_ALL = 0x0003
FILTER_PRIO = 1
TCA_MIRRED_EGRESS_REDIRECT = 1
TC_ACT_STOLEN = 4
TC_U32_TERMINAL = 1
TXQUEUE_FRAMES = 10_000  # the relay's own queue: only frames between redirect and re-send sit there
RELAY_QDISC_HANDLE = 0x00010000  # 1:


def ifb_name(iface: Interface) -> str:
    """The IFB relay of iface's network shaping ("q" + the name: no layout name starts with q)."""
    return f"q{iface.name}"


def is_network_shaped(iface: Interface) -> bool:
    return iface.shaper is not None and iface.shaper.placement == "network"


def ifb_op(iface: Interface, ifb_index: int) -> Op:
    """Create the IFB relay (down, the link's MTU, a long transmit queue) in iface's namespace."""
    return Op(
        f"create ifb {ifb_name(iface)} (shaper of {iface.name}) in {iface.ns}",
        "link",
        ifb_index,
        create=True,
        attrs=[
            ["IFLA_IFNAME", ifb_name(iface)],
            ["IFLA_MTU", iface.mtu],
            ["IFLA_TXQLEN", TXQUEUE_FRAMES],
            ["IFLA_LINKINFO", {"attrs": [["IFLA_INFO_KIND", "ifb"]]}],
        ],
    )


def relay_ops(iface: Interface, ifb_index: int) -> list[Op]:
    """The relay's root qdisc, a pfifo as long as its transmit queue, then the relay up.

    Brought up without one, it would get the default pfifo_fast, whose three rings are allocated
    (and zeroed) at the queue's full length: ~400 KiB of kernel memory per relay at 10,000 frames
    (measured; 0.8 GB at 1,000 nodes). A pfifo holds the same frames in a list: ~15 KiB."""
    name = ifb_name(iface)
    return [
        qdisc_op(
            f"pfifo {TXQUEUE_FRAMES} frames on {name} in {iface.ns}",
            ifb_index,
            RELAY_QDISC_HANDLE,
            TC_H_ROOT,
            "pfifo",
            {"limit": TXQUEUE_FRAMES},
        ),
        link_up(ifb_index, f"{name} up in {iface.ns}"),
    ]


def redirect_ops(iface: Interface, index: int, ifb_index: int) -> list[Op]:
    """clsact on iface and the egress filter that redirects a clone of every frame to its IFB."""
    where = f"{iface.name} in {iface.ns}"
    mirred = {
        "attrs": [
            [
                "TCA_MIRRED_PARMS",
                {"eaction": TCA_MIRRED_EGRESS_REDIRECT, "action": TC_ACT_STOLEN, "ifindex": ifb_index},
            ]
        ]
    }
    action = {"attrs": [["TCA_ACT_KIND", "mirred"], ["TCA_ACT_OPTIONS", mirred]]}
    u32 = {
        "attrs": [
            ["TCA_U32_ACT", {"attrs": [["TCA_ACT_PRIO_1", action]]}],
            ["TCA_U32_SEL", {"flags": TC_U32_TERMINAL, "keys": ["0x0/0x0+0"]}],
        ]
    }
    return [
        qdisc_op(f"clsact on {where}", index, CLSACT_HANDLE, TC_H_CLSACT, "clsact"),
        Op(
            f"egress redirect {where} -> {ifb_name(iface)}",
            "filter",
            index,
            create=True,
            fields={"parent": EGRESS_PARENT, "info": socket.htons(ETH_P_ALL) | FILTER_PRIO << 16},
            attrs=[["TCA_KIND", "u32"], ["TCA_OPTIONS", u32]],
        ),
    ]


def own_receive_queue(layout: Layout) -> list[tuple[Interface, Interface]]:
    """(network-shaped end, its peer) of the veths whose peer takes the shaper's output into a
    receive queue of its own instead of the CPU's shared backlog (see the module's docstring)."""
    ovs = {(br.ns, br.name) for br in layout.bridges if br.kind == "ovs"}
    packet_socket = {(d.ns, name) for d in layout.delay_nodes for name in (d.a, d.b)}
    out = []
    for pair in layout.veths:
        for end, peer in ((pair.a, pair.b), (pair.b, pair.a)):
            if not is_network_shaped(end) or layout.namespaces.get(end.ns, "").startswith("node:"):
                continue  # a node's own frames meet the shaper before any backlog
            if (peer.ns, peer.master) in ovs or (peer.ns, peer.name) in packet_socket:
                continue
            out.append((end, peer))
    return out


def aggregates(layout: Layout, peer: Interface) -> bool:
    """Whether a chosen peer merges TCP segments (GRO's default size): only a node's own interface,
    whose stack is the only reader. A peer that forwards keeps frames as they came."""
    return layout.namespaces.get(peer.ns, "").startswith("node:")


def no_aggregation_op(peer: Interface, index: int) -> Op:
    """GRO size 0 on a chosen peer that forwards: frames go on one by one, as they came (GRO's
    merged frames would otherwise reach a packet socket downstream, which cannot read them)."""
    return Op(
        f"{peer.name}: GRO size 0 (no aggregation) in {peer.ns}",
        "link",
        index,
        attrs=[["IFLA_GRO_MAX_SIZE", 0]],
    )
