"""What the dashboard shows, as JSON-ready dicts: campaigns with progress, the coloured grid, a pair's series.

Pure functions over the store's live reads (store/live.py) and the campaign's spec; no SQL here.
"""

from __future__ import annotations

import difflib
import json
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from vnetbench.analysis.knee import knee
from vnetbench.dashboard.changepoints import MIN_POINTS, change_points
from vnetbench.kinds import kind_of
from vnetbench.plan import make_plan, treatments
from vnetbench.spec.errors import SpecInvalid
from vnetbench.spec.loader import parse_spec
from vnetbench.spec.models import Campaign
from vnetbench.spec.thresholds import Threshold, thresholds_for
from vnetbench.store.live import CampaignProgress, GridCell, MonitorRun, SeriesPoint, StepLoad, SweepRow

# The per-interval sample that goes with a summary metric (ping's summary is rtt_mean_ns, its samples rtt_ns).
SAMPLE_METRIC_OF = {
    "rtt_mean_ns": "rtt_ns",
    "rtt_median_ns": "rtt_ns",
    "rtt_min_ns": "rtt_ns",
    "rtt_max_ns": "rtt_ns",
    "mean_rtt_ns": "rtt_ns",
    "jitter_mean_ns": "jitter_ns",
}


def sample_metric_of(metric: str) -> str:
    return SAMPLE_METRIC_OF.get(metric, metric)


@dataclass
class CampaignSpec:
    """What the dashboard needs of a campaign's spec, parsed once (a stored spec never changes)."""

    measurement_order: list[str]
    thresholds: dict[str, dict[str, Threshold]]  # measurement name -> metric -> threshold
    node_order: list[str]
    total_steps: int | None
    problem: str | None = None  # why the spec could not be read (the grid then uses the defaults)
    configured: dict[str, set[str]] = field(default_factory=dict)  # measurement -> metrics the spec names
    background_patterns: set[str] = field(default_factory=set)  # patterns whose steps run background flows
    # measurement -> its sweep's points (key suffix -> params, in the sweep's order) where its kind sweeps
    sweeps: dict[str, dict[str, dict[str, Any]]] = field(default_factory=dict)
    pattern_order: list[str] = field(default_factory=list)
    # (measurement, treatment) -> the suffixes of the points that treatment's variant sweeps
    treatment_points: dict[tuple[str, str], set[str]] = field(default_factory=dict)

    def thresholds_of(self, measurement: str) -> dict[str, Threshold]:
        return self.thresholds.get(measurement) or thresholds_for(None, None)

    @property
    def metrics(self) -> list[str]:
        seen: dict[str, None] = dict.fromkeys(thresholds_for(None, None))
        for per_metric in self.thresholds.values():
            seen.update(dict.fromkeys(per_metric))
        return list(seen)


def read_campaign_spec(row: dict[str, Any]) -> CampaignSpec:
    """Thresholds, orders and the planned step count from the stored spec text."""
    try:
        loaded = parse_spec(row["spec_text"], row["spec_source"], stored=True)
    except SpecInvalid as exc:
        return CampaignSpec([], {}, [], None, problem=str(exc))
    campaign = loaded.campaign
    thresholds = {m.name: thresholds_for(campaign.thresholds, m.thresholds) for m in campaign.measurements}
    configured = {
        m.name: {*(campaign.thresholds or {}), *(m.thresholds or {})} for m in campaign.measurements
    }
    nodes = [n.name for n in campaign.topology.nodes]
    names = [m.name for m in campaign.measurements]
    background = {p.name for p in campaign.patterns if getattr(p, "background", None)}
    patterns = [p.name for p in campaign.patterns]
    found = CampaignSpec(names, thresholds, nodes, None, None, configured, background, {}, patterns)
    try:
        plan = make_plan(loaded, row["id"], row["seed"])
    except SpecInvalid as exc:
        found.problem, found.sweeps = str(exc), sweeps_of([campaign])
        return found
    found.total_steps, found.sweeps = len(plan.steps), sweeps_of([campaign, *plan.variants])
    # a designed experiment's treatments may sweep different points: each is complete on its own
    found.treatment_points = {
        (name, _treatment(combo)): set(points)
        for combo, variant in zip(treatments(loaded), plan.variants, strict=True)
        for name, points in sweeps_of([variant]).items()
    }
    return found


