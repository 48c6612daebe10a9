"""From a Layout to the rtnetlink requests of each namespace, in two rounds — pure, no kernel access.

Every interface gets its index decided here (per namespace, 2, 3, ... in layout order; `lo` is 1),
so no request ever has to look an interface up.

Round 1, per namespace: `lo` up; Linux bridges (up); the veth pairs created from this namespace,
both ends placed straight into their namespaces, with MTU; the end created here also up and with
its master. A pair is created from the namespace of the end that has a Linux-bridge master (so the
master is set in the same request), else from end a.
Round 2, per namespace (every device of round 1 exists by then): VXLAN devices over the underlay,
peer ends up (and their masters), addresses, qdiscs.
"""

from __future__ import annotations

import ipaddress
import socket
from collections import defaultdict
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from vnetbench.layout import Bridge, Interface, Layout, VethPair, Vxlan
from vnetbench.providers.local import netshaping
from vnetbench.providers.local.netlink import IFF_UP, Op, link_up
from vnetbench.providers.local.shaping import qdisc_ops

VXLAN_PORT = 4789


@dataclass
class NsRequests:
    ns: str
    round1: list[Op] = field(default_factory=list)
    round2: list[Op] = field(default_factory=list)


def assign_indexes(layout: Layout) -> dict[tuple[str, str], int]:
    """(namespace, interface name) -> ifindex, for every device the layout creates by netlink."""
    next_index: dict[str, int] = defaultdict(lambda: 2)
    out: dict[tuple[str, str], int] = {}

    def take(ns: str, name: str) -> None:
        if (ns, name) in out:
            raise ValueError(f"interface {name} appears twice in namespace {ns}")
        out[(ns, name)] = next_index[ns]
        next_index[ns] += 1

    for br in layout.bridges:
        if br.kind == "linux-bridge":
            take(br.ns, br.name)
    for pair in layout.veths:
        take(pair.a.ns, pair.a.name)
        take(pair.b.ns, pair.b.name)
    for vx in layout.vxlans:
        take(vx.iface.ns, vx.iface.name)
    for iface in layout.interfaces():
        if netshaping.is_network_shaped(iface):
            take(iface.ns, netshaping.ifb_name(iface))
    return out


def linux_masters(layout: Layout) -> set[tuple[str, str]]:
    """(namespace, name) of every Linux bridge: the masters netlink can enslave to."""
    return {(br.ns, br.name) for br in layout.bridges if br.kind == "linux-bridge"}


def creator_end(pair: VethPair, masters: set[tuple[str, str]]) -> tuple[Interface, Interface]:
    """(the end created by the request, its peer): the end with a Linux-bridge master if any."""
    a_master = pair.a.master is not None and (pair.a.ns, pair.a.master) in masters
    b_master = pair.b.master is not None and (pair.b.ns, pair.b.master) in masters
    if b_master and not a_master:
        return pair.b, pair.a
    return pair.a, pair.b


def _up() -> dict[str, int]:
    return {"flags": IFF_UP, "change": IFF_UP}


def _linkinfo(kind: str, data: list[Any] | None = None) -> list[Any]:
    info: list[Any] = [["IFLA_INFO_KIND", kind]]
    if data:
        info.append(["IFLA_INFO_DATA", {"attrs": data}])
    return ["IFLA_LINKINFO", {"attrs": info}]


def plan_requests(layout: Layout, ns_fd: Mapping[str, int]) -> dict[str, NsRequests]:
    """The requests of every namespace; ns_fd gives each namespace's open fd (IFLA_NET_NS_FD)."""
    index = assign_indexes(layout)
    masters = linux_masters(layout)
    plans = {ns: NsRequests(ns) for ns in layout.namespaces}
    for ns in layout.namespaces:
        plans[ns].round1.append(link_up(1, f"lo up in {ns}"))
    for br in layout.bridges:
        if br.kind == "linux-bridge":
            plans[br.ns].round1.append(_bridge_op(br, index))
    for pair in layout.veths:
        main, peer = creator_end(pair, masters)
        plans[main.ns].round1.append(_veth_op(main, peer, index, masters, ns_fd))
        # The peer cannot be brought up in the creating request (the kernel has not paired the two
        # ends yet when it configures the peer: ENOTCONN); round 2 does it, with its master.
        attrs = _master_attr(peer, index, masters)
        enslave = f", enslave to {peer.master}" if attrs else ""
        plans[peer.ns].round2.append(
            Op(
                f"{peer.name} up{enslave} in {peer.ns}",
                "link",
                index[(peer.ns, peer.name)],
                fields=_up(),
                attrs=attrs,
            )
        )
    vxlan_ops: dict[str, list[Op]] = defaultdict(list)
    for vx in layout.vxlans:
        vxlan_ops[vx.iface.ns].append(_vxlan_op(vx, index, masters))
    for ns, ops in vxlan_ops.items():
        plans[ns].round2[:0] = ops
    for iface in layout.interfaces():
        idx = index[(iface.ns, iface.name)]
        if iface.address:
            plans[iface.ns].round2.append(address_op(iface, idx))
        plans[iface.ns].round2.extend(qdisc_ops(iface, idx))
        if netshaping.is_network_shaped(iface):  # after the shaper: no frame passes unshaped
            ifb = index[(iface.ns, netshaping.ifb_name(iface))]
            plans[iface.ns].round1.append(netshaping.ifb_op(iface, ifb))
            plans[iface.ns].round2.extend(netshaping.relay_ops(iface, ifb))
            plans[iface.ns].round2.extend(netshaping.redirect_ops(iface, idx, ifb))
    for _, peer in netshaping.own_receive_queue(layout):
        if not netshaping.aggregates(layout, peer):
            plans[peer.ns].round2.append(netshaping.no_aggregation_op(peer, index[(peer.ns, peer.name)]))
    return plans


