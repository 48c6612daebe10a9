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
import math
import random
from typing import Any

from vnetbench.kinds import PathFacts, kind_of
from vnetbench.kinds.overhead import IPV4_HEADER, UDP_HEADER
from vnetbench.layout import Layout, build_layout, link_one_way_ns, link_shaper
from vnetbench.plan import sweeps
from vnetbench.plan.patterns import pattern_of, pattern_steps
from vnetbench.plan.steps import Plan, Step
from vnetbench.spec.errors import dotted
from vnetbench.spec.fractions import fraction_runs, parse_generators
from vnetbench.spec.loader import LoadedSpec, SpecError, SpecInvalid, validate
from vnetbench.spec.models import Campaign
from vnetbench.spec.paths import PathError, apply_overrides, get_path, path_loc
from vnetbench.spec.units import format_duration


def topology_key(campaign: Campaign) -> str:
    """A short hash of a variant's topology: steps with equal keys share a build."""
    dumped = json.dumps(campaign.topology.model_dump(mode="json"), sort_keys=True)
    return hashlib.sha256(dumped.encode()).hexdigest()[:16]


def planned_duration_ns(campaign: Campaign, measurement: str) -> int:
    """How long a measurement's tools run (the kind says: a duration, or count × interval)."""
    m = campaign.measurement(measurement)
    return kind_of(m.kind).planned_ns(m)


def path_facts(layout: Layout, src: str, dst: str) -> PathFacts:
    """What a measurement kind (and the runner's start check) needs to know of the path between two nodes."""
    links = layout.path_links(src, dst)
    queues = [shaper.queue_bytes for link in links if (shaper := link_shaper(link))]
    return PathFacts(
        layout.bottleneck_rate(src, dst),
        layout.path_mtu(src, dst),
        rtt_s=2 * sum(link_one_way_ns(link) for link in links) / 1e9,
        queue_bytes=min(queues, default=None),
    )


def treatments(spec: LoadedSpec) -> list[dict[str, Any]]:
    """Every combination of factor levels (one empty treatment when there are no factors); for a 2k-p
    design only the runs of its fraction."""
    factors = spec.campaign.factors
    if not factors:
        return [{}]
    names = [f.name for f in factors]
    design = spec.campaign.design
    if design and design.kind == "2k-p":  # only the runs of the fraction (checked in _check_design)
        gens = parse_generators(design.generators, len(factors))
        return [
            dict(zip(names, combo, strict=True)) for combo in fraction_runs([f.levels for f in factors], gens)
        ]
    return [dict(zip(names, combo, strict=True)) for combo in itertools.product(*(f.levels for f in factors))]


def make_plan(spec: LoadedSpec, campaign_id: str, seed: int) -> Plan:
    """Expand a loaded spec into variants and steps; raise SpecInvalid for what only shows here."""
    campaign = spec.campaign
    _check_design(spec)
    combos = treatments(spec)
    variants = [_variant(spec, combo) for combo in combos]
    refused: dict[tuple[int, str], str] = {}
    for t, v in enumerate(variants):
        if spec.stored:  # a stored campaign ran before these checks: its measured steps stay readable
            refused.update(_refused_measurements(spec, t, v))
        else:
            _check_tools(spec, v)
            _check_existing_hosts(spec, v)
    layouts = [build_layout(v, campaign_id) for v in variants]
    for v, layout in zip(variants, layouts, strict=True):
        _check_rates(spec, v, layout)
        if not spec.stored:  # a stored campaign's oversized probes fail at the tool, with its words
            _check_unfragmented(spec, v, layout)
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
        run_steps = sweeps.expand(variant, pattern_steps(variant, prefix))
        if campaign.schedule.order == "random":
            rng.shuffle(run_steps)
        for j, (spec_step, params) in enumerate(run_steps):
            steps.append(
                Step(
                    key=spec_step.key,
                    seq=len(steps),
                    variant=t,
                    factors=combos[t],
                    repetition=rep,
                    pattern=spec_step.pattern,
                    pattern_kind=spec_step.pattern_kind,
                    group_kind=spec_step.group_kind,
                    measurement=spec_step.measurement,
                    kind=variant.measurement(spec_step.measurement).kind,
                    flows=spec_step.flows,
                    rebuild_before=bool(rebuild_each and index > 0 and j == 0),
                    not_before_ns=(rep - 1) * interval if j == 0 else 0,
                    planned_ns=planned_duration_ns(variant, spec_step.measurement),
                    params=params,
                )
            )
    if not spec.stored:
        _check_interval(spec, steps)
    background = sum(_background_flows(variants[s.variant], s.pattern) for s in steps)
    return Plan(variants, keys, steps, seed, layouts, background, refused)