def sweeps_of(campaigns: Iterable[Campaign]) -> dict[str, dict[str, dict[str, Any]]]:
    """Per measurement whose kind sweeps (pps: sizes x rates), its points: the key suffix the plan
    appends to each point's keys (plan/sweeps.py) and the point's parameters. A designed experiment's
    variants may sweep other points: their union."""
    out: dict[str, dict[str, dict[str, Any]]] = {}
    for campaign in campaigns:
        for m in campaign.measurements:
            for suffix, params in kind_of(m.kind).sweep(m):
                if suffix:
                    out.setdefault(m.name, {})[suffix] = dict(params)
    return out


def sweep_point(points: dict[str, dict[str, Any]] | None, key: str) -> tuple[str, dict[str, Any]] | None:
    """The sweep point whose suffix ends this measurement key (None: not a sweep point)."""
    for suffix, params in (points or {}).items():
        if key.endswith(suffix):
            return suffix, params
    return None


def threshold_problems(spec: CampaignSpec, stored: dict[str, set[str]]) -> list[str]:
    """Thresholds the spec sets on a metric that no result of their measurements stored (a typo such
    as loss_ration colours nothing, silently): one line per metric, with the closest stored name.
    Measurements without results yet say nothing."""
    missing: dict[str, list[str]] = {}
    for measurement, metrics in spec.configured.items():
        known = stored.get(measurement)
        for metric in sorted(metrics - known) if known else []:
            missing.setdefault(metric, []).append(measurement)
    lines = []
    every = sorted(set().union(*stored.values())) if stored else []
    for metric, measurements in missing.items():
        close = difflib.get_close_matches(metric, every, n=1)
        hint = f"did you mean {close[0]}?" if close else f"the metrics stored: {', '.join(every)}"
        lines.append(
            f"thresholds: no result of {', '.join(measurements)} stores a metric '{metric}', so its "
            f"threshold colours nothing; {hint}"
        )
    return lines


def without_grid(spec: CampaignSpec, stored: dict[str, set[str]]) -> list[dict[str, Any]]:
    """Measurements with results but no grid: none of the metrics they stored has a threshold (a
    cpushare's cpu_share_ratio by default), so the page says where they went instead of leaving them out."""
    out = []
    for measurement in _ordered(set(stored), spec.measurement_order):
        metrics = stored[measurement]
        if metrics and not metrics & set(spec.thresholds_of(measurement)):
            out.append({"measurement": measurement, "metrics": sorted(metrics)})
    return out


def campaign_json(
    row: dict[str, Any],
    spec: CampaignSpec,
    progress: CampaignProgress | None,
    report_url: str | None,
    monitor_run: MonitorRun | None = None,
) -> dict[str, Any]:
    stored = progress.steps_done if progress else 0
    done, total = stored, spec.total_steps
    if monitor_run is not None:
        # a monitored campaign repeats its plan run after run: its progress is its newest run's steps
        # (every run's steps stored against one run's total read as 6 of 2 done after 3 runs)
        done, total = monitor_run.steps_done, monitor_run.steps_total
    return {
        "id": row["id"],
        "name": row["name"],
        "status": row["status"],
        "created_utc_ns": row["created_utc_ns"],
        "steps_done": done,
        "steps_total": total,
        "steps_stored": stored,  # steps with a stored attempt, over every run or repetition
        "runs": None if monitor_run is None else monitor_run.run,  # runs started (the newest's number)
        "measurements_ok": progress.measurements_ok if progress else 0,
        "attempts_failed": progress.attempts_failed if progress else 0,
        "last_result_utc_ns": progress.last_result_utc_ns if progress else None,
        "latest_repetition": progress.latest_repetition if progress else None,
        # a monitored campaign's newest run (its steps_done/steps_total are the campaign's above)
        "monitor_run": None
        if monitor_run is None
        else {
            "run": monitor_run.run,
            "status": monitor_run.status,
            "steps_done": monitor_run.steps_done,
            "steps_total": monitor_run.steps_total,
        },
        "report_url": report_url,
        "url": f"/campaigns/{row['id']}",
    }


# ---------------------------------------------------------------- the grid


