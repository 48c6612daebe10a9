"""Patterns -> steps: which flows each pattern measures, alone or together, in written order.

A pairs pattern measures connection by connection, every measurement in turn (as the ExoGENI study
ran them); a star, fan-in or parallel pattern measures each pair alone (unless `alone: false`) and
then all together; a mesh measures every ordered pair in rounds where no node is in two flows; a
nodes pattern measures one node at a time (cpushare).
"""

from __future__ import annotations

from typing import Any, NamedTuple

from vnetbench.plan.steps import Flow
from vnetbench.spec.models import (
    Campaign,
    FanInPattern,
    MeshPattern,
    NodesPattern,
    PairsPattern,
    ParallelPattern,
    StarPattern,
)


class StepSpec(NamedTuple):
    """One step of a pattern before sweeps and repetitions."""

    key: str
    pattern: str  # the pattern's label (its name, or KIND + position)
    pattern_kind: str
    group_kind: str  # single | alone | together | parallel
    measurement: str
    flows: tuple[Flow, ...]


def label_of(pattern: Any, index: int) -> str:
    """A pattern's label in step keys: its name, else its kind and position (star2)."""
    return pattern.name or f"{pattern.kind}{index + 1}"


def pattern_of(campaign: Campaign, label: str) -> Any:
    """The pattern a step's label names (None if there is none)."""
    for index, pattern in enumerate(campaign.patterns):
        if label_of(pattern, index) == label:
            return pattern
    return None


def pattern_steps(campaign: Campaign, prefix: str) -> list[StepSpec]:
    """Every pattern's steps in written order; keys start with `prefix` (treatment/repetition)."""
    out: list[StepSpec] = []
    nodes = [n.name for n in campaign.topology.nodes]
    for index, pattern in enumerate(campaign.patterns):
        label = label_of(pattern, index)
        base = f"{prefix}/{label}" if prefix else label
        if isinstance(pattern, NodesPattern):
            out += _nodes_steps(pattern, label, base)
        elif isinstance(pattern, PairsPattern):
            out += _pairs_steps(pattern, label, base)
        elif isinstance(pattern, StarPattern | FanInPattern | ParallelPattern):
            out += _group_steps(pattern, label, base)
        elif isinstance(pattern, MeshPattern):
            out += _mesh_steps(pattern, label, base, nodes)
    return out


def _flows(step_key: str, pairs: list[tuple[str, str]]) -> tuple[Flow, ...]:
    return tuple(Flow(f"{step_key}/{src}>{dst}", src, dst) for src, dst in pairs)


def _nodes_steps(pattern: NodesPattern, label: str, base: str) -> list[StepSpec]:
    """One node at a time, no destination (cpushare)."""
    out = []
    for node in pattern.nodes:
        for mname in pattern.measurements:
            key = f"{base}/{mname}/{node}"
            out.append(StepSpec(key, label, pattern.kind, "single", mname, (Flow(key, node, node),)))
    return out


def _pairs_steps(pattern: PairsPattern, label: str, base: str) -> list[StepSpec]:
    """Connection by connection, every measurement in turn (as the ExoGENI study ran them)."""
    pairs = list(pattern.pairs)
    if pattern.both_directions:
        pairs += [(d, s) for s, d in pattern.pairs]
    out = []
    for src, dst in pairs:
        for mname in pattern.measurements:
            key = f"{base}/{mname}/{src}>{dst}"
            out.append(StepSpec(key, label, pattern.kind, "single", mname, (Flow(key, src, dst),)))
    return out


def _group_steps(
    pattern: StarPattern | FanInPattern | ParallelPattern, label: str, base: str
) -> list[StepSpec]:
    """Each pair alone (unless `alone: false`), then all together behind one barrier."""
    if isinstance(pattern, StarPattern):
        pairs = [(pattern.source, d) for d in pattern.destinations[: pattern.count]]
    elif isinstance(pattern, FanInPattern):
        pairs = [(s, pattern.destination) for s in pattern.sources[: pattern.count]]
    else:  # parallel: disjoint pairs, e.g. tenants each with its own sender and receiver
        pairs = list(pattern.pairs[: pattern.count])
    out = []
    for mname in pattern.measurements:
        if pattern.alone and len(pairs) > 1:
            for src, dst in pairs:
                key = f"{base}/{mname}/alone/{src}>{dst}"
                out.append(StepSpec(key, label, pattern.kind, "alone", mname, (Flow(key, src, dst),)))
        key = f"{base}/{mname}/together"
        group = "together" if len(pairs) > 1 else "single"
        out.append(StepSpec(key, label, pattern.kind, group, mname, _flows(key, pairs)))
    return out


def _mesh_steps(pattern: MeshPattern, label: str, base: str, nodes: list[str]) -> list[StepSpec]:
    """Every ordered pair, in rounds of disjoint pairs measured in parallel."""
    members = pattern.nodes or nodes
    pairs = [(s, d) for s in members for d in members if s != d]
    out = []
    for mname in pattern.measurements:
        for round_no, round_pairs in enumerate(disjoint_rounds(pairs, pattern.max_parallel)):
            if len(round_pairs) == 1:
                src, dst = round_pairs[0]
                key = f"{base}/{mname}/{src}>{dst}"
                out.append(StepSpec(key, label, pattern.kind, "single", mname, (Flow(key, src, dst),)))
            else:
                key = f"{base}/{mname}/round{round_no + 1}"
                out.append(StepSpec(key, label, pattern.kind, "parallel", mname, _flows(key, round_pairs)))
    return out


def disjoint_rounds(pairs: list[tuple[str, str]], max_parallel: int) -> list[list[tuple[str, str]]]:
    """Group pairs into rounds where no node is in two pairs (perfSONAR never overlaps tests on a host)."""
    remaining = list(pairs)
    rounds = []
    while remaining:
        busy: set[str] = set()
        this_round = []
        for pair in list(remaining):
            if len(this_round) >= max_parallel:
                break
            if pair[0] not in busy and pair[1] not in busy:
                this_round.append(pair)
                busy.update(pair)
                remaining.remove(pair)
        rounds.append(this_round)
    return rounds
