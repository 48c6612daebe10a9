"""Parts of the campaign analysis that need no model: fairness of simultaneous flows, UDP effective
throughput, reproducibility across rebuilds, placement categories and time-of-day profiles. Each
returns its data (None when the campaign has nothing for it); `to_json` gives what `analyze --json`
prints. Their tables are the report's (report/analysis_tables.py)."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
import pandas as pd

from vnetbench.analysis import campaign_data as cd
from vnetbench.analysis.fairness import fairness_by_group, fairness_spread
from vnetbench.analysis.inputs import DataError
from vnetbench.analysis.periodic import by_day_of_week, by_hour_of_day
from vnetbench.analysis.placement import PlacementComparison, compare_placements
from vnetbench.analysis.reproducibility import ReproducibilityThresholds, reproducibility

HOUR_NS = 3600 * 10**9
PERIODIC_MIN_SPAN_NS = 3 * HOUR_NS  # a time-of-day view needs the campaign to cover several hours
WEEKLY_MIN_SPAN_NS = 2 * 24 * HOUR_NS
# Differences that never matter, whatever their ratio (relative criteria explode near zero):
# 0.1 percentage point of loss, and 50 µs of RTT (what a busy host's scheduler adds anyway).
ABS_TOLERANCE = {"loss_ratio": 0.001, "rtt_mean_ns": 50_000.0}


# ------------------------------------------------------------------------------------ fairness, UDP


@dataclass
class Fairness:
    """Jain's index per group of simultaneous flows, and its spread over replications per treatment."""

    config: list[str]  # series and factor columns: one row of `spread` per treatment
    confidence: float
    per_group: pd.DataFrame
    spread: pd.DataFrame
    tcp: bool = False  # some groups are TCP flows (whose shares take tens of seconds to settle)

    def to_json(self) -> dict[str, Any]:
        return {"groups": self.per_group, "spread": self.spread}


def fairness(flows: pd.DataFrame, factors: list[str], confidence: float) -> Fairness | None:
    """Jain's index of every group of simultaneous flows and its spread over replications (None: no such
    groups)."""
    data = flows[(flows["group_kind"].isin(["together", "parallel"])) & flows["throughput_bps"].notna()]
    if data.empty:
        return None
    config = ["series", *factors]
    per_group = fairness_by_group(data, "throughput_bps", ["step_key", *config, "repetition"])
    spread = fairness_spread(data, "throughput_bps", config, "repetition", confidence)
    tcp = "kind" in data and bool((data["kind"] == "tcp").any())
    return Fairness(config, confidence, per_group, spread, tcp)


@dataclass
class UdpEffective:
    """(1 − loss) × offered rate per treatment, averaged over flows and replications."""

    keys: list[str]
    rows: list[dict[str, Any]]


def udp_effective(flows: pd.DataFrame, factors: list[str]) -> UdpEffective | None:
    """UDP effective throughput per series and treatment (None: no UDP flows)."""
    udp = flows[(flows["kind"] == "udp") & flows["effective_throughput_bps"].notna()]
    if udp.empty:
        return None
    keys = ["series", *factors]
    rows = []
    for k, g in udp.groupby(keys, sort=True, dropna=False):
        k = k if isinstance(k, tuple) else (k,)
        rows.append(
            dict(zip(keys, k, strict=True))
            | {
                "n_flows": len(g),
                "offered_bps": float(g["offered_bps"].mean()),
                "throughput_bps": float(g["throughput_bps"].mean()),
                "loss_ratio": float(g["loss_ratio"].mean()),
                "effective_throughput_bps": float(g["effective_throughput_bps"].mean()),
            }
        )
    return UdpEffective(keys, rows)


# ------------------------------------------------------------------------------------ rebuilds


@dataclass
class Rebuilds:
    """Every flow metric of the rebuilt topologies against the first build."""

    builds: int
    thresholds: ReproducibilityThresholds
    results: list[Any]  # reproducibility.Reproducibility, sorted by metric


