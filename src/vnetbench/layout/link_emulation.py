"""Where the kernel has no netem (or the user asks for one), a link's delay/jitter/loss is realised
by a delay node: a namespace of its own spliced into the veth pair that carries the link — pure
data, no kernel access.

The layout puts a `Netem` on every interface whose outgoing frames are to be delayed. For each
veth pair with such an interface, `realise` replaces

    a ──── b          by          a ──── da [delay node: vnb-probe delay] db ──── b

The node delays frames from a to b as a's Netem says and frames from b to a as b's says, so the
per-direction meaning of the layout is kept exactly. Shapers stay where they were (on a and b:
frames are paced, then delayed). TX checksum offload is turned off on a and b: the node reads
frames with AF_PACKET, where a checksum left for "hardware" to fill in would never be filled.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Literal

from vnetbench.layout.objects import DelayNode, Interface, Layout, Netem, VethPair
from vnetbench.spec import delaycdf

Emulator = Literal["netem", "delay-node"]


def choose(netem: Netem, kernel_has_netem: bool) -> Emulator:
    """netem or a delay node for a link: what the link asks, else netem where the kernel has it and
    the link asks nothing netem lacks (netem draws a delay per frame: it cannot hold one, `delay_hold`;
    the spec refuses `emulator: netem` beside it)."""
    if netem.emulator == "netem":
        return "netem"
    if netem.emulator == "delay-node" or netem.hold_ns:
        return "delay-node"
    return "netem" if kernel_has_netem else "delay-node"


def realise(layout: Layout, kernel_has_netem: bool) -> tuple[Layout, dict[str, Emulator]]:
    """The layout with delay nodes spliced in where they are chosen, and the choice per link."""
    choice: dict[str, Emulator] = {}
    veths: list[VethPair] = []
    nodes: list[DelayNode] = []
    namespaces = dict(layout.namespaces)
    for pair in layout.veths:
        netem = pair.a.netem or pair.b.netem
        if netem is None:
            veths.append(pair)
            continue
        choice[netem.link] = choose(netem, kernel_has_netem)
        if choice[netem.link] == "netem":
            veths.append(pair)
            continue
        ns = f"{layout.prefix}-d{len(nodes)}"
        namespaces[ns] = f"delay:{netem.link}"
        a = replace(pair.a, netem=None, tx_offload_off=True)
        b = replace(pair.b, netem=None, tx_offload_off=True)
        veths.append(VethPair(a, Interface(ns, "da", pair.a.mtu)))
        veths.append(VethPair(Interface(ns, "db", pair.b.mtu), b))
        mtu = max(pair.a.mtu, pair.b.mtu)
        nodes.append(DelayNode(ns, "da", "db", mtu, pair.a.netem, pair.b.netem, netem.link))
    for vx in layout.vxlans:
        if vx.iface.netem is not None:
            choice[vx.iface.netem.link] = choose(vx.iface.netem, kernel_has_netem)
    out = replace(layout, namespaces=namespaces, veths=veths, delay_nodes=layout.delay_nodes + nodes)
    return out, choice


def sides(layout: Layout, node: DelayNode) -> dict[str, str]:
    """{interface: the role of the namespace beyond it} — e.g. {"da": "node:vm0", "db": "host:pc1"}:
    which end of the link each of the node's interfaces faces (a report's `from`/`to` name them)."""
    out: dict[str, str] = {}
    for pair in layout.veths:
        for mine, other in ((pair.a, pair.b), (pair.b, pair.a)):
            if mine.ns == node.ns and mine.name in (node.a, node.b):
                out[mine.name] = layout.namespaces.get(other.ns, other.ns)
    return out


def _duration(ns: int) -> str:
    return f"{ns}ns"


def _delay_args(netem: Netem) -> list[str]:
    if netem.delay_cdf is not None:  # the whole delay (the spec rejects delay/jitter beside it)
        return ["--delay-cdf", delaycdf.cli(netem.delay_cdf)]
    return [
        "--delay",
        _duration(netem.delay_ns or 0),
        "--jitter",
        _duration(netem.jitter_ns or 0),
        "--jitter-dist",
        netem.jitter_distribution,
    ]


RT_PRIORITY = 10  # SCHED_FIFO: the node wakes on time even on a busy machine (p99 error ~50 µs, not ~2 ms)
QUANTUM_US = 200  # batch mode from 5 000 frames/s per direction: ~5 µs of CPU per frame instead of ~15


def command(
    node: DelayNode, binary: str, rt_priority: int = RT_PRIORITY, seed: int | None = None
) -> list[str]:
    """The `vnb-probe delay` command line of one delay node (seed None: the node draws one from the
    clock and reports it; a fixed seed makes its jitter and loss draws reproducible)."""
    netem = node.a_to_b or node.b_to_a
    assert netem is not None
    direction = "both" if node.a_to_b and node.b_to_a else "a-to-b" if node.a_to_b else "b-to-a"
    argv = [
        binary,
        "delay",
        "--a",
        node.a,
        "--b",
        node.b,
        "--direction",
        direction,
        *_delay_args(netem),
        "--loss",
        repr(float(netem.loss_ratio or 0.0)),
        "--loss-model",
        netem.loss_model,
        "--loss-burst",
        repr(float(netem.loss_burst)),
        "--max-frame",
        str(node.mtu + 14 + 4),
        "--rt-priority",
        str(rt_priority),
        "--quantum-us",
        str(QUANTUM_US),
        "--json",
    ]
    if netem.reorder:
        argv.append("--reorder")
    if netem.hold_ns:
        argv += ["--delay-hold", _duration(netem.hold_ns)]
    if seed is not None:
        argv += ["--seed", str(seed)]
    return argv