def _background_flows(variant: Campaign, pattern_label: str) -> int:
    """How many background flows run beside a step of this pattern (run/background.py starts them)."""
    pattern = pattern_of(variant, pattern_label)
    if pattern is None:
        return 0
    return sum(
        len(kind_of(variant.measurement(name).kind).background_pairs(variant.measurement(name)))
        for name in pattern.background
    )


def _variant(spec: LoadedSpec, combo: dict[str, Any]) -> Campaign:
    if not combo:
        return spec.campaign
    paths = {f.path: combo[f.name] for f in spec.campaign.factors}
    try:
        data = apply_overrides(spec.data, paths)
    except PathError as err:
        raise SpecInvalid([spec.error(("factors",), str(err))]) from None
    try:
        return validate(data, spec.source, spec.line_of, spec.stored)
    except SpecInvalid as err:
        raise SpecInvalid([_factor_error(spec, data, combo, e) for e in err.errors]) from None


def _factor_error(spec: LoadedSpec, data: dict[str, Any], combo: dict[str, Any], e: SpecError) -> SpecError:
    """An error of a treatment, located at the factor that caused it: a level the field refuses at
    `factors[i].levels[j]`, a path that names no field at `factors[i].path`. Others say the levels."""
    for i, factor in enumerate(spec.campaign.factors):
        target = dotted(path_loc(data, factor.path))
        if e.path != target and not e.path.startswith((target + ".", target + "[")):
            continue
        if e.message.startswith("unknown key"):
            return spec.error(
                ("factors", i, "path"), f"'{factor.path}' names no field ({e.path}): {e.message}"
            )
        level = combo[factor.name]
        j = next(k for k, lv in enumerate(factor.levels) if lv == level and type(lv) is type(level))
        return spec.error(
            ("factors", i, "levels", j), f"level {level!r} for {factor.path} ({e.path}): {e.message}"
        )
    levels = ", ".join(f"{k}={v!r}" for k, v in combo.items())
    return SpecError(e.file, e.line, e.path, f"{e.message} (with factor levels {levels})")


def _check_design(spec: LoadedSpec) -> None:
    campaign = spec.campaign
    errors = _check_factor_paths(spec)
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
        if design.kind == "two-factor" and len(campaign.factors) != 2:
            errors.append(
                spec.error(
                    ("design", "kind"), f"two-factor needs exactly two factors, found {len(campaign.factors)}"
                )
            )
        if design.kind in ("2k-r", "2k-p"):
            for i, factor in enumerate(campaign.factors):
                if len(factor.levels) != 2:
                    errors.append(
                        spec.error(
                            ("factors", i, "levels"),
                            f"a {design.kind} design needs exactly two levels per factor",
                        )
                    )
        errors += _check_generators(spec)
        if campaign.schedule.repetitions != 1:
            errors.append(
                spec.error(
                    ("schedule", "repetitions"),
                    "with a design, replications are set by design.replications; remove this",
                )
            )
    if errors:
        raise SpecInvalid(errors)


