"""Cross-field checks for the vnb-probe measurements (cpushare, background) and the `nodes` pattern.

Returns (location, message) pairs; references.py turns them into Problems with file and line.
"""

from __future__ import annotations

from collections.abc import Sequence

from vnetbench.spec.errors import Loc
from vnetbench.spec.models import BackgroundMeasurement, Campaign, NodesPattern
from vnetbench.spec.segments import Segment


def check(campaign: Campaign, segments: Sequence[Segment]) -> list[tuple[Loc, str]]:
    """Located problems of the vnb-probe measurements and the nodes pattern."""
    out: list[tuple[Loc, str]] = []
    nodes = [n.name for n in campaign.topology.nodes]
    kinds = {m.name: m.kind for m in campaign.measurements}

    def joined(src: str, dst: str) -> bool:
        return any(src in s.addresses and dst in s.addresses for s in segments)

    for i, m in enumerate(campaign.measurements):
        if not isinstance(m, BackgroundMeasurement):
            continue
        for k, (src, dst) in enumerate(m.pairs):
            loc: Loc = ("measurements", i, "pairs", k)
            missing = [end for end in (src, dst) if end not in nodes]
            if missing:
                out.append((loc, f"no node named '{missing[0]}'; known: {', '.join(sorted(nodes))}"))
            elif src == dst:
                out.append((loc, f"'{src}' would send to itself; give two different nodes"))
            elif not joined(src, dst):
                out.append((loc, f"'{src}' and '{dst}' share no link or switch; add one that joins them"))

    # A background flow lasts as long as the step it accompanies: a duration written on one that runs
    # only as background would be silently unused, so it is refused (as a step of its own it applies).
    as_background = {name for p in campaign.patterns for name in p.background}
    as_step = {name for p in campaign.patterns for name in p.measurements}
    for i, m in enumerate(campaign.measurements):
        unused = m.name in as_background and m.name not in as_step
        if isinstance(m, BackgroundMeasurement) and "duration" in m.model_fields_set and unused:
            out.append(
                (
                    ("measurements", i, "duration"),
                    "a background flow runs as long as each step it accompanies (the step's planned "
                    "time + 0.5 s), so this duration would not be used; remove it",
                )
            )

    for i, pattern in enumerate(campaign.patterns):
        for j, name in enumerate(pattern.background):
            if kinds.get(name) != "background":
                known = sorted(n for n, kind in kinds.items() if kind == "background")
                out.append(
                    (
                        ("patterns", i, "background", j),
                        f"'{name}' is not a measurement of kind background; "
                        f"known: {', '.join(known) or '(none)'}",
                    )
                )
        is_nodes = isinstance(pattern, NodesPattern)
        for j, name in enumerate(pattern.measurements):
            kind = kinds.get(name)
            if kind is None:
                continue  # references.py reports unknown names
            if is_nodes and kind != "cpushare":
                out.append(
                    (
                        ("patterns", i, "measurements", j),
                        f"a nodes pattern runs measurements on one node (cpushare); '{name}' is {kind}: "
                        "put it in a pairs pattern",
                    )
                )
            if not is_nodes and kind == "cpushare":
                out.append(
                    (
                        ("patterns", i, "measurements", j),
                        f"'{name}' (cpushare) runs on one node: put it in a pattern of kind nodes",
                    )
                )
        if is_nodes:
            for k, node in enumerate(pattern.nodes):
                if node not in nodes:
                    out.append(
                        (
                            ("patterns", i, "nodes", k),
                            f"no node named '{node}'; known: {', '.join(sorted(nodes))}",
                        )
                    )
    return out