def compared_value(
    cell_value: float | None,
    th: Threshold,
    expected_max_bps: float | None,
    lowest: float | None,
    highest: float | None,
    offered_bps: float | None = None,
) -> tuple[float | None, str]:
    """The number held against the levels, and what it is (for the cell's tooltip).

    `of: expected-max` compares with the most the flow could carry: the overhead model's maximum of its
    path, or its offered rate where that is lower (a constant-rate flow offered 20 Mbit/s on a 115 Mbit/s
    link that received 20 Mbit/s lost nothing: 100 % of what it could get, not 18 % of the link)."""
    if cell_value is None or not math.isfinite(cell_value):
        return None, "no value"
    if th.of == "value":
        return cell_value, "value"
    if th.of == "expected-max":
        offered = offered_bps if offered_bps and math.isfinite(offered_bps) else None
        if offered and (not expected_max_bps or offered < expected_max_bps):
            return cell_value / offered, "share of the offered rate"
        if expected_max_bps:
            return cell_value / expected_max_bps, "share of the expected maximum"
    # baseline: the pair's best value in the campaign so far (the lowest where higher is worse)
    best = lowest if th.higher_is_worse else highest
    why = "ratio to the pair's best" + (" (no expected maximum)" if th.of == "expected-max" else "")
    if not best:
        return None, why
    return cell_value / best, why


def level(compared: float | None, th: Threshold) -> str:
    """ok | warning | critical, or none when there is nothing to compare."""
    if compared is None:
        return "none"
    warning, critical = float(th.warning), float(th.critical)
    if th.higher_is_worse:
        return "critical" if compared >= critical else "warning" if compared >= warning else "ok"
    return "critical" if compared <= critical else "warning" if compared <= warning else "ok"


def unit_of(metric: str) -> str:
    for suffix, unit in (("_bps", "bit/s"), ("_ns", "ns"), ("_ratio", "ratio"), ("_pps", "packets/s")):
        if metric.endswith(suffix):
            return unit
    return ""


def fmt_rate(value: float | None, unit: str) -> str:
    """A rate for a label or a cell: '60 K pps', '1.5 M pps', '20 Mbit/s', '144 kbit/s'."""
    if value is None or not math.isfinite(value):
        return "–"
    if unit == "pps":
        steps = ((1e6, "M pps"), (1e3, "K pps"), (1.0, "pps"))
    else:
        steps = ((1e9, "Gbit/s"), (1e6, "Mbit/s"), (1e3, "kbit/s"), (1.0, "bit/s"))
    factor, label = next(((f, u) for f, u in steps if abs(value) >= f), steps[-1])
    return f"{value / factor:.4g} {label}"


def _ordered(names: set[str], order: list[str]) -> list[str]:
    rank = {n: i for i, n in enumerate(order)}
    return sorted(names, key=lambda n: (rank.get(n, len(rank)), n))


def threshold_json(th: Threshold) -> dict[str, Any]:
    return {
        "warning": th.warning,
        "critical": th.critical,
        "of": th.of,
        "higher_is_worse": th.higher_is_worse,
    }


def grid_json(
    cells: list[GridCell],
    spec: CampaignSpec,
    sweep_rows: Sequence[SweepRow] = (),
    loads: dict[str, StepLoad] | None = None,
) -> list[dict[str, Any]]:
    """One grid per (measurement, alone or contended, metric with a threshold), sources x destinations;
    contended flows one grid per pattern (2 and 4 tenants are not one cell). A sweep's cells summarise
    its newest complete sweep (sweep_cell) instead of showing its newest point."""
    grids: dict[tuple[str, bool, str, str], list[GridCell]] = {}
    for cell in cells:
        if cell.metric in spec.thresholds_of(cell.measurement):
            key = (cell.measurement, cell.contended, cell.pattern or "", cell.metric)
            grids.setdefault(key, []).append(cell)
    sweeps = sweep_summaries(sweep_rows, spec, loads or {})
    out = []
    measurement_rank = {n: i for i, n in enumerate(spec.measurement_order)}
    pattern_rank = {n: i for i, n in enumerate(spec.pattern_order)}

    def key(k: tuple[str, bool, str, str]) -> tuple[Any, ...]:
        metrics = list(spec.thresholds_of(k[0]))
        pattern = (pattern_rank.get(k[2], len(pattern_rank)), k[2])
        return (measurement_rank.get(k[0], len(measurement_rank)), k[0], k[1], pattern, metrics.index(k[3]))

    for measurement, contended, pattern, metric in sorted(grids, key=key):
        th = spec.thresholds_of(measurement)[metric]
        members = grids[(measurement, contended, pattern, metric)]
        is_sweep = measurement in spec.sweeps
        rendered = []
        for c in members:
            if is_sweep:
                mine = [v for k, v in sweeps.items() if k[:4] == (measurement, contended, c.src, c.dst)]
                summary = _sweep_for_cell(mine, c.pattern)
                if summary is not None:
                    rendered.append(sweep_cell(c, summary, metric, th, spec.thresholds_of(measurement)))
                    continue
            compared, what = compared_value(
                c.latest, th, c.expected_max_bps, c.lowest, c.highest, c.offered_bps
            )
            rendered.append(
                {
                    "src": c.src,
                    "dst": c.dst,
                    "value": c.latest,
                    "compared": compared,
                    "compared_as": what,
                    "level": level(compared, th),
                    "count": c.count,
                    "repetition": c.latest_repetition,
                    "measurement_id": c.latest_id,
                    "started_utc_ns": c.latest_utc_ns,
                    "pattern": c.pattern,
                }
            )
        out.append(
            {
                "measurement": measurement,
                "contended": contended,
                "pattern": pattern or None,
                "metric": metric,
                "unit": unit_of(metric),
                "threshold": threshold_json(th),
                "sweep": is_sweep,
                "sources": _ordered({c.src for c in members}, spec.node_order),
                "destinations": _ordered({c.dst for c in members}, spec.node_order),
                "cells": rendered,
            }
        )
    return out


