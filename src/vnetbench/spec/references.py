"""Checks that need more than one field: names that must exist, be unique, or be linked.

Each problem is returned with the location of the field at fault, so the loader can point at
the line in the user's YAML file.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from vnetbench.spec import probe_checks
from vnetbench.spec.errors import Loc
from vnetbench.spec.models import (
    Campaign,
    FanInPattern,
    Link,
    MeshPattern,
    PairsPattern,
    ParallelPattern,
    StarPattern,
)
from vnetbench.spec.segments import Segment, SegmentError, l2_segments


@dataclass(frozen=True)
class Problem:
    loc: Loc
    message: str


def check_references(campaign: Campaign, stored: bool = False) -> list[Problem]:
    """Every problem of names and links, each located: names, then links, then segments and patterns
    (a later check needs the earlier ones to pass). `stored`: a stored campaign's spec, read without
    the checks added since campaigns could have run (two factors of one name)."""
    problems = _names_and_placement(campaign)
    if not stored:
        problems += _unique("factors", None, [f.name for f in campaign.factors])
    if problems:
        return problems  # later checks need hosts and sites to resolve
    problems = _links(campaign)
    if problems:
        return problems
    try:
        segments, _ = l2_segments(campaign.topology)
    except SegmentError as err:
        return [Problem(err.loc, str(err))]
    problems = _one_link_per_segment(campaign, segments)
    problems += _patterns(campaign, segments)
    problems += [Problem(loc, message) for loc, message in probe_checks.check(campaign, segments)]
    return problems


def _names_and_placement(campaign: Campaign) -> list[Problem]:
    """Unique names; every host's site, node's and switch's host exists."""
    problems: list[Problem] = []
    topo = campaign.topology
    problems += _unique("topology", "sites", [s.name for s in topo.sites])
    problems += _unique("topology", "hosts", [h.name for h in topo.hosts])
    problems += _unique("topology", "nodes", [n.name for n in topo.nodes])
    problems += _unique("topology", "switches", [s.name for s in topo.switches])
    problems += _unique("topology", "links", [link.label for link in topo.links])
    problems += _unique("measurements", None, [m.name for m in campaign.measurements])

    sites = [s.name for s in topo.sites]
    hosts = [h.name for h in topo.hosts]
    nodes = [n.name for n in topo.nodes]
    switches = [s.name for s in topo.switches]
    for name in set(nodes) & set(switches):
        problems.append(
            Problem(
                ("topology", "switches", switches.index(name), "name"),
                f"'{name}' is already a node's name; links name their ends, so names must differ",
            )
        )

    for i, host in enumerate(topo.hosts):
        problems += _choose("topology", "hosts", i, "site", host.site, sites, "site")
    for i, node in enumerate(topo.nodes):
        problems += _choose("topology", "nodes", i, "host", node.host, hosts, "host")
    for i, switch in enumerate(topo.switches):
        problems += _choose("topology", "switches", i, "host", switch.host, hosts, "host")
    return problems


def _links(campaign: Campaign) -> list[Problem]:
    """Every link joins two known, different ends, with an overlay only between hosts and a delay
    given one way only."""
    problems: list[Problem] = []
    topo = campaign.topology
    hosts = [h.name for h in topo.hosts]
    nodes = [n.name for n in topo.nodes]
    switches = [s.name for s in topo.switches]
    ends = set(nodes) | set(switches)
    host_of = {n.name: n.host or (hosts[0] if hosts else "host") for n in topo.nodes}
    host_of.update({s.name: s.host or (hosts[0] if hosts else "host") for s in topo.switches})
    for i, link in enumerate(topo.links):
        for j, end in enumerate(link.endpoints):
            if end not in ends:
                problems.append(
                    Problem(
                        ("topology", "links", i, "endpoints", j),
                        f"no node or switch named '{end}'; known: {_names(ends)}",
                    )
                )
        a, b = link.endpoints
        if a == b:
            problems.append(Problem(("topology", "links", i, "endpoints"), "a link needs two different ends"))
        elif link.overlay and a in host_of and b in host_of and host_of[a] == host_of[b]:
            problems.append(
                Problem(
                    ("topology", "links", i, "overlay"),
                    f"both ends are on host '{host_of[a]}'; an overlay joins different hosts",
                )
            )
        if link.pps is not None and link.shaper == "htb":
            problems.append(
                Problem(("topology", "links", i, "pps"), "pps needs tbf: remove `shaper: htb` or pps")
            )
        elif link.pps is not None and link.rate and link.rate / 8 / link.pps > 65535:
            problems.append(
                Problem(
                    ("topology", "links", i, "pps"),
                    f"rate / pps = {link.rate / 8 / link.pps:.0f} bytes per packet, above tbf's 65535: "
                    "lower the rate or raise pps",
                )
            )
        if link.jitter is not None and link.delay is None:
            problems.append(
                Problem(("topology", "links", i, "jitter"), "jitter needs a delay on the same link")
            )
        given = [f for f in ("delay", "jitter", "jitter_distribution") if f in link.model_fields_set]
        if link.delay_cdf is not None and given:
            problems.append(
                Problem(
                    ("topology", "links", i, "delay_cdf"),
                    f"delay_cdf gives the whole one-way delay; remove {' and '.join(given)} from this link "
                    "(or remove delay_cdf)",
                )
            )
        problems += _delay_hold(link, i)
    return problems