def _check_factor_paths(spec: LoadedSpec) -> list[SpecError]:
    """Every factor's path names a place in the spec, and no two factors set the same field (the
    second would overwrite the first's level in every treatment)."""
    errors = []
    first: dict[tuple[str | int, ...], int] = {}
    for i, factor in enumerate(spec.campaign.factors):
        try:
            get_path(spec.data, factor.path)
            loc = path_loc(spec.data, factor.path)
        except PathError as err:
            errors.append(spec.error(("factors", i, "path"), str(err)))
            continue
        if loc in first and not spec.stored:
            other = spec.campaign.factors[first[loc]]
            errors.append(
                spec.error(
                    ("factors", i, "path"),
                    f"'{factor.path}' is set by factor '{other.name}' (factors[{first[loc]}]) too; "
                    "each factor sets a field of its own: merge their levels into one factor, or remove one",
                )
            )
        first.setdefault(loc, i)
    return errors


def _check_generators(spec: LoadedSpec) -> list[SpecError]:
    """A 2k-p design's generators are valid products of the factors' letters; no other kind has any."""
    design = spec.campaign.design
    if design is None:
        return []
    if design.kind != "2k-p":
        if design.generators:
            return [spec.error(("design", "generators"), f"generators are for kind 2k-p, not {design.kind}")]
        return []
    if not design.generators:
        return [spec.error(("design", "generators"), "a 2k-p design needs generators, e.g. [D=ABC]")]
    try:
        parse_generators(design.generators, len(spec.campaign.factors))
    except ValueError as err:
        return [spec.error(("design", "generators"), str(err))]
    return []


def _tool_errors(spec: LoadedSpec, campaign: Campaign) -> list[tuple[str, SpecError]]:
    """(measurement name, located error) for what a measurement's tool cannot do with its fields."""
    return [
        (m.name, spec.error(("measurements", i, field), message))
        for i, m in enumerate(campaign.measurements)
        for field, message in kind_of(m.kind).driver.spec_problems(m)
    ]


def _refused_measurements(spec: LoadedSpec, variant: int, campaign: Campaign) -> dict[tuple[int, str], str]:
    """A stored campaign's measurements that their tool cannot run (a spec stored before the check):
    not refused here, which would leave the campaign unresumable and its measured steps unread, but
    each of their steps is stored as failed with this reason, and the rest runs (run/runner.py)."""
    found: dict[str, list[str]] = {}
    for name, error in _tool_errors(spec, campaign):
        found.setdefault(name, []).append(str(error))
    return {
        (variant, name): f"not run: {'; '.join(errors)} (this campaign's stored spec predates the check; "
        "correct the spec and run it as a new campaign)"
        for name, errors in found.items()
    }


def _check_tools(spec: LoadedSpec, campaign: Campaign) -> None:
    """What a measurement's tool cannot do with its fields (iperf3's whole seconds, ping's 2 ms), refused
    here rather than by the driver in the middle of a run; a timeout that ends every step early."""
    errors = [error for _, error in _tool_errors(spec, campaign)]
    for i, m in enumerate(campaign.measurements):
        runs = kind_of(m.kind).planned_ns(m)
        if m.timeout is not None and m.kind != "background" and m.timeout <= runs:
            errors.append(
                spec.error(
                    ("measurements", i, "timeout"),
                    f"{format_duration(m.timeout)} is not longer than the measurement runs "
                    f"({format_duration(runs)}): every step would be ended before its tool finishes; "
                    "give more, or remove it (the default is that + 45 s)",
                )
            )
    if errors:
        raise SpecInvalid(errors)


# What a link or host can ask for that existing hosts cannot give: the SSH provider measures them as they are.
_EMULATED = ("delay", "jitter", "delay_cdf", "loss", "overlay")