# ---------------------------------------------------------------- a sweep's cell

# A sweep's knee against the best knee of the pair's earlier complete sweeps: a knee one rate lower on
# the openstack-bridges ladder (100 K -> 60 K pps) is 0.6, warning; half or less (60 K -> 30 K), critical.
KNEE_LEVELS = Threshold(warning=0.9, critical=0.5, of="baseline")
LOSS_LEVELS = thresholds_for(None, None)["loss_ratio"]  # a sweep's first run: its loss within capacity


@dataclass
class SweepSummary:
    """One sweep of a pair (measurement, contended, src, dst, pattern, treatment) as its cell shows it:
    the newest complete sweep (every point the spec sweeps stored ok in one repetition), its knee per
    packet size, the best knees of the complete sweeps before it, and its loss where the path could
    carry what was offered."""

    pattern: str
    treatment: str
    expected_points: int
    repetition: int | None = None  # of the newest complete sweep; None: none complete yet
    knees: dict[int, float | None] = field(default_factory=dict)  # payload bytes -> knee (pps)
    ceilings: dict[int, float | None] = field(default_factory=dict)  # payload bytes -> most received (pps)
    previous: int = 0  # complete sweeps before it
    previous_best: dict[int, float | None] = field(default_factory=dict)  # their best knee per size
    within: int = 0  # its points offered at or below the path's capacity (a known one)
    worst_loss_within: float | None = None
    newest_id: int = 0
    newest_utc_ns: int | None = None  # its newest point's start (of the incomplete one, else)
    progress: tuple[int, int] | None = None  # (repetition, points stored) of a newer, incomplete sweep


def _within_capacity(row: SweepRow, pps: float, load: StepLoad | None) -> bool | None:
    """Whether a point was offered at or below its path's capacity: the overhead model's most goodput
    of its shaped links and a switch's packet-rate limit (path_pps_limit); None: no capacity known.
    A point measured with others (`load`: its step's flows) counts what they offered together, as if
    they all crossed the same link: 2 tenants at 30 K pps each fill a 60 K pps switch. Where they do not
    share it, fewer points count as within capacity: the cell then says less, never wrongly critical."""
    limit = row.values.get("path_pps_limit")
    if row.expected_max_bps is None and not limit:
        return None
    bps, packets = row.offered_bps, pps
    if load is not None and load.flows > 1:
        bps, packets = load.offered_bps, load.offered_pps
    within = True
    if row.expected_max_bps is not None:
        within = bps is not None and bps <= row.expected_max_bps * (1 + 1e-9)
    if limit:
        within = within and packets is not None and packets <= limit * (1 + 1e-9)
    return within


