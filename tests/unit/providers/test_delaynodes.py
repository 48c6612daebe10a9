"""Delay nodes in the layout (pure data): where they are spliced in, what each direction gets,
and the exact vnb-probe command line."""

from __future__ import annotations

from pathlib import Path

from vnetbench.layout import build_layout
from vnetbench.layout.link_emulation import command, realise, sides
from vnetbench.spec import parse_spec

SPEC = """
name: d
topology:
  hosts: [{name: h1}, {name: h2}]
  nodes: [{name: a, host: h1}, {name: b, host: h1}, {name: c, host: h2}, {name: e, host: h1}]
  links:
    - {name: near, endpoints: [a, b], rate: 10mbit, delay: 25ms, jitter: 2ms, jitter_distribution: normal}
    - {name: far, endpoints: [a, c], delay: 120ms, loss: 0.01, loss_model: gilbert-elliott, loss_burst: 3}
    - {name: plain, endpoints: [b, e]}
    - {name: forced, endpoints: [e, a], delay: 1ms, emulator: netem}
measurements: [{name: p, kind: rtt}]
patterns: [{kind: pairs, pairs: [[a, b]], measurements: [p]}]
"""


def _layout():
    return build_layout(parse_spec(SPEC, Path("d.yaml")).campaign, "c0ffee09")


def test_without_netem_every_delayed_link_gets_a_node_unless_netem_is_forced() -> None:
    layout, choice = realise(_layout(), kernel_has_netem=False)
    assert choice == {"near": "delay-node", "far": "delay-node", "forced": "netem"}
    roles = {ns: role for ns, role in layout.namespaces.items() if role.startswith("delay:")}
    assert sorted(roles.values()) == ["delay:far", "delay:far", "delay:near"]  # far crosses hosts: 2
    assert all(
        i.netem is None
        for i in layout.interfaces()
        if i.ns in roles or (i.netem and i.netem.link != "forced")
    )


def test_with_netem_auto_uses_netem() -> None:
    layout, choice = realise(_layout(), kernel_has_netem=True)
    assert set(choice.values()) == {"netem"} and layout.delay_nodes == []


def test_a_same_host_link_is_split_around_one_node_and_keeps_its_shaper() -> None:
    original = _layout()
    layout, _ = realise(original, kernel_has_netem=False)
    (node,) = [d for d in layout.delay_nodes if d.link == "near"]
    assert node.a_to_b == node.b_to_a and node.a_to_b.delay_ns == 25_000_000
    ends = [p for p in layout.veths if node.ns in (p.a.ns, p.b.ns)]
    assert len(ends) == 2
    outer = [i for p in ends for i in (p.a, p.b) if i.ns != node.ns]
    assert {i.ns for i in outer} == {original.node_ns["a"], original.node_ns["b"]}
    assert all(
        i.tx_offload_off and i.netem is None and i.shaper and i.shaper.rate_bps == 10_000_000 for i in outer
    )
    assert len(layout.veths) == len(original.veths) + 3  # near: +1, far: +1 at each host
    argv = command(node, "/x/vnb-probe")
    assert argv[:2] == ["/x/vnb-probe", "delay"]
    joined = " ".join(argv)
    assert "--direction both" in joined and "--delay 25000000ns" in joined
    assert "--jitter 2000000ns --jitter-dist normal" in joined and "--reorder" not in argv
    assert "--seed" not in argv  # the node draws its seed from the clock and reports it
    assert command(node, "p", seed=7)[-2:] == ["--seed", "7"]


def test_a_link_between_hosts_delays_each_direction_once() -> None:
    layout, _ = realise(_layout(), kernel_has_netem=False)
    far = [d for d in layout.delay_nodes if d.link == "far"]
    # one node at each node end, each delaying only what leaves its node
    assert sorted(command(d, "p")[command(d, "p").index("--direction") + 1] for d in far) == [
        "a-to-b",
        "a-to-b",
    ]
    argv = command(far[0], "p")
    assert argv[argv.index("--loss-model") + 1] == "gilbert-elliott"
    assert argv[argv.index("--loss-burst") + 1] == "3.0" and argv[argv.index("--loss") + 1] == "0.01"


def test_netem_long_tailed_jitter_is_accepted_and_passed_to_the_node() -> None:
    for dist in ("pareto", "paretonormal"):
        spec = SPEC.replace("jitter_distribution: normal", f"jitter_distribution: {dist}")
        layout, _ = realise(build_layout(parse_spec(spec, Path("d.yaml")).campaign, "c0ffee09"), False)
        (node,) = [d for d in layout.delay_nodes if d.link == "near"]
        assert f"--jitter 2000000ns --jitter-dist {dist}" in " ".join(command(node, "vnb-probe"))


def test_an_empirical_delay_cdf_replaces_delay_and_jitter_on_the_node() -> None:
    spec = SPEC.replace(
        "delay: 25ms, jitter: 2ms, jitter_distribution: normal",
        "delay_cdf: [[0, 24.7ms], [0.9, 26.2ms], [1, 375ms]], reorder: true",
    )
    layout, choice = realise(build_layout(parse_spec(spec, Path("d.yaml")).campaign, "c0ffee09"), False)
    assert choice["near"] == "delay-node"
    (node,) = [d for d in layout.delay_nodes if d.link == "near"]
    argv = command(node, "vnb-probe")
    assert argv[argv.index("--delay-cdf") + 1] == "0.0:24700000ns,0.9:26200000ns,1.0:375000000ns"
    assert "--delay" not in argv and "--jitter" not in argv and "--jitter-dist" not in argv
    assert "--reorder" in argv


def test_each_node_knows_which_end_each_of_its_interfaces_faces() -> None:
    layout, _ = realise(_layout(), kernel_has_netem=False)
    faced = {(node.link, tuple(sorted(sides(layout, node).values()))) for node in layout.delay_nodes}
    # near: one node between a and b; far (between hosts): one node per node end, facing its host
    assert faced == {
        ("near", ("node:a", "node:b")),
        ("far", ("host:h1", "node:a")),
        ("far", ("host:h2", "node:c")),
    }