def _check_existing_hosts(spec: LoadedSpec, campaign: Campaign) -> None:
    """A campaign with an inventory emulates nothing and needs a host per node: refused here, before it
    is stored (a stored one could not be fixed: `resume` runs the stored spec), with the line to fix.
    The SSH provider's preflight says the same of a campaign stored before this check."""
    inventory, topology = campaign.inventory, campaign.topology
    if inventory is None:
        return
    errors = []
    for i, node in enumerate(topology.nodes):
        if inventory.host_of(node.name) is None:
            errors.append(
                spec.error(
                    ("topology", "nodes", i, "name"),
                    f"node {node.name!r} has no inventory host: name a host {node.name!r} or map it under "
                    f"inventory.nodes ({node.name}: HOST)",
                )
            )
    for i, link in enumerate(topology.links):
        for field in (f for f in _EMULATED if getattr(link, f) is not None):
            errors.append(
                spec.error(
                    ("topology", "links", i, field),
                    "cannot be emulated on existing hosts over SSH; remove it (a link's rate is kept only "
                    "as the nominal capacity for the overhead model)",
                )
            )
    for part in ("hosts", "nodes"):
        for i, item in enumerate(getattr(topology, part)):
            if getattr(item, "cpu", None) is not None:
                errors.append(
                    spec.error(
                        ("topology", part, i, "cpu"),
                        "CPU quotas are not applied on existing hosts over SSH; remove it",
                    )
                )
    if errors:
        raise SpecInvalid(errors)


def _check_interval(spec: LoadedSpec, steps: list[Step]) -> None:
    """A schedule interval shorter than one repetition's measuring alone cannot be kept."""
    interval = spec.campaign.schedule.interval
    per_rep: dict[int, int] = {}
    for step in steps:
        per_rep[step.repetition] = per_rep.get(step.repetition, 0) + step.planned_ns
    longest = max(per_rep.values(), default=0)
    if 0 < interval < longest and len(per_rep) > 1:
        raise SpecInvalid(
            [
                spec.error(
                    ("schedule", "interval"),
                    f"{format_duration(interval)} is shorter than one repetition's measuring alone "
                    f"({format_duration(longest)}): repetitions would start late, not every "
                    f"{format_duration(interval)}; give at least {math.ceil(longest / 1e9)}s, or 0 to run "
                    "them back to back",
                )
            ]
        )


def _check_rates(spec: LoadedSpec, campaign: Campaign, layout: Layout) -> None:
    """What a measurement needs of every path it is measured on (`rate: link` a shaped link)."""
    errors = []
    steps = pattern_steps(campaign, "")
    for i, m in enumerate(campaign.measurements):
        kind = kind_of(m.kind)
        for step in steps:
            for flow in step.flows if step.measurement == m.name else ():
                problem = kind.path_problem(m, path_facts(layout, flow.src, flow.dst), flow.src, flow.dst)
                if problem is not None:
                    field, message = problem
                    errors.append(spec.error(("measurements", i, field), message))
                    break
    if errors:
        raise SpecInvalid(errors[:5])


def _check_unfragmented(spec: LoadedSpec, campaign: Campaign, layout: Layout) -> None:
    """A probe datagram larger than its path's MTU allows: vnb-probe refuses to send it (it would leave
    as fragments), so it is refused here rather than failing every step at the tool."""
    errors = []
    steps = pattern_steps(campaign, "")
    for i, m in enumerate(campaign.measurements):
        kind = kind_of(m.kind)
        sized = kind.unfragmented_sizes(m)
        if sized is None:
            continue
        field, sizes = sized
        pairs = [(f.src, f.dst) for s in steps if s.measurement == m.name for f in s.flows]
        for src, dst in dict.fromkeys([*pairs, *kind.background_pairs(m)]):
            mtu = layout.path_mtu(src, dst)
            largest = mtu - IPV4_HEADER - UDP_HEADER
            too_big = [size for size in sizes if size > largest]
            if too_big:
                message = (
                    f"{too_big[0]} bytes + {IPV4_HEADER + UDP_HEADER} of IPv4/UDP headers exceed the path "
                    f"MTU {mtu} of {src}→{dst}, and vnb-probe sends no fragments; use at most {largest} "
                    "bytes, or raise the links' mtu"
                )
                errors.append(spec.error(("measurements", i, field), message))
                break
    if errors:
        raise SpecInvalid(errors[:5])


def offered_bps(campaign: Campaign, layout: Layout, measurement: str, src: str, dst: str) -> float | None:
    """The payload rate a plain (unswept) step of a measurement offers on this path; None: none."""
    m = campaign.measurement(measurement)
    found = kind_of(m.kind).offered(m, path_facts(layout, src, dst), {})
    return None if found is None else found.bps