def _delay_hold(link: Link, i: int) -> list[Problem]:
    """A held delay needs a drawn one to hold, and a delay node to hold it (netem draws per frame)."""
    if link.delay_hold is None:
        return []
    loc = ("topology", "links", i, "delay_hold")
    if link.jitter is None and link.delay_cdf is None:
        return [
            Problem(
                loc,
                "delay_hold needs jitter or delay_cdf: a constant delay is the same for every frame "
                "already; remove delay_hold or give the link jitter or delay_cdf",
            )
        ]
    if link.emulator == "netem":
        return [
            Problem(
                loc,
                "netem draws a delay per frame and cannot hold one: remove `emulator: netem` from "
                "this link (auto gives it a delay node) or remove delay_hold",
            )
        ]
    return []


def _one_link_per_segment(campaign: Campaign, segments: list[Segment]) -> list[Problem]:
    """A node has at most one interface in each L2 segment."""
    problems: list[Problem] = []
    nodes = [n.name for n in campaign.topology.nodes]
    for node in nodes:
        in_segments = [s.label for s in segments if node in s.addresses]
        dup = [label for label, count in Counter(in_segments).items() if count > 1]
        if dup:
            problems.append(
                Problem(
                    ("topology", "nodes", nodes.index(node)),
                    f"node '{node}' has two links into one L2 segment ({dup[0]}); keep one",
                )
            )
    return problems


def _patterns(campaign: Campaign, segments: list[Segment]) -> list[Problem]:
    """A pattern's measurements and nodes exist, its count fits, and its pairs share a segment."""
    problems: list[Problem] = []
    nodes = [n.name for n in campaign.topology.nodes]
    measurement_names = [m.name for m in campaign.measurements]
    for i, pattern in enumerate(campaign.patterns):
        for j, name in enumerate(pattern.measurements):
            if name not in measurement_names:
                problems.append(
                    Problem(
                        ("patterns", i, "measurements", j),
                        f"no measurement named '{name}'; known: {_names(measurement_names)}",
                    )
                )
        counted = _counted_members(pattern)
        if counted is not None and (pattern.count or 0) > len(counted[1]):
            what, members = counted
            n = len(members)
            problems.append(
                Problem(
                    ("patterns", i, "count"),
                    f"{pattern.count} but only {n} {what if n != 1 else what[:-1]} "
                    f"{'are' if n != 1 else 'is'} listed; give a count of at most {n} or list more {what}",
                )
            )
        for loc, src, dst in _pattern_pairs(pattern, nodes):
            for end_loc, end in ((loc[0], src), (loc[1], dst)):
                if end not in nodes:
                    problems.append(
                        Problem(("patterns", i, *end_loc), f"no node named '{end}'; known: {_names(nodes)}")
                    )
            if src in nodes and dst in nodes:
                if src == dst:
                    problems.append(Problem(("patterns", i, *loc[1]), f"'{src}' would measure itself"))
                elif not any(src in s.addresses and dst in s.addresses for s in segments):
                    problems.append(
                        Problem(
                            ("patterns", i, *loc[1]),
                            f"'{src}' and '{dst}' share no link or switch (vnetbench does not route); "
                            "add a link or a switch that joins them",
                        )
                    )
    return problems


def _pattern_pairs(pattern: object, nodes: list[str]) -> list[tuple[tuple[Loc, Loc], str, str]]:
    """Every (src, dst) a pattern measures, with the locations of its two names."""
    if isinstance(pattern, PairsPattern | ParallelPattern):
        return [(((("pairs", k, 0)), ("pairs", k, 1)), s, d) for k, (s, d) in enumerate(pattern.pairs)]
    if isinstance(pattern, StarPattern):
        return [
            ((("source",), ("destinations", k)), pattern.source, d)
            for k, d in enumerate(pattern.destinations)
        ]
    if isinstance(pattern, FanInPattern):
        return [
            ((("sources", k), ("destination",)), s, pattern.destination)
            for k, s in enumerate(pattern.sources)
        ]
    if isinstance(pattern, MeshPattern):
        members = pattern.nodes or nodes
        return [
            ((("nodes", k), ("nodes", m)), s, d)
            for k, s in enumerate(members)
            for m, d in enumerate(members)
            if k != m
        ]
    return []


def _unique(section: str, sub: str | None, names: list[str]) -> list[Problem]:
    seen: dict[str, int] = {}
    problems = []
    for i, name in enumerate(names):
        if name in seen:
            loc = (section, sub, i, "name") if sub else (section, i, "name")
            problems.append(
                Problem(
                    loc, f"'{name}' is used twice (first at position {seen[name] + 1}); names must be unique"
                )
            )
        seen.setdefault(name, i)
    return problems


def _choose(
    section: str, sub: str, i: int, field: str, value: str | None, known: list[str], what: str
) -> list[Problem]:
    loc = (section, sub, i, field)
    if value is None:
        if len(known) > 1:
            return [Problem(loc, f"required when there is more than one {what}; one of: {_names(known)}")]
        return []
    if value not in known:
        hint = f"one of: {_names(known)}" if known else f"declare it under topology.{what}s"
        return [Problem(loc, f"no {what} named '{value}'; {hint}")]
    return []


def _names(names: object) -> str:
    return ", ".join(sorted(names)) or "(none)"  # type: ignore[call-overload]


def _counted_members(pattern: object) -> tuple[str, list] | None:
    """The list a pattern's `count` takes the first N of, with its name (None: no count)."""
    if isinstance(pattern, ParallelPattern):
        return "pairs", list(pattern.pairs)
    if isinstance(pattern, StarPattern):
        return "destinations", list(pattern.destinations)
    if isinstance(pattern, FanInPattern):
        return "sources", list(pattern.sources)
    return None
