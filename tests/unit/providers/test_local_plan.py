"""The local provider's pure parts: netlink requests from a layout, their encoding, tc and cgroup plans."""

from __future__ import annotations

import socket
import struct
from pathlib import Path

import pytest
from pyroute2.netlink.rtnl.ifaddrmsg import ifaddrmsg
from pyroute2.netlink.rtnl.ifinfmsg import ifinfmsg
from pyroute2.netlink.rtnl.tcmsg import tcmsg

from vnetbench.layout import Interface, Netem, Shaper, build_layout
from vnetbench.providers.local import cgroups, links, netlink, shaping
from vnetbench.spec import load_spec

FIXTURES = Path(__file__).parents[2] / "integration" / "providers" / "fixtures"


@pytest.fixture(scope="module")
def layout():
    return build_layout(load_spec(FIXTURES / "every_link.yaml").campaign, "c0ffee00")


@pytest.fixture(scope="module")
def plans(layout):
    fds = {ns: 100 + i for i, ns in enumerate(layout.namespaces)}
    return links.plan_requests(layout, fds), fds


def _attrs(op: netlink.Op) -> dict:
    return dict((k, v) for k, v in op.attrs)


def test_indexes_are_unique_per_namespace_and_skip_lo(layout) -> None:
    index = links.assign_indexes(layout)
    per_ns: dict[str, list[int]] = {}
    for (ns, _name), idx in index.items():
        per_ns.setdefault(ns, []).append(idx)
    for ns, values in per_ns.items():
        assert sorted(values) == list(range(2, 2 + len(values))), ns
    ifbs = sum(1 for i in layout.interfaces() if i.shaper and i.shaper.placement == "network")
    assert ifbs > 0  # the fixture's links are network-shaped (the default): one IFB per shaper
    assert (
        len(index) == len(layout.interfaces()) + sum(b.kind == "linux-bridge" for b in layout.bridges) + ifbs
    )


def test_round_one_brings_lo_up_then_bridges_then_veths(layout, plans) -> None:
    requests, _ = plans
    assert set(requests) == set(layout.namespaces)
    for ns, req in requests.items():
        first = req.round1[0]
        assert (first.kind, first.index, first.fields) == ("link", 1, {"flags": 1, "change": 1}), ns
        kinds = [_attrs(op)["IFLA_LINKINFO"]["attrs"][0][1] for op in req.round1[1:]]
        assert kinds == sorted(kinds, key=lambda k: k != "bridge"), ns  # bridges before veths
    veth_ops = [op for r in requests.values() for op in r.round1 if "veth" in op.what]
    assert len(veth_ops) == len(layout.veths)


def test_veths_are_created_from_the_end_that_has_a_linux_master(layout, plans) -> None:
    requests, fds = plans
    index = links.assign_indexes(layout)
    masters = links.linux_masters(layout)
    for pair in layout.veths:
        main, peer = links.creator_end(pair, masters)
        (op,) = [
            o for o in requests[main.ns].round1 if o.what.startswith(f"create veth {main.name} ({main.ns})")
        ]
        attrs = _attrs(op)
        assert op.index == index[(main.ns, main.name)] and op.create
        assert attrs["IFLA_MTU"] == main.mtu and op.fields["flags"] == 1
        peer_msg = dict(attrs["IFLA_LINKINFO"]["attrs"])["IFLA_INFO_DATA"]["attrs"][0][1]
        peer_attrs = dict((k, v) for k, v in peer_msg["attrs"])
        assert peer_msg["index"] == index[(peer.ns, peer.name)]
        assert peer_attrs == {"IFLA_IFNAME": peer.name, "IFLA_MTU": peer.mtu, "IFLA_NET_NS_FD": fds[peer.ns]}
        if main.master and (main.ns, main.master) in masters:
            assert attrs["IFLA_MASTER"] == index[(main.ns, main.master)]
        else:
            assert "IFLA_MASTER" not in attrs  # OVS ports are added by ovs-vsctl, not netlink
        (up,) = [
            o
            for o in requests[peer.ns].round2
            if o.what.startswith(f"{peer.name} up") and o.index == peer_msg["index"]
        ]
        assert up.fields == {"flags": 1, "change": 1}
        assert ("IFLA_MASTER" in _attrs(up)) == ((peer.ns, peer.master) in masters)


