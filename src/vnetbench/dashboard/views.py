"""What the dashboard shows, as JSON-ready dicts: campaigns with progress, the coloured grid, a pair's series.

Pure functions over the store's live reads (store/live.py) and the campaign's spec; no SQL here.
"""

from __future__ import annotations

import difflib
import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from vnetbench.dashboard.changepoints import change_points
from vnetbench.plan import make_plan
from vnetbench.spec.errors import SpecInvalid
from vnetbench.spec.loader import parse_spec
from vnetbench.spec.thresholds import Threshold, thresholds_for
from vnetbench.store.live import CampaignProgress, GridCell, MonitorRun, SeriesPoint

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
        loaded = parse_spec(row["spec_text"], row["spec_source"])
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
    try:
        total: int | None = len(make_plan(loaded, row["id"], row["seed"]).steps)
    except SpecInvalid as exc:
        return CampaignSpec(names, thresholds, nodes, None, str(exc), configured, background)
    return CampaignSpec(names, thresholds, nodes, total, None, configured, background)


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
    done = progress.steps_done if progress else 0
    return {
        "id": row["id"],
        "name": row["name"],
        "status": row["status"],
        "created_utc_ns": row["created_utc_ns"],
        "steps_done": done,
        "steps_total": spec.total_steps,
        "measurements_ok": progress.measurements_ok if progress else 0,
        "attempts_failed": progress.attempts_failed if progress else 0,
        "last_result_utc_ns": progress.last_result_utc_ns if progress else None,
        "latest_repetition": progress.latest_repetition if progress else None,
        # a monitored campaign: its newest run's progress (steps_done above counts every run's steps)
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


def grid_json(cells: list[GridCell], spec: CampaignSpec) -> list[dict[str, Any]]:
    """One grid per (measurement, alone or contended, metric with a threshold), sources × destinations."""
    grids: dict[tuple[str, bool, str], list[GridCell]] = {}
    for cell in cells:
        if cell.metric in spec.thresholds_of(cell.measurement):
            grids.setdefault((cell.measurement, cell.contended, cell.metric), []).append(cell)
    out = []
    measurement_rank = {n: i for i, n in enumerate(spec.measurement_order)}

    def key(k: tuple[str, bool, str]) -> tuple[Any, ...]:
        metrics = list(spec.thresholds_of(k[0]))
        return (measurement_rank.get(k[0], len(measurement_rank)), k[0], k[1], metrics.index(k[2]))

    for measurement, contended, metric in sorted(grids, key=key):
        th = spec.thresholds_of(measurement)[metric]
        members = grids[(measurement, contended, metric)]
        rendered = []
        for c in members:
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
                }
            )
        out.append(
            {
                "measurement": measurement,
                "contended": contended,
                "metric": metric,
                "unit": unit_of(metric),
                "threshold": threshold_json(th),
                "sources": _ordered({c.src for c in members}, spec.node_order),
                "destinations": _ordered({c.dst for c in members}, spec.node_order),
                "cells": rendered,
            }
        )
    return out


# ---------------------------------------------------------------- a pair's series


def series_json(
    points: list[SeriesPoint], th: Threshold | None, metric: str, sample_metric: str
) -> dict[str, Any]:
    ok_values = [(i, p.value) for i, p in enumerate(points) if p.status == "ok" and p.value is not None]
    breaks = change_points([v for _, v in ok_values])
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
            }
            for p in points
        ],
        # indices into points where the level changes; None: too few ok points to look for any
        "change_points": None if breaks is None else [ok_values[b][0] for b in breaks],
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
