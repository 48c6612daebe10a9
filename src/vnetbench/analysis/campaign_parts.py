"""Parts of the campaign analysis that need no model: fairness of simultaneous flows, UDP effective
throughput, reproducibility across rebuilds, placement categories and time-of-day profiles. Each
returns its `Part` (None when the campaign has nothing for it) and its JSON."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np
import pandas as pd

from vnetbench.analysis import campaign_data as cd
from vnetbench.analysis.campaign_tables import UNITS, Part, Tabular, scaled
from vnetbench.analysis.fairness import fairness_by_group, fairness_spread
from vnetbench.analysis.inputs import DataError
from vnetbench.analysis.periodic import by_day_of_week, by_hour_of_day
from vnetbench.analysis.placement import compare_placements
from vnetbench.analysis.render import ci, num, pct, yes
from vnetbench.analysis.reproducibility import ReproducibilityThresholds, reproducibility

HOUR_NS = 3600 * 10**9
PERIODIC_MIN_SPAN_NS = 3 * HOUR_NS  # a time-of-day view needs the campaign to cover several hours
WEEKLY_MIN_SPAN_NS = 2 * 24 * HOUR_NS
# Differences that never matter, whatever their ratio (relative criteria explode near zero):
# 0.1 percentage point of loss, and 50 µs of RTT (what a busy host's scheduler adds anyway).
ABS_TOLERANCE = {"loss_ratio": 0.001, "rtt_mean_ns": 50_000.0}


# ------------------------------------------------------------------------------------ fairness, UDP


def fairness_part(
    flows: pd.DataFrame, factors: list[str], confidence: float
) -> tuple[Part | None, dict[str, Any]]:
    data = flows[(flows["group_kind"].isin(["together", "parallel"])) & flows["throughput_bps"].notna()]
    if data.empty:
        return None, {"groups": [], "spread": []}
    config = ["series", *factors]
    per_group = fairness_by_group(data, "throughput_bps", ["step_key", *config, "repetition"])
    spread = fairness_spread(data, "throughput_bps", config, "repetition", confidence)
    conf = f"{100 * confidence:g} %"
    part = Part(
        "Fairness of simultaneous flows",
        "fairness",
        intro="Jain's index (Σx)²/(n·Σx²) of the flows' throughput in each group started together; "
        "1 is a fair share, 1/n one flow taking everything. Its spread over replications per treatment.",
    )
    part.tables.append(
        Tabular(
            f"Jain's fairness index over replications ({conf} bootstrap interval of the mean)",
            [*config, "replications", "mean", "SD", "min", "max", "interval"],
            [
                [
                    *(str(r[c]) for c in config),
                    str(r["replications"]),
                    num(r["mean"], 4),
                    num(r["sd"], 3),
                    num(r["min"], 4),
                    num(r["max"], 4),
                    ci(r["ci_low"], r["ci_high"]),
                ]
                for r in spread.to_dict("records")
            ],
        )
    )
    return part, {"groups": per_group, "spread": spread}


def udp_part(flows: pd.DataFrame, factors: list[str]) -> tuple[Part | None, list[dict[str, Any]]]:
    udp = flows[(flows["kind"] == "udp") & flows["effective_throughput_bps"].notna()]
    if udp.empty:
        return None, []
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
    part = Part(
        "UDP effective throughput",
        "udp-effective",
        intro="(1 − loss) × offered rate per flow (ONL eq. 1), averaged over the flows and replications.",
    )
    part.tables.append(
        Tabular(
            "UDP effective throughput per treatment",
            [*keys, "flows", "offered (Mbit/s)", "received (Mbit/s)", "mean loss", "effective (Mbit/s)"],
            [
                [
                    *(str(r[c]) for c in keys),
                    str(r["n_flows"]),
                    num(r["offered_bps"] / 1e6, 5),
                    num(r["throughput_bps"] / 1e6, 5),
                    f"{100 * r['loss_ratio']:.4g} %",
                    num(r["effective_throughput_bps"] / 1e6, 5),
                ]
                for r in rows
            ],
        )
    )
    return part, rows


# ------------------------------------------------------------------------------------ rebuilds


def reproducibility_part(
    flows: pd.DataFrame, factors: list[str], design: dict[str, Any], th: ReproducibilityThresholds
) -> tuple[Part | None, list[dict[str, Any]], list[Any]]:
    """Rebuild-to-rebuild agreement of every flow metric; `th` from the spec's analysis section
    (the absolute tolerance of metrics near zero comes from ABS_TOLERANCE)."""
    if flows.empty or not design["rebuild"] or flows["build"].nunique() < 2:
        return None, [], []
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
    part = Part(
        "Reproducibility across rebuilds",
        "reproducibility",
        intro=f"The topology was built {flows['build'].nunique()} times from scratch. The first build's "
        f"values are the reference; each rebuild contributes its mean. Verdict thresholds: CV across "
        f"rebuilds ≤ {100 * th.cv_max_ratio:g} %, difference within ±{100 * th.tolerance_ratio:g} % of "
        "the first build (the whole Welch interval); for metrics near zero, absolute tolerances: "
        + ", ".join(f"{k} ±{v:g}" for k, v in ABS_TOLERANCE.items())
        + " (their unit).",
    )
    part.tables.append(
        Tabular(
            "Rebuilds against the first build",
            [
                "metric",
                "first build mean (n)",
                "rebuilds",
                "mean of rebuilds",
                "CV",
                "difference",
                "Welch interval",
                "Mann-Whitney p",
                "verdict",
            ],
            [
                [
                    m.metric,
                    f"{num(m.mean_first)} ({m.n_first})",
                    str(m.n_rebuilds),
                    num(m.mean_rebuilds),
                    pct(100 * m.cv_rebuilds_ratio),
                    f"{num(m.difference, 4)} ({pct(100 * m.difference_ratio)})",
                    ci(*m.welch_ci),
                    num(m.mannwhitney_p, 3),
                    m.verdict,
                ]
                for m in results
            ],
        )
    )
    part.items += [m.text for m in results]
    return part, [m.to_dict() for m in results], results


# ------------------------------------------------------------------------------------ placement, time


def placement_part(flows: pd.DataFrame, confidence: float) -> tuple[Part | None, list[dict[str, Any]]]:
    alone = flows[flows["group_kind"].isin(["single", "alone"])] if not flows.empty else flows
    if alone.empty or alone["placement"].nunique() < 2:
        return None, []
    part = Part(
        "Placement categories",
        "placement",
        intro="Flows measured alone, grouped by where their ends are (GENI Table 1): same host, same site "
        "(different hosts), cross site. Differences of means with Welch's interval.",
    )
    out = []
    conf = f"{100 * confidence:g} %"
    for (measurement, kind), g in alone.groupby(["measurement", "kind"], sort=False):
        for response in cd.FLOW_RESPONSES.get(kind, ()):
            data = g.dropna(subset=[response])
            if data["placement"].nunique() < 2:
                continue
            scale, unit = UNITS.get(response, (1.0, ""))
            try:
                c = compare_placements(data, response, confidence=confidence)
            except DataError as exc:
                part.items.append(f"{measurement} {response}: {exc}")
                continue
            out.append({"measurement": measurement, "response": response} | c.to_dict())
            shown = f"{response} ({unit})" if scale != 1 else response
            part.tables.append(
                Tabular(
                    f"{measurement}: {shown} per placement ({conf} interval of the mean)",
                    ["placement", "n", "mean", "SD", "interval"],
                    [
                        [
                            x.category,
                            str(x.n),
                            scaled(x.mean, scale),
                            scaled(x.sd, scale),
                            ci(x.ci_low / scale, x.ci_high / scale),
                        ]
                        for x in c.categories
                    ],
                )
            )
            if c.pairs:
                part.tables.append(
                    Tabular(
                        f"{measurement}: differences of {shown} (second − first, Welch {conf})",
                        ["first", "second", "difference", "interval", "p", "significant"],
                        [
                            [
                                p.first,
                                p.second,
                                scaled(p.difference, scale),
                                ci(p.ci_low / scale, p.ci_high / scale),
                                num(p.p_value, 3),
                                yes(p.significant),
                            ]
                            for p in c.pairs
                        ],
                    )
                )
            part.items += list(c.notes)
    return (part if out else None), out


def periodic_part(flows: pd.DataFrame, confidence: float) -> tuple[Part | None, list[dict[str, Any]]]:
    if flows.empty or flows["started_utc_ns"].isna().all():
        return None, []
    span = int(flows["started_utc_ns"].max() - flows["started_utc_ns"].min())
    if span < PERIODIC_MIN_SPAN_NS:
        return None, []
    part = Part(
        "Time of day",
        "periodic",
        intro=f"The campaign spans {span / HOUR_NS:.1f} hours: is there a daily (or weekly) pattern? "
        "Non-overlapping intervals between hours mean busy and quiet times differ.",
    )
    out = []
    for (measurement, kind), g in flows.groupby(["measurement", "kind"], sort=False):
        for response in cd.FLOW_RESPONSES.get(kind, ())[:1]:
            data = g.dropna(subset=[response, "started_utc_ns"])
            if data.empty:
                continue
            scale, unit = UNITS.get(response, (1.0, ""))
            views = [("hour", by_hour_of_day(data, response, "started_utc_ns", confidence))]
            if span >= WEEKLY_MIN_SPAN_NS:
                views.append(("weekday", by_day_of_week(data, response, "started_utc_ns", confidence)))
            for period, table in views:
                out.append(
                    {"measurement": measurement, "response": response, "period": period, "rows": table}
                )
                key = "day" if period == "weekday" else "hour"
                part.tables.append(
                    Tabular(
                        f"{measurement}: {response} by {period} (UTC)",
                        [key, "n", f"mean ({unit or response})", "SD", "interval"],
                        [
                            [
                                str(r[key]),
                                str(r["n"]),
                                scaled(r["mean"], scale),
                                scaled(r["sd"], scale),
                                ci(r["ci_low"] / scale, r["ci_high"] / scale),
                            ]
                            for r in table.to_dict("records")
                        ],
                    )
                )
    return (part if out else None), out