def test_vxlans_come_first_in_round_two_over_the_underlay(layout, plans) -> None:
    requests, _ = plans
    index = links.assign_indexes(layout)
    for vx in layout.vxlans:
        first = requests[vx.iface.ns].round2[0]
        data = dict(dict(_attrs(first)["IFLA_LINKINFO"]["attrs"])["IFLA_INFO_DATA"]["attrs"])
        assert data["IFLA_VXLAN_ID"] == vx.vni and data["IFLA_VXLAN_GROUP"] == vx.remote
        assert data["IFLA_VXLAN_LINK"] == index[(vx.iface.ns, "up0")] and data["IFLA_VXLAN_PORT"] == 4789


def test_every_address_and_shaper_is_requested(layout, plans) -> None:
    requests, _ = plans
    ops = [op for r in requests.values() for op in r.round2]
    addresses = [op for op in ops if op.kind == "addr"]
    assert len(addresses) == sum(1 for i in layout.interfaces() if i.address)
    for op in addresses:
        assert op.fields["family"] == socket.AF_INET and op.fields["prefixlen"] in (24,)
    tbf = [op for op in ops if op.kind == "qdisc" and _attrs(op)["TCA_KIND"] == "tbf"]
    htb = [op for op in ops if op.kind == "class"]
    assert len(tbf) == sum(1 for i in layout.interfaces() if i.shaper and i.shaper.kind == "tbf")
    assert len(htb) == sum(1 for i in layout.interfaces() if i.shaper and i.shaper.kind == "htb")


def _decode(cls, data: bytes):
    msg = cls(data)
    msg.decode()
    return msg


@pytest.mark.parametrize("kind", ["link", "addr", "qdisc"])
def test_templates_patch_index_and_sequence_exactly(kind: str) -> None:
    iface = Interface("ns", "eth0", 1500, address="198.18.0.1/24", shaper=Shaper("tbf", 10**8, 625000, 12500))
    make = {
        "link": lambda idx: netlink.link_up(idx, "x"),
        "addr": lambda idx: links.address_op(iface, idx),
        "qdisc": lambda idx: shaping.qdisc_ops(iface, idx)[0],
    }[kind]
    cls = {"link": ifinfmsg, "addr": ifaddrmsg, "qdisc": tcmsg}[kind]
    netlink._templates.clear()
    first = netlink.encode(make(7), 1)
    patched = netlink.encode(make(42), 9)  # from the cached template
    netlink._templates.clear()
    fresh = netlink.encode(make(42), 9)
    assert patched == fresh and first != patched
    msg = _decode(cls, patched)
    assert msg["index"] == 42 and msg["header"]["sequence_number"] == 9
    assert struct.unpack_from("=I", patched)[0] == len(patched)


class FakeSocket:
    """Answers each request with an ack; the n-th request (1-based) fails with errno and a message."""

    def __init__(self, fail_seq: int | None = None, errno_: int = 17, message: bytes = b"") -> None:
        self.fail_seq, self.errno, self.message, self.replies = fail_seq, errno_, message, []

    def send(self, data: bytes) -> int:
        off = 0
        while off < len(data):
            length, _type, _flags, seq, _pid = netlink.HEADER.unpack_from(data, off)
            code = -self.errno if seq == self.fail_seq else 0
            tlv = b""
            flags = netlink.NLM_F_CAPPED
            if code and self.message:
                payload = self.message + b"\0"
                tlv = struct.pack("=HH", 4 + len(payload), netlink.NLMSGERR_ATTR_MSG) + payload
                tlv += b"\0" * (-len(tlv) % 4)
                flags |= netlink.NLM_F_ACK_TLVS
            body = struct.pack("=i", code) + data[off : off + 16] + tlv
            self.replies.append(
                netlink.HEADER.pack(16 + len(body), netlink.NLMSG_ERROR, flags, seq, 0) + body
            )
            off += (length + 3) & ~3
        return len(data)

    def recv(self, _size: int) -> bytes:
        out, self.replies = b"".join(self.replies), []
        return out


def test_batch_reads_every_ack() -> None:
    batch = netlink.Batch("ns", FakeSocket())
    batch.extend([netlink.link_up(i, f"up {i}") for i in range(1, 40)])
    batch.commit()
    assert batch.ops == []