def sweep_summaries(
    rows: Sequence[SweepRow], spec: CampaignSpec, loads: dict[str, StepLoad] | None = None
) -> dict[tuple[Any, ...], SweepSummary]:
    """Per (measurement, contended, src, dst, pattern, treatment): its SweepSummary. A sweep whose points
    carry no packet rate (a kind other than pps, should one sweep) has none: its cells stay plain."""
    by_sweep: dict[tuple[Any, ...], dict[int, dict[str, tuple[SweepRow, dict[str, Any]]]]] = {}
    for row in rows:
        point = sweep_point(spec.sweeps.get(row.measurement), row.key)
        if point is None or "pps" not in point[1]:
            continue
        ident = (row.measurement, row.contended, row.src, row.dst, row.pattern, _treatment(row.factors))
        by_sweep.setdefault(ident, {}).setdefault(row.repetition, {})[point[0]] = (row, point[1])
    out = {}
    for ident, reps in by_sweep.items():
        # its own treatment's points (the union of every treatment's is never all stored by one);
        # the union only where the plan could not be made
        expected = spec.treatment_points.get((ident[0], ident[5])) or set(spec.sweeps[ident[0]])
        summary = SweepSummary(pattern=ident[4], treatment=ident[5], expected_points=len(expected))
        complete = sorted(r for r, points in reps.items() if expected <= set(points))
        newest_rep = max(reps)
        if newest_rep not in complete:
            summary.progress = (newest_rep, len(reps[newest_rep]))
        if complete:
            newest = reps[complete[-1]]
            summary.repetition = complete[-1]
            summary.knees, summary.ceilings = _knees(newest.values())
            summary.previous = len(complete) - 1
            for rep in complete[:-1]:
                for size, k in _knees(reps[rep].values())[0].items():
                    best = summary.previous_best.get(size)
                    summary.previous_best[size] = k if best is None else best if k is None else max(best, k)
            losses = []
            for row, params in newest.values():
                load = (loads or {}).get(row.step_key) if row.contended else None
                if _within_capacity(row, float(params["pps"]), load):
                    losses.append(row.values.get("loss_ratio"))
            known = [x for x in losses if x is not None and math.isfinite(x)]
            summary.within = len(losses)
            summary.worst_loss_within = max(known) if known else None
        shown = reps[complete[-1]] if complete else reps[newest_rep]
        newest_row = max((r for r, _ in shown.values()), key=lambda r: r.measurement_id)
        summary.newest_id, summary.newest_utc_ns = newest_row.measurement_id, newest_row.started_utc_ns
        out[ident] = summary
    return out


def _knees(
    points: Iterable[tuple[SweepRow, dict[str, Any]]],
) -> tuple[dict[int, float | None], dict[int, float | None]]:
    """Per packet size: the knee (analysis/knee.py: highest offered rate with < 1 % loss, sent at
    >= 95 %, before the first that was not) and the most packets/s received."""
    by_size: dict[int, list[tuple[SweepRow, float]]] = {}
    for row, params in points:
        by_size.setdefault(int(params.get("size", 0)), []).append((row, float(params["pps"])))
    knees, ceilings = {}, {}
    for size, pts in sorted(by_size.items()):
        knees[size] = knee((pps, r.values.get("loss_ratio"), r.values.get("achieved_pps")) for r, pps in pts)
        received = [r.values.get("received_pps") for r, _ in pts]
        known = [x for x in received if x is not None and math.isfinite(x)]
        ceilings[size] = max(known) if known else None
    return knees, ceilings


def _sweep_for_cell(candidates: list[SweepSummary], pattern: str | None) -> SweepSummary | None:
    """The sweep a cell shows: its pattern's (a contended cell), else the one with the newest complete
    sweep (an alone cell: a pair swept alone by two patterns shows the newer)."""
    if pattern is not None:
        candidates = [c for c in candidates if c.pattern == pattern]
    if not candidates:
        return None
    return max(candidates, key=lambda c: (c.repetition is not None, c.newest_utc_ns or 0, c.newest_id))


def _knee_text(summary: SweepSummary) -> list[str]:
    if summary.repetition is None:
        assert summary.progress is not None
        return [f"sweep in progress: {summary.progress[1]} of {summary.expected_points} points"]
    lines = []
    for size, k in summary.knees.items():
        head = f"{size} B: " if len(summary.knees) > 1 else ""
        lines.append(f"{head}knee {fmt_rate(k, 'pps')}" if k is not None else f"{head}no rate passed")
    return lines


