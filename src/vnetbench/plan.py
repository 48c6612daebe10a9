"""spec -> plan: the ordered list of measurement steps, as pure data.

A *step* is a set of flows started together behind one barrier (one flow for a pair measured alone,
several for a star's, fan-in's or parallel pattern's simultaneous flows; a `pps` sweep point of a
parallel pattern is one step with one flow per pair). Steps carry stable keys, so `resume` can skip
what is already in the store. Factors turn one spec into *variants* (one per treatment); the
runner rebuilds the topology whenever the variant's topology changes or a rebuild is asked for.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import random
from dataclasses import dataclass, field
from typing import Any

from vnetbench import sweeps
from vnetbench.layout import Layout, build_layout
from vnetbench.model import udp_efficiency
from vnetbench.spec.loader import LoadedSpec, SpecError, SpecInvalid, validate
from vnetbench.spec.models import (
    Campaign,
    FanInPattern,
    MeshPattern,
    NodesPattern,
    PairsPattern,
    ParallelPattern,
    StarPattern,
    UdpMeasurement,
)
from vnetbench.spec.paths import PathError, apply_overrides, get_path


@dataclass(frozen=True)
class Flow:
    key: str
    src: str
    dst: str


@dataclass(frozen=True)
class Step:
    key: str
    seq: int
    variant: int  # index into Plan.variants (the treatment)
    factors: dict[str, Any]
    repetition: int  # 1-based; the replication for designed experiments
    pattern: str
    pattern_kind: str
    group_kind: str  # single | alone | together | parallel
    measurement: str
    kind: str
    flows: tuple[Flow, ...]
    rebuild_before: bool
    not_before_ns: int  # earliest start, as an offset from the campaign's start
    planned_ns: int  # how long the tools will run (for the ETA)
    params: dict[str, Any] = field(default_factory=dict)  # one point of a sweep (pps: rate and size)


@dataclass
class Plan:
    variants: list[Campaign]
    topology_keys: list[str]
    steps: list[Step]
    seed: int
    layouts: list[Layout] = field(default_factory=list)

    @property
    def flow_count(self) -> int:
        return sum(len(s.flows) for s in self.steps)

    @property
    def planned_ns(self) -> int:
        return sum(s.planned_ns for s in self.steps)


def topology_key(campaign: Campaign) -> str:
    dumped = json.dumps(campaign.topology.model_dump(mode="json"), sort_keys=True)
    return hashlib.sha256(dumped.encode()).hexdigest()[:16]


def planned_duration_ns(campaign: Campaign, measurement: str) -> int:
    m = campaign.measurement(measurement)
    if hasattr(m, "duration"):
        return int(m.duration)
    return int(m.count * m.interval)  # rtt


def treatments(spec: LoadedSpec) -> list[dict[str, Any]]:
    """Every combination of factor levels (one empty treatment when there are no factors)."""
    factors = spec.campaign.factors
    if not factors:
        return [{}]
    names = [f.name for f in factors]
    return [dict(zip(names, combo, strict=True)) for combo in itertools.product(*(f.levels for f in factors))]


def make_plan(spec: LoadedSpec, campaign_id: str, seed: int) -> Plan:
    """Expand a loaded spec into variants and steps; raise SpecInvalid for what only shows here."""
    campaign = spec.campaign
    _check_design(spec)
    combos = treatments(spec)
    variants = [_variant(spec, combo) for combo in combos]
    layouts = [build_layout(v, campaign_id) for v in variants]
    for v, layout in zip(variants, layouts, strict=True):
        _check_rates(spec, v, layout)
    keys = [topology_key(v) for v in variants]
    rng = random.Random(seed)

    design = campaign.design
    replications = design.replications if design else campaign.schedule.repetitions
    runs = [(r, t) for r in range(1, replications + 1) for t in range(len(variants))]
    if design and design.randomize:
        if design.block_by_replication:
            blocks = [[run for run in runs if run[0] == r] for r in range(1, replications + 1)]
            for block in blocks:
                rng.shuffle(block)
            runs = [run for block in blocks for run in block]
        else:
            rng.shuffle(runs)

    rebuild_each = bool(design.rebuild) if design else campaign.schedule.rebuild
    interval = campaign.schedule.interval
    steps: list[Step] = []
    for index, (rep, t) in enumerate(runs):
        variant = variants[t]
        prefix = f"t{t + 1:03d}/r{rep:03d}" if campaign.factors else f"r{rep:03d}"
        run_steps = sweeps.expand(variant, _pattern_steps(variant, prefix))
        if campaign.schedule.order == "random":
            rng.shuffle(run_steps)
        for j, ((key, pattern, kind, group, mname, flows), params) in enumerate(run_steps):
            steps.append(
                Step(
                    key=key,
                    seq=len(steps),
                    variant=t,
                    factors=combos[t],
                    repetition=rep,
                    pattern=pattern,
                    pattern_kind=kind,
                    group_kind=group,
                    measurement=mname,
                    kind=variant.measurement(mname).kind,
                    flows=flows,
                    rebuild_before=bool(rebuild_each and index > 0 and j == 0),
                    not_before_ns=(rep - 1) * interval if j == 0 else 0,
                    planned_ns=planned_duration_ns(variant, mname),
                    params=params,
                )
            )
    return Plan(variants, keys, steps, seed, layouts)


def _variant(spec: LoadedSpec, combo: dict[str, Any]) -> Campaign:
    if not combo:
        return spec.campaign
    paths = {f.path: combo[f.name] for f in spec.campaign.factors}
    try:
        data = apply_overrides(spec.data, paths)
    except PathError as err:
        raise SpecInvalid([spec.error(("factors",), str(err))]) from None
    try:
        return validate(data, spec.source)
    except SpecInvalid as err:
        levels = ", ".join(f"{k}={v!r}" for k, v in combo.items())
        raise SpecInvalid(
            [
                SpecError(e.file, e.line, e.path, f"{e.message} (with factor levels {levels})")
                for e in err.errors
            ]
        ) from None


def _check_design(spec: LoadedSpec) -> None:
    campaign = spec.campaign
    errors = []
    for i, factor in enumerate(campaign.factors):
        try:
            get_path(spec.data, factor.path)
        except PathError as err:
            errors.append(spec.error(("factors", i, "path"), str(err)))
    design = campaign.design
    if design:
        if not campaign.factors:
            errors.append(spec.error(("design",), "a design needs factors; add a factors list"))
        if design.kind == "one-factor" and len(campaign.factors) != 1:
            errors.append(
                spec.error(
                    ("design", "kind"),
                    f"one-factor needs exactly one factor, found {len(campaign.factors)}",
                )
            )
        if design.kind == "2k-r":
            for i, factor in enumerate(campaign.factors):
                if len(factor.levels) != 2:
                    errors.append(
                        spec.error(
                            ("factors", i, "levels"),
                            "a 2k-r design needs exactly two levels per factor",
                        )
                    )
        if campaign.schedule.repetitions != 1:
            errors.append(
                spec.error(
                    ("schedule", "repetitions"),
                    "with a design, replications are set by design.replications; remove this",
                )
            )
    if errors:
        raise SpecInvalid(errors)


def _check_rates(spec: LoadedSpec, campaign: Campaign, layout: Layout) -> None:
    """`rate: link` needs a shaped link on the path of every pair it is measured on."""
    errors = []
    for i, m in enumerate(campaign.measurements):
        if not isinstance(m, UdpMeasurement) or m.rate != "link":
            continue
        for _, _, _, _, mname, flows in _pattern_steps(campaign, ""):
            for flow in flows if mname == m.name else ():
                if layout.bottleneck_rate(flow.src, flow.dst) is None:
                    errors.append(
                        spec.error(
                            ("measurements", i, "rate"),
                            f"'link' but the path {flow.src}→{flow.dst} has no link with a rate; give a rate "
                            "(e.g. 100mbit) or set a rate on the link",
                        )
                    )
                    break
    if errors:
        raise SpecInvalid(errors[:5])


def offered_bps(campaign: Campaign, layout: Layout, measurement: str, src: str, dst: str) -> float | None:
    """The UDP payload rate to offer: explicit, or the link's overhead-model maximum × rate_factor."""
    m = campaign.measurement(measurement)
    if not isinstance(m, UdpMeasurement):
        return None
    if m.rate == "link":
        rate = layout.bottleneck_rate(src, dst)
        if rate is None:
            return None
        base = udp_efficiency(m.length, layout.path_mtu(src, dst)).goodput_bps(rate)
    else:
        base = float(m.rate)
    return base * m.rate_factor


