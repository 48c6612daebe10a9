"""The pure layout (names, addresses, shapers) and the plan (steps, keys, rebuilds, factors)."""

from __future__ import annotations

from tests.helpers.specs import SPEC
from vnetbench.layout import build_layout
from vnetbench.plan import make_plan
from vnetbench.spec import parse_spec
from vnetbench.spec.units import parse_rate


def test_layout_names_addresses_and_placement() -> None:
    spec = parse_spec(SPEC)
    layout = build_layout(spec.campaign, "c0ffee00")
    assert set(layout.namespaces) >= {"vnbc0ffee00-n-n1", "vnbc0ffee00-h-h1", "vnbc0ffee00-wan"}
    assert all(ns.startswith("vnbc0ffee00-") for ns in layout.namespaces)
    # switch segment first, then the VXLAN link, then the direct link: one /24 each in 198.18.0.0/15
    assert [s.subnet for s in layout.segments] == ["198.18.0.0/24", "198.18.1.0/24", "198.18.2.0/24"]
    assert layout.address_of("n3", seen_from="n1") == "198.18.0.3"
    assert layout.address_of("n4", seen_from="n1") == "198.18.1.2"
    assert layout.address_of("n2", seen_from="n1") in {"198.18.0.2", "198.18.2.2"}
    assert layout.placement("n1", "n2") == "same-host"
    assert layout.placement("n1", "n3") == "same-site"
    assert layout.placement("n1", "n4") == "cross-site"
    # the path n1 -> n3 crosses both access links; the bottleneck is the slower one
    assert layout.bottleneck_rate("n1", "n3") == parse_rate("50mbit")
    assert [vx.vni for vx in layout.vxlans] == [4, 4]
    # OVS: the namespace-side veths talking to it have TX offload off; interface names fit IFNAMSIZ
    n1_eth0 = next(p.a for p in layout.veths if p.a.ns.endswith("-n-n1") and p.a.name == "eth0")
    assert n1_eth0.tx_offload_off
    assert all(len(i.name) <= 15 for i in layout.interfaces())
    # every direction shaped once: the node side and the switch port
    shaped = [i for i in layout.interfaces() if i.shaper]
    assert {i.shaper.rate_bps for i in shaped} == {100_000_000, 50_000_000, 10_000_000}


def test_plan_steps_keys_rebuilds_and_schedule() -> None:
    spec = parse_spec(SPEC)
    plan = make_plan(spec, "c0ffee00", seed=7)
    per_rep = [s for s in plan.steps if s.repetition == 1]
    # pairs: 2 steps; star: 2 alone + 1 together; mesh over 3 nodes: 6 pairs in rounds of ≤ 2 disjoint pairs
    kinds = [s.group_kind for s in per_rep]
    assert kinds[:5] == ["single", "single", "alone", "alone", "together"]
    mesh = [s for s in per_rep if s.pattern_kind == "mesh"]
    assert sum(len(s.flows) for s in mesh) == 6
    for step in mesh:  # a node is never in two flows of one round
        nodes = [n for f in step.flows for n in (f.src, f.dst)]
        assert len(nodes) == len(set(nodes))
    assert len(plan.steps) == 3 * len(per_rep)
    keys = [f.key for s in plan.steps for f in s.flows]
    assert len(keys) == len(set(keys))
    rebuilds = [s.seq for s in plan.steps if s.rebuild_before]
    assert rebuilds == [len(per_rep), 2 * len(per_rep)]
    assert [s.not_before_ns for s in plan.steps if s.rebuild_before] == [60 * 10**9, 120 * 10**9]
    # the same spec, id and seed give the same plan (resume depends on it)
    again = make_plan(spec, "c0ffee00", seed=7)
    assert [f.key for s in again.steps for f in s.flows] == keys


def test_udp_link_rate_is_the_model_maximum_times_the_factor() -> None:
    from vnetbench.plan import offered_bps

    spec = parse_spec(SPEC)
    plan = make_plan(spec, "c0ffee00", seed=1)
    offered = offered_bps(plan.variants[0], plan.layouts[0], "udp", "n1", "n3")
    assert offered == 2 * 50e6 * 1470 / (1470 + 28 + 14)


FACTORIAL = """
name: f
topology:
  nodes: [{name: a}, {name: b}]
  links: [{name: ab, endpoints: [a, b], rate: 100mbit}]
measurements:
  - {name: tcp, kind: tcp, duration: 1s}
patterns:
  - {name: p, kind: pairs, pairs: [[a, b]], measurements: [tcp]}
factors:
  - {name: cc, path: measurements.tcp.congestion, levels: [cubic, reno]}
  - {name: rate, path: topology.links.ab.rate, levels: [10mbit, 100mbit]}
design: {kind: 2k-r, replications: 3, randomize: true}
"""


def test_factorial_plan_has_every_treatment_replicated_in_random_recorded_order() -> None:
    spec = parse_spec(FACTORIAL)
    plan = make_plan(spec, "deadbeef", seed=42)
    assert len(plan.variants) == 4
    combos = {(s.factors["cc"], s.factors["rate"]) for s in plan.steps}
    assert combos == {("cubic", "10mbit"), ("cubic", "100mbit"), ("reno", "10mbit"), ("reno", "100mbit")}
    assert len(plan.steps) == 12
    assert plan.variants[1].measurement("tcp").congestion in {"cubic", "reno"}
    # the topology differs between rate levels: those variants have different topology keys
    assert len(set(plan.topology_keys)) == 2
    order = [(s.variant, s.repetition) for s in plan.steps]
    assert order != sorted(order)  # randomised
    assert order == [(s.variant, s.repetition) for s in make_plan(spec, "deadbeef", seed=42).steps]