def sweep_cell(
    cell: GridCell, summary: SweepSummary, metric: str, th: Threshold, thresholds: dict[str, Threshold]
) -> dict[str, Any]:
    """A sweep's cell: its newest complete sweep's knee ('knee 60 K pps', per packet size), coloured
    in the loss grid by that sweep's worst loss at the offered rates within the path's capacity
    (beyond it loss is the sweep's purpose), in the other grids by the knee against the best knee of
    the pair's earlier complete sweeps (KNEE_LEVELS; the first sweep: by its loss within capacity)."""
    loss_th = thresholds.get("loss_ratio", LOSS_LEVELS)
    compared: float | None = None
    note = ""
    if summary.repetition is None:
        what, used = "no complete sweep yet", th
    elif metric != "loss_ratio" and summary.previous:
        ratios = []
        for size, k in summary.knees.items():
            best = summary.previous_best.get(size)
            if best:
                ratios.append((k or 0.0) / best)
        compared = min(ratios) if ratios else None
        what = (
            f"the knee against the best knee of the {summary.previous} earlier complete "
            f"sweep{'s' if summary.previous > 1 else ''}"
        )
        used = KNEE_LEVELS
        note = "" if compared is None else f"× {compared:.2f} of the earlier best knee"
    else:
        compared, used = summary.worst_loss_within, loss_th
        first = "" if metric == "loss_ratio" else "first complete sweep: "
        if compared is None:
            what = f"{first}no offered rate within a known capacity of the path"
        else:
            what = (
                f"{first}the worst loss at the {summary.within} of {summary.expected_points} offered "
                "rates within the path's capacity"
            )
            note = f"max loss {100 * compared:.2g} % within capacity"
    return {
        "src": cell.src,
        "dst": cell.dst,
        "value": None,
        "compared": compared,
        "compared_as": what,
        "level": level(compared, used),
        "levels": threshold_json(used),
        "count": cell.count,
        "repetition": summary.repetition,
        "measurement_id": summary.newest_id,
        "started_utc_ns": summary.newest_utc_ns,
        "pattern": summary.pattern,
        "text": _knee_text(summary),
        "note": note,
        "sweep": {
            "pattern": summary.pattern,
            "treatment": summary.treatment,
            "repetition": summary.repetition,
            "points": summary.expected_points,
            "knees_pps": {str(k): v for k, v in summary.knees.items()},
            "ceilings_pps": {str(k): v for k, v in summary.ceilings.items()},
            "earlier_sweeps": summary.previous,
            "earlier_best_knees_pps": {str(k): v for k, v in summary.previous_best.items()},
            "points_within_capacity": summary.within,
            "worst_loss_within_capacity": summary.worst_loss_within,
            "in_progress": None
            if summary.progress is None
            else {"repetition": summary.progress[0], "points": summary.progress[1]},
        },
    }


# ---------------------------------------------------------------- a pair's series


def _treatment(factors: dict[str, Any] | None) -> str:
    return " ".join(f"{k}={v}" for k, v in sorted((factors or {}).items()))


def _sweep_label(params: dict[str, Any]) -> str:
    if "pps" in params and "size" in params:
        return f"{params['size']} B at {fmt_rate(float(params['pps']), 'pps')}"
    return " ".join(f"{k}={v}" for k, v in params.items())


def series_lines(
    points: Sequence[SeriesPoint], sweep: dict[str, dict[str, Any]] | None
) -> tuple[list[int], list[dict[str, Any]]]:
    """The homogeneous lines of a pair's series: one per (pattern, group kind, sweep point or offered
    rate, treatment), never joined. Returns each point's line index and the lines, ordered by the first
    appearance of their pattern, then by the sweep's order (sizes, rates ascending) or offered rate,
    then treatment; each labelled with what tells it apart from the others (nothing for a lone line)."""
    sweep_order = {suffix: i for i, suffix in enumerate(sweep or {})}
    first_seen: dict[str, int] = {}
    idents = []
    for p in points:
        first_seen.setdefault(p.pattern, len(first_seen))
        point = sweep_point(sweep, p.key)
        offered = None if point is not None else p.offered_bps
        idents.append((p.pattern, p.group_kind, point[0] if point else "", offered, _treatment(p.factors)))
    distinct = list(dict.fromkeys(idents))

    def order(i: tuple[Any, ...]) -> tuple[Any, ...]:
        pattern, group_kind, suffix, offered, treatment = i
        rate = -1.0 if offered is None else offered
        return (first_seen[pattern], group_kind, sweep_order.get(suffix, -1), rate, treatment)

    distinct.sort(key=order)
    index = {ident: n for n, ident in enumerate(distinct)}
    varies = [len({ident[f] for ident in distinct}) > 1 for f in range(5)]
    # the group kind only where one pattern has several (a star's flows alone and together)
    varies[1] = any(len({i[1] for i in distinct if i[0] == p}) > 1 for p in first_seen)
    lines = []
    for pattern, group_kind, suffix, offered, treatment in distinct:
        params = (sweep or {}).get(suffix) if suffix else None
        parts = [
            pattern if varies[0] else "",
            group_kind if varies[1] else "",
            _sweep_label(params) if params and varies[2] else "",
            f"offered {fmt_rate(offered, 'bit/s')}" if varies[3] and offered is not None else "",
            treatment if varies[4] else "",
        ]
        if varies[3] and offered is None and not params:
            parts[3] = "no offered rate"
        lines.append(
            {
                # stable while lines are added (a running campaign): what the page remembers a choice by
                "key": json.dumps([pattern, group_kind, suffix, offered, treatment]),
                "label": " · ".join(x for x in parts if x),
                "pattern": pattern,
                "group_kind": group_kind,
                "sweep_point": params,
                "offered_bps": offered if not params else None,
                "treatment": treatment,
            }
        )
    return [index[i] for i in idents], lines


