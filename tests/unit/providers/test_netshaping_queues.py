"""Which veth peers take a network shaper's output into a receive queue of their own (netshaping.py).

The overload that made this necessary (docs/fidelity-notes.md §8): frames before a shaper on a
bridge port and the shaper's output shared one CPU backlog, so two overloading senders left a
60 K packets/s link between bridges delivering 3 K. Chosen: network-shaped ends outside a node's
namespace; never a peer that userspace reads with a packet socket (OVS port, delay node).
"""

from __future__ import annotations

from vnetbench.layout import Layout, build_layout
from vnetbench.layout import link_emulation as emulation
from vnetbench.providers.local import links, netshaping
from vnetbench.spec import parse_spec

SPEC = """
name: queues
topology:
  nodes: [{name: s1}, {name: s2}, {name: r1}, {name: v1}, {name: d1}]
  switches: [{name: lbin}, {name: lbout}, {name: osw, kind: ovs}]
  links:
    - {name: fabric, endpoints: [lbin, lbout], pps: 60000}
    - {endpoints: [s1, lbin]}
    - {endpoints: [s2, lbin], rate: 100mbit}
    - {endpoints: [lbout, r1], rate: 1gbit}
    - {name: to-ovs, endpoints: [lbout, osw], rate: 1gbit}
    - {endpoints: [v1, osw]}
    - {name: slow, endpoints: [lbout, d1], rate: 50mbit, delay: 5ms, emulator: delay-node}
    - {name: nic, endpoints: [lbin, v1], rate: 50mbit, shaping: sender}
measurements: [{name: rtt, kind: rtt}]
patterns: [{name: p, kind: pairs, pairs: [[s1, r1]], measurements: [rtt]}]
"""


def _layout() -> Layout:
    layout = build_layout(parse_spec(SPEC).campaign, "c0ffee02")
    return emulation.realise(layout, False)[0]  # splices the delay node in, as the provider does


def _role(layout: Layout, ns: str) -> str:
    return layout.namespaces[ns]


def test_the_shapers_output_gets_its_own_queue_only_where_it_was_forwarded() -> None:
    layout = _layout()
    sw = {b.label: b.name for b in layout.bridges}  # the spec's switch -> its bridge
    chosen = netshaping.own_receive_queue(layout)
    pairs = {(end.name, _role(layout, peer.ns), peer.name) for end, peer in chosen}
    ends = {(end.ns, end.name) for end, _ in chosen}
    # every chosen end is network-shaped and forwards (a host's bridge port or wire), never a node's own
    for end, peer in chosen:
        assert end.shaper is not None and end.shaper.placement == "network"
        assert not _role(layout, end.ns).startswith("node:")
        assert _role(layout, peer.ns) != "delay:slow"
    # the fabric: both directions (each shaped where it leaves its bridge), peers are bridge ports
    fabric = [(e, p) for e, p in chosen if {e.master, p.master} == {sw["lbin"], sw["lbout"]}]
    assert len(fabric) == 2
    # bridge ports towards nodes r1 (1gbit) and s2 (100mbit): the node's eth receives in its own queue
    assert {r for _, r, _ in pairs} >= {"node:r1", "node:s2"}
    # the OVS end of to-ovs (read by ovs-vswitchd's packet socket) and the delay node's sides: never
    assert not any(p.master == sw["osw"] for _, p in chosen)
    assert not any(_role(layout, p.ns).startswith("delay:") for _, p in chosen)
    # shaping: sender on nic: neither end
    assert not any(_role(layout, p.ns) == "node:v1" and e.master == sw["lbin"] for e, p in chosen)
    # the to-ovs link's OVS port is network-shaped towards lbout: its peer (a Linux bridge port) is chosen
    assert any(e.master == sw["osw"] for e, _ in chosen)
    assert len(ends) == len(chosen)


def test_a_forwarding_peer_gets_a_gro_size_of_zero_and_a_nodes_own_interface_aggregates() -> None:
    layout = _layout()
    fds = {ns: 100 + i for i, ns in enumerate(layout.namespaces)}
    plans = links.plan_requests(layout, fds)
    index = links.assign_indexes(layout)
    chosen = netshaping.own_receive_queue(layout)
    # GRO size 0 where the peer forwards again (the fabric's bridge ports, to-ovs's Linux bridge port):
    # a packet socket downstream must get frames as they came
    forwarding = [p for _, p in chosen if not _role(layout, p.ns).startswith("node:")]
    assert len(forwarding) == 3
    for peer in forwarding:
        ops = [op for op in plans[peer.ns].round2 if "GRO size 0" in op.what]
        assert [(op.index, op.attrs) for op in ops if op.index == index[(peer.ns, peer.name)]] == [
            (index[(peer.ns, peer.name)], [["IFLA_GRO_MAX_SIZE", 0]])
        ]
    # a node's own interface (r1's, s2's, s1's ...) keeps GRO's default size: its stack is the only reader
    own = [p for _, p in chosen if _role(layout, p.ns).startswith("node:")]
    assert {_role(layout, p.ns) for p in own} >= {"node:r1", "node:s2"}
    for peer in own:
        assert not any(
            op.index == index[(peer.ns, peer.name)] and "GRO" in op.what for op in plans[peer.ns].round2
        )
    total = sum("GRO size 0" in op.what for plan in plans.values() for op in plan.round2)
    assert total == len(forwarding)