Index = Mapping[tuple[str, str], int]  # (namespace, interface or bridge) -> ifindex


def _master_attr(iface: Interface, index: Index, masters: set[tuple[str, str]]) -> list[list[Any]]:
    if iface.master is not None and (iface.ns, iface.master) in masters:
        return [["IFLA_MASTER", index[(iface.ns, iface.master)]]]
    return []


def _bridge_op(br: Bridge, index: Index) -> Op:
    return Op(
        f"create bridge {br.name} in {br.ns}",
        "link",
        index[(br.ns, br.name)],
        create=True,
        fields=_up(),
        attrs=[["IFLA_IFNAME", br.name], ["IFLA_MTU", br.mtu], _linkinfo("bridge")],
    )


def _veth_op(
    main: Interface, peer: Interface, index: Index, masters: set[tuple[str, str]], ns_fd: Mapping[str, int]
) -> Op:
    """Create a veth pair from `main`'s namespace, its peer straight into its own namespace."""
    peer_msg = {
        "index": index[(peer.ns, peer.name)],
        "attrs": [["IFLA_IFNAME", peer.name], ["IFLA_MTU", peer.mtu], ["IFLA_NET_NS_FD", ns_fd[peer.ns]]],
    }
    return Op(
        f"create veth {main.name} ({main.ns}) – {peer.name} ({peer.ns})",
        "link",
        index[(main.ns, main.name)],
        create=True,
        fields=_up(),
        attrs=[
            ["IFLA_IFNAME", main.name],
            ["IFLA_MTU", main.mtu],
            *_master_attr(main, index, masters),
            _linkinfo("veth", [["VETH_INFO_PEER", peer_msg]]),
        ],
    )


def _vxlan_op(vx: Vxlan, index: Index, masters: set[tuple[str, str]]) -> Op:
    iface = vx.iface
    return Op(
        f"create vxlan {iface.name} (vni {vx.vni}, {vx.local} -> {vx.remote}) in {iface.ns}",
        "link",
        index[(iface.ns, iface.name)],
        create=True,
        fields=_up(),
        attrs=[
            ["IFLA_IFNAME", iface.name],
            ["IFLA_MTU", iface.mtu],
            *_master_attr(iface, index, masters),
            _linkinfo(
                "vxlan",
                [
                    ["IFLA_VXLAN_ID", vx.vni],
                    ["IFLA_VXLAN_GROUP", vx.remote],  # unicast remote: BUM traffic goes there
                    ["IFLA_VXLAN_LOCAL", vx.local],
                    ["IFLA_VXLAN_LINK", index[(iface.ns, vx.underlay_dev)]],
                    ["IFLA_VXLAN_PORT", VXLAN_PORT],
                    ["IFLA_VXLAN_LEARNING", 1],
                ],
            ),
        ],
    )


def address_op(iface: Interface, idx: int) -> Op:
    """The netlink request that gives an interface its address (and broadcast)."""
    assert iface.address is not None
    net = ipaddress.ip_interface(iface.address)
    attrs = [["IFA_LOCAL", str(net.ip)], ["IFA_ADDRESS", str(net.ip)]]
    if net.version == 4 and net.network.prefixlen < 31:
        attrs.append(["IFA_BROADCAST", str(net.network.broadcast_address)])
    return Op(
        f"address {iface.address} on {iface.name} in {iface.ns}",
        "addr",
        idx,
        create=True,
        fields={
            "family": socket.AF_INET if net.version == 4 else socket.AF_INET6,
            "prefixlen": net.network.prefixlen,
        },
        attrs=attrs,
    )