def series_json(
    points: list[SeriesPoint],
    th: Threshold | None,
    metric: str,
    sample_metric: str,
    sweep: dict[str, dict[str, Any]] | None = None,
) -> dict[str, Any]:
    """A pair's points, the lines they form (series_lines) and each line's change points, searched
    within that line only: points of another pattern, offered rate or treatment are not a change."""
    line_of, lines = series_lines(points, sweep)
    members: list[list[int]] = [[] for _ in lines]
    for i, n in enumerate(line_of):
        members[n].append(i)
    every: list[int] = []
    searched = False
    for line, mine in zip(lines, members, strict=True):
        ok = [(i, v) for i in mine if points[i].status == "ok" and (v := points[i].value) is not None]
        breaks = change_points([v for _, v in ok])
        line["points"] = len(mine)
        line["ok_points"] = len(ok)
        # indices into points where the line's level changes; None: too few ok points to look for any
        line["change_points"] = None if breaks is None else [ok[b][0] for b in breaks]
        if breaks is not None:
            searched = True
            every += line["change_points"]
    return {
        "metric": metric,
        "unit": unit_of(metric),
        "sample_metric": sample_metric,
        "threshold": None if th is None else threshold_json(th),
        "points": [
            {
                "measurement_id": p.measurement_id,
                "repetition": p.repetition,
                "attempt": p.attempt,
                "status": p.status,
                "started_utc_ns": p.started_utc_ns,
                "duration_ns": p.duration_ns,
                "expected_max_bps": p.expected_max_bps,
                "factors": p.factors,
                "pattern": p.pattern,
                "offered_bps": p.offered_bps,
                "value": p.value,
                "samples": p.sample_count,
                "sample_min": p.sample_min,
                "sample_mean": p.sample_mean,
                "sample_max": p.sample_max,
                "line": line_of[i],
            }
            for i, p in enumerate(points)
        ],
        "lines": lines,
        "min_points_for_change": MIN_POINTS,
        # every line's change points (indices into points); None: no line has enough ok points
        "change_points": sorted(every) if searched else None,
    }


# ---------------------------------------------------------------- the static reports


@dataclass
class ReportIndex:
    """Which campaign's report sits where under report_dir (each report has a report.json naming it)."""

    root: Path
    _seen: dict[Path, tuple[float, str | None]] = field(default_factory=dict)

    def urls(self) -> dict[str, str]:
        found: dict[str, str] = {}
        for summary in [self.root / "report.json", *sorted(self.root.glob("*/report.json"))]:
            campaign = self._campaign_of(summary)
            if campaign is not None:
                rel = summary.parent.relative_to(self.root).as_posix()
                found.setdefault(campaign, "/report/" if rel == "." else f"/report/{rel}/")
        return found

    def _campaign_of(self, summary: Path) -> str | None:
        try:
            mtime = summary.stat().st_mtime
        except OSError:
            return None
        cached = self._seen.get(summary)
        if cached is None or cached[0] != mtime:
            try:
                campaign = json.loads(summary.read_text()).get("campaign")
            except (OSError, ValueError):
                campaign = None
            cached = (mtime, campaign)
            self._seen[summary] = cached
        return cached[1]