def rebuilds(
    flows: pd.DataFrame, factors: list[str], design: dict[str, Any], th: ReproducibilityThresholds
) -> Rebuilds | None:
    """Rebuild-to-rebuild agreement of every flow metric; `th` from the spec's analysis section
    (the absolute tolerance of metrics near zero comes from ABS_TOLERANCE)."""
    if flows.empty or not design["rebuild"] or flows["build"].nunique() < 2:
        return None
    long = []
    for r in flows.to_dict("records"):
        levels = "".join(f" {f}={r[f]}" for f in factors)
        for response in cd.FLOW_RESPONSES.get(r["kind"], ()):
            v = r.get(response)
            if v is not None and np.isfinite(v):
                long.append(
                    {
                        "response": response,
                        "build": r["build"],
                        "metric": f"{r['measurement']} {r['src']}→{r['dst']}{levels} {response}",
                        "value": float(v),
                    }
                )
    frame = pd.DataFrame(long)
    results = []
    for response, g in frame.groupby("response", sort=True):
        tol = replace(th, tolerance_abs=ABS_TOLERANCE.get(str(response), 0.0))
        results += reproducibility(g, thresholds=tol)
    results.sort(key=lambda m: m.metric)
    return Rebuilds(int(flows["build"].nunique()), th, results)


# ------------------------------------------------------------------------------------ placement, time


@dataclass
class PlacementEntry:
    """One measurement's response compared across placements, or why it could not be."""

    measurement: str
    response: str
    comparison: PlacementComparison | None = None
    error: str | None = None


@dataclass
class Placements:
    confidence: float
    entries: list[PlacementEntry] = field(default_factory=list)

    def to_json(self) -> list[dict[str, Any]]:
        return [
            {"measurement": e.measurement, "response": e.response} | e.comparison.to_dict()
            for e in self.entries
            if e.comparison is not None
        ]


def placements(flows: pd.DataFrame, confidence: float) -> Placements | None:
    """Flows measured alone, per placement category, where a measurement has two or more of them."""
    alone = flows[flows["group_kind"].isin(["single", "alone"])] if not flows.empty else flows
    if alone.empty or alone["placement"].nunique() < 2:
        return None
    out = Placements(confidence)
    for (measurement, kind), g in alone.groupby(["measurement", "kind"], sort=False):
        for response in cd.FLOW_RESPONSES.get(kind, ()):
            data = g.dropna(subset=[response])
            if data["placement"].nunique() < 2:
                continue
            try:
                c = compare_placements(data, response, confidence=confidence, group=str(measurement))
            except DataError as exc:
                out.entries.append(
                    PlacementEntry(str(measurement), response, error=f"{measurement}: {response}: {exc}")
                )
                continue
            out.entries.append(PlacementEntry(str(measurement), response, c))
    return out if any(e.comparison is not None for e in out.entries) else None


@dataclass
class PeriodicView:
    measurement: str
    response: str
    period: str  # hour | weekday
    rows: pd.DataFrame


@dataclass
class Periodic:
    span_ns: int
    views: list[PeriodicView]

    def to_json(self) -> list[dict[str, Any]]:
        return [
            {"measurement": v.measurement, "response": v.response, "period": v.period, "rows": v.rows}
            for v in self.views
        ]


def periodic(flows: pd.DataFrame, confidence: float) -> Periodic | None:
    """Hour-of-day (and, over days, day-of-week) profiles of a campaign spanning hours."""
    if flows.empty or flows["started_utc_ns"].isna().all():
        return None
    span = int(flows["started_utc_ns"].max() - flows["started_utc_ns"].min())
    if span < PERIODIC_MIN_SPAN_NS:
        return None
    views = []
    for (measurement, kind), g in flows.groupby(["measurement", "kind"], sort=False):
        for response in cd.FLOW_RESPONSES.get(kind, ())[:1]:
            data = g.dropna(subset=[response, "started_utc_ns"])
            if data.empty:
                continue
            views.append(
                PeriodicView(
                    measurement,
                    response,
                    "hour",
                    by_hour_of_day(data, response, "started_utc_ns", confidence),
                )
            )
            if span >= WEEKLY_MIN_SPAN_NS:
                table = by_day_of_week(data, response, "started_utc_ns", confidence)
                views.append(PeriodicView(measurement, response, "weekday", table))
    return Periodic(span, views) if views else None