def test_batch_failure_names_the_request_errno_and_kernel_message() -> None:
    batch = netlink.Batch("vnbx-n-a", FakeSocket(fail_seq=2, message=b"Exclusivity flag on"))
    batch.extend([netlink.link_up(1, "lo up"), netlink.link_up(2, "eth0 up in vnbx-n-a")])
    with pytest.raises(netlink.NetlinkFailure) as err:
        batch.commit()
    assert str(err.value) == "in namespace vnbx-n-a: eth0 up in vnbx-n-a: File exists (Exclusivity flag on)"
    assert err.value.errnos == [17]


def test_tbf_options_carry_rate_burst_and_limit() -> None:
    parms = shaping.tbf_options(Shaper("tbf", 100_000_000, 625_000, 12_500))["attrs"][0][1]
    assert parms["rate"] == 12_500_000 and parms["limit"] == 625_000 and parms["buffer"] > 0


def test_htb_is_root_class_and_bfifo_leaf() -> None:
    iface = Interface("ns", "eth0", 1500, shaper=Shaper("htb", 50_000_000, 312_500, 6_250))
    ops = shaping.qdisc_ops(iface, 3)
    assert [(o.kind, _attrs(o)["TCA_KIND"], o.fields["handle"], o.fields["parent"]) for o in ops] == [
        ("qdisc", "htb", 0x10000, 0xFFFFFFFF),
        ("class", "htb", 0x10001, 0x10000),
        ("qdisc", "bfifo", 0x20000, 0x10001),
    ]
    parms = dict(_attrs(ops[1])["TCA_OPTIONS"]["attrs"])["TCA_HTB_PARMS"]
    assert parms["rate"] == parms["ceil"] == 6_250_000 and parms["quantum"] == 200_000
    assert _attrs(ops[2])["TCA_OPTIONS"] == {"limit": 312_500}
    assert all(o.index == 3 for o in ops)


def test_netem_is_the_root_alone_and_the_leaf_under_a_shaper() -> None:
    netem = Netem(20_000_000, 1_000_000, 0.01)
    alone = shaping.qdisc_ops(Interface("ns", "eth0", 1500, netem=netem), 2)
    assert [(_attrs(o)["TCA_KIND"], o.fields["parent"]) for o in alone] == [("netem", 0xFFFFFFFF)]
    shaped = shaping.qdisc_ops(
        Interface("ns", "eth0", 1500, shaper=Shaper("tbf", 10**9, 6_250_000, 125_000), netem=netem), 2
    )
    assert [(_attrs(o)["TCA_KIND"], o.fields["handle"], o.fields["parent"]) for o in shaped] == [
        ("tbf", 0x10000, 0xFFFFFFFF),
        ("netem", 0x20000, 0x10001),
    ]
    opts = _attrs(shaped[1])["TCA_OPTIONS"]
    # 1 Gbit/s x (20 ms + 1 ms, uniform jitter's largest delay) + 6.25 MB queue, in 1514-byte frames
    assert opts["limit"] == -(-(125_000_000 * 0.021 + 6_250_000) // 1514)
    assert opts["loss"] == int((2**32 - 1) * 1 / 100)


def test_cgroup_plan_nests_nodes_in_their_host(layout) -> None:
    v1 = cgroups.plan_groups(layout, cgroups.CpuController(1, "/sys/fs/cgroup/cpu"))
    assert [(g.key, g.rel, g.quota) for g in v1] == [
        ("host:h3", "vnbc0ffee00-h-h3", 0.5),
        ("node:n7", "vnbc0ffee00-h-h3/vnbc0ffee00-n-n7", 0.25),
    ]
    assert cgroups.group_for(layout, v1, "n7", "h3").key == "node:n7"
    assert cgroups.group_for(layout, v1, "n6", "h3").key == "host:h3"
    assert cgroups.group_for(layout, v1, "n1", "h1") is None
    v2 = cgroups.plan_groups(layout, cgroups.CpuController(2, "/sys/fs/cgroup"))
    assert v2[-1] == cgroups.Group("rest:h3", "vnbc0ffee00-h-h3/vnbc0ffee00-h-h3-rest", None)
    assert cgroups.group_for(layout, v2, "n6", "h3").key == "rest:h3"