StepSpec = tuple[str, str, str, str, str, tuple[Flow, ...]]


def _pattern_steps(campaign: Campaign, prefix: str) -> list[StepSpec]:
    """(key, pattern, pattern_kind, group_kind, measurement, flows) in written order."""
    out: list[StepSpec] = []
    nodes = [n.name for n in campaign.topology.nodes]
    for index, pattern in enumerate(campaign.patterns):
        label = pattern.name or f"{pattern.kind}{index + 1}"
        base = f"{prefix}/{label}" if prefix else label

        def flow(step_key: str, src: str, dst: str) -> Flow:
            return Flow(f"{step_key}/{src}>{dst}", src, dst)

        if isinstance(pattern, NodesPattern):  # one node at a time, no destination (cpushare)
            for node in pattern.nodes:
                for mname in pattern.measurements:
                    key = f"{base}/{mname}/{node}"
                    out.append((key, label, pattern.kind, "single", mname, (Flow(key, node, node),)))
            continue
        if isinstance(pattern, PairsPattern):
            # Connection by connection, every measurement in turn (as the ExoGENI study ran them).
            pairs = list(pattern.pairs)
            if pattern.both_directions:
                pairs += [(d, s) for s, d in pattern.pairs]
            for src, dst in pairs:
                for mname in pattern.measurements:
                    key = f"{base}/{mname}/{src}>{dst}"
                    out.append((key, label, pattern.kind, "single", mname, (Flow(key, src, dst),)))
            continue
        for mname in pattern.measurements:
            if isinstance(pattern, StarPattern | FanInPattern | ParallelPattern):
                if isinstance(pattern, StarPattern):
                    pairs = [(pattern.source, d) for d in pattern.destinations[: pattern.count]]
                elif isinstance(pattern, FanInPattern):
                    pairs = [(s, pattern.destination) for s in pattern.sources[: pattern.count]]
                else:  # parallel: disjoint pairs, e.g. tenants each with its own sender and receiver
                    pairs = list(pattern.pairs[: pattern.count])
                if pattern.alone and len(pairs) > 1:
                    for src, dst in pairs:
                        key = f"{base}/{mname}/alone/{src}>{dst}"
                        out.append((key, label, pattern.kind, "alone", mname, (Flow(key, src, dst),)))
                key = f"{base}/{mname}/together"
                group = "together" if len(pairs) > 1 else "single"
                out.append((key, label, pattern.kind, group, mname, tuple(flow(key, s, d) for s, d in pairs)))
            elif isinstance(pattern, MeshPattern):
                members = pattern.nodes or nodes
                pairs = [(s, d) for s in members for d in members if s != d]
                for round_no, round_pairs in enumerate(_disjoint_rounds(pairs, pattern.max_parallel)):
                    if len(round_pairs) == 1:
                        src, dst = round_pairs[0]
                        key = f"{base}/{mname}/{src}>{dst}"
                        out.append((key, label, pattern.kind, "single", mname, (Flow(key, src, dst),)))
                    else:
                        key = f"{base}/{mname}/round{round_no + 1}"
                        out.append(
                            (
                                key,
                                label,
                                pattern.kind,
                                "parallel",
                                mname,
                                tuple(flow(key, s, d) for s, d in round_pairs),
                            )
                        )
    return out


def _disjoint_rounds(pairs: list[tuple[str, str]], max_parallel: int) -> list[list[tuple[str, str]]]:
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
