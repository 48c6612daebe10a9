"""`vnetbench analyze`: the analyses that fit a stored campaign, on its stored samples.

What runs depends on what the campaign holds:

- factors with a design → per series and response a one-factor ANOVA (with intervals of successive
  differences, diagnostics, a truncated model and, for loss, a capacity recommendation), a 2^k r
  analysis or a full-factorial ANOVA;
- simultaneous flows → Jain's fairness index per group and its spread over replications;
- UDP → effective throughput (1 − loss) × offered rate;
- rebuilt topologies → reproducibility of every connection's metrics against the first build;
- two or more placement categories → categories compared with intervals of their differences;
- a campaign spanning hours → hour-of-day (and, over days, day-of-week) profiles.

Before any statistic: transient removal (`analysis.omit`) and the outlier policy (`analysis.outliers`,
`none` by default: nothing is excluded unless asked; events such as unreachable replies are counted).
The result is a list of `Part`s (tables of plain strings, shared by the terminal and the report) and
one JSON object carrying the same numbers.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from vnetbench.analysis import campaign_data as cd
from vnetbench.analysis.capacity import recommend_capacity
from vnetbench.analysis.contrasts import successive_differences
from vnetbench.analysis.diagnostics import diagnostics, residual_spread_by_level, truncated_model
from vnetbench.analysis.fairness import fairness_by_group, fairness_spread
from vnetbench.analysis.full_factorial import full_factorial_anova
from vnetbench.analysis.inputs import DataError
from vnetbench.analysis.jsonable import jsonable
from vnetbench.analysis.one_factor import one_factor_anova
from vnetbench.analysis.outliers import OutlierPolicy
from vnetbench.analysis.periodic import by_day_of_week, by_hour_of_day
from vnetbench.analysis.placement import compare_placements
from vnetbench.analysis.render import ci, num, pct, yes
from vnetbench.analysis.reproducibility import ReproducibilityThresholds, reproducibility
from vnetbench.analysis.two_k_r import two_k_r

HOUR_NS = 3600 * 10**9
PERIODIC_MIN_SPAN_NS = 3 * HOUR_NS  # a time-of-day view needs the campaign to cover several hours
WEEKLY_MIN_SPAN_NS = 2 * 24 * HOUR_NS
UNITS = {  # display scale and unit per response
    "throughput_bps": (1e6, "Mbit/s"),
    "total_throughput_bps": (1e6, "Mbit/s"),
    "effective_throughput_bps": (1e6, "Mbit/s"),
    "rtt_mean_ns": (1e6, "ms"),
    "loss_ratio": (1.0, "ratio"),
    "jain_index": (1.0, ""),
}


@dataclass
class Tabular:
    """A table of display strings: rendered by rich in the terminal and as HTML in the report."""

    title: str
    columns: list[str]
    rows: list[list[str]]
    note: str = ""


@dataclass
class Part:
    title: str
    anchor: str
    intro: str = ""
    tables: list[Tabular] = field(default_factory=list)
    items: list[str] = field(default_factory=list)


@dataclass
class FittedModel:
    """One model, kept for the report's figures."""

    label: str  # series · response
    kind: str  # one-factor | 2k-r | full-factorial
    result: Any
    contrasts: list[Any] = field(default_factory=list)
    capacity: Any = None
    truncated: Any = None


@dataclass
class Settings:
    confidence: float = 0.95
    omit_ns: int = 0
    outliers: str = "none"
    loss_threshold: float = 0.01
    response: str | None = None


@dataclass
class CampaignAnalysis:
    parts: list[Part]
    json: dict[str, Any]
    models: list[FittedModel]
    reproducibility: list[Any]


def spec_of(campaign_row: dict[str, Any]) -> Any:
    """The stored spec as a validated model (it was valid when the campaign ran)."""
    from vnetbench.spec.loader import parse_spec

    return parse_spec(campaign_row["spec_text"], campaign_row.get("spec_source") or "<stored spec>").campaign


def settings_from_spec(spec: Any) -> Settings:
    a = spec.analysis
    return Settings(a.confidence, int(a.omit), a.outliers, float(a.loss_threshold), a.response)


def analyze_campaign(frames: cd.CampaignFrames, settings: Settings | None = None) -> CampaignAnalysis:
    spec = spec_of(frames.campaign)
    s = settings or settings_from_spec(spec)
    factors = list(cd.factor_columns([f.name for f in spec.factors]).values())  # their columns
    design = spec.design
    design_kind = design.kind if design else ("full-factorial" if factors else None)
    flows, transient = cd.flow_table(frames.measurements, frames.samples, frames.builds, factors, s.omit_ns)
    groups = cd.group_table(flows, factors)
    row = frames.campaign
    out: dict[str, Any] = {
        "campaign": row["id"],
        "name": row["name"],
        "design": {
            "kind": design_kind,
            "factors": [{"name": f.name, "path": f.path, "levels": list(f.levels)} for f in spec.factors],
            "replications": design.replications if design else spec.schedule.repetitions,
            "randomize": bool(design.randomize) if design else spec.schedule.order == "random",
            "rebuild": bool(design.rebuild) if design else spec.schedule.rebuild,
            "seed": row["seed"],
        },
        "confidence": s.confidence,
        "transient": transient,
        "flows": len(flows),
        "groups": len(groups),
    }
    parts = [_overview(out, frames, flows)]
    models: list[FittedModel] = []
    notes: list[str] = []

    policy = OutlierPolicy(s.outliers, by=("series", *factors))  # judged among a treatment's replications
    outlier_part = _outlier_part(policy, flows, frames.events)
    parts.append(outlier_part)
    excluded: list[dict[str, Any]] = []
    out["events"] = _event_counts(frames.events, flows)
    out["models"] = []
    if design_kind and not groups.empty:
        model_part, out["models"] = _models(groups, factors, design_kind, s, policy, models, notes, excluded)
        parts.append(model_part)
    out["outliers"] = {"policy": policy.describe(), "method": policy.method, "excluded": excluded}
    if excluded:
        outlier_part.tables.append(
            Tabular(
                "Observations excluded by the outlier policy",
                ["model", "step", "value", "reason"],
                [[e["model"], e["step_key"], num(e["value"]), e["reason"]] for e in excluded],
            )
        )
    fair_part, fair_json = _fairness(flows, factors, s.confidence)
    if fair_part:
        parts.append(fair_part)
    out["fairness"] = fair_json
    udp_part, udp_json = _udp(flows, factors)
    if udp_part:
        parts.append(udp_part)
    out["udp_effective_throughput"] = udp_json
    repro_part, repro_json, repro = _reproducibility(flows, factors, frames.builds, out["design"], s)
    if repro_part:
        parts.append(repro_part)
    out["reproducibility"] = repro_json
    place_part, place_json = _placement(flows, s.confidence)
    if place_part:
        parts.append(place_part)
    out["placement"] = place_json
    per_part, per_json = _periodic(flows, s.confidence)
    if per_part:
        parts.append(per_part)
    out["periodic"] = per_json
    out["notes"] = notes
    if notes:
        parts.append(Part("Analysis notes", "analysis-notes", items=notes))
    return CampaignAnalysis(parts, jsonable(out), models, repro)


# ------------------------------------------------------------------------------------ overview


def _overview(out: dict[str, Any], frames: cd.CampaignFrames, flows: pd.DataFrame) -> Part:
    d = out["design"]
    levels = "; ".join(f"{f['name']} ∈ {f['levels']} ({f['path']})" for f in d["factors"]) or "none"
    t = out["transient"]
    rows = [
        ["design", str(d["kind"] or "none (no factors)")],
        ["factors", levels],
        ["replications", str(d["replications"])],
        ["run order", f"randomised, seed {d['seed']}" if d["randomize"] else "as written"],
        ["rebuild per replication", "yes" if d["rebuild"] else "no"],
        ["flows analysed", f"{out['flows']} ok of {len(frames.measurements)} stored"],
        ["groups of simultaneous flows", str(out["groups"])],
        [
            "transient removal",
            f"first {t['omit_ns'] / 1e9:g} s of every flow: {t['samples_dropped']} samples dropped, "
            f"{t['flows_recomputed']} flows recomputed"
            if t["omit_ns"]
            else "none (analysis.omit is 0)",
        ],
        ["confidence", f"{100 * out['confidence']:g} %"],
    ]
    return Part("Designed experiment", "design", tables=[Tabular("", ["", ""], rows)])


# ------------------------------------------------------------------------------------ outliers


def _event_counts(events: pd.DataFrame, flows: pd.DataFrame) -> dict[str, int]:
    counts = {str(k): int(v) for k, v in events.groupby("kind").size().items()} if not events.empty else {}
    if not flows.empty and flows["unreachable_events"].notna().any():
        counts["unreachable replies"] = int(flows["unreachable_events"].fillna(0).sum())
    return counts


def _outlier_part(policy: OutlierPolicy, flows: pd.DataFrame, events: pd.DataFrame) -> Part:
    part = Part(
        "Outliers and events",
        "outliers",
        intro="Nothing is excluded unless the spec's analysis.outliers (or --outliers) asks for it; "
        "events are counted, never dropped silently.",
    )
    part.items.append(policy.describe())
    counts = _event_counts(events, flows)
    if counts:
        part.tables.append(Tabular("Events", ["event", "count"], [[k, str(v)] for k, v in counts.items()]))
    else:
        part.items.append("No events (unreachable replies, tool anomalies, incomplete groups) were recorded.")
    return part


def _apply_policy(
    policy: OutlierPolicy, data: pd.DataFrame, response: str, label: str, excluded: list[dict[str, Any]]
) -> pd.DataFrame:
    if policy.method == "none":
        return data
    p = OutlierPolicy(policy.method, policy.k, by=policy.by, value=response)
    result = p.apply(data)
    for r in result.excluded.to_dict("records"):
        excluded.append(
            {"model": label, "step_key": r["step_key"], "value": r[response], "reason": r["reason"]}
        )
    return result.kept


# ------------------------------------------------------------------------------------ models


def _responses(groups: pd.DataFrame, kind: str, chosen: str | None) -> list[str]:
    if chosen:
        return [chosen] if chosen in groups else []
    names = list(cd.RESPONSES.get(kind, ()))
    if "jain_index" in names and not (groups["n_flows"] > 1).any():
        names.remove("jain_index")
    return names


def _models(
    groups: pd.DataFrame,
    factors: list[str],
    design_kind: str,
    s: Settings,
    policy: OutlierPolicy,
    models: list[FittedModel],
    notes: list[str],
    excluded: list[dict[str, Any]],
) -> tuple[Part, list[dict[str, Any]]]:
    part = Part(
        "Effects of the factors",
        "effects",
        intro="One model per series (pattern · measurement, with the connection for pairs) and response. "
        "Each observation is one group of simultaneous flows in one replication: its mean per flow "
        "(throughput, loss, RTT), or Jain's index over its flows.",
    )
    out: list[dict[str, Any]] = []
    for series, g in groups.groupby("series", sort=False):
        kind = str(g["kind"].iloc[0])
        for response in _responses(g, kind, s.response):
            label = f"{series} · {response}"
            data = g.dropna(subset=[response])
            varying = [f for f in factors if data[f].nunique() > 1]
            if not varying:
                notes.append(f"{label}: no factor varies in this series; no model")
                continue
            if data[response].nunique() <= 1:
                value = data[response].iloc[0] if len(data) else float("nan")
                notes.append(f"{label}: every observation is {num(value)}; nothing to explain")
                continue
            data = _apply_policy(policy, data, response, label, excluded)
            try:
                entry = _fit(data, response, varying, design_kind, s, label, part, models)
            except DataError as exc:
                notes.append(f"{label}: {exc}")
                continue
            out.append({"series": series, "response": response, "factors": varying} | entry)
    for entry in out:
        entry["outliers_excluded"] = [
            e for e in excluded if e["model"] == f"{entry['series']} · {entry['response']}"
        ]
    return part, out


def _fit(
    data: pd.DataFrame,
    response: str,
    factors: list[str],
    design_kind: str,
    s: Settings,
    label: str,
    part: Part,
    models: list[FittedModel],
) -> dict[str, Any]:
    scale, unit = UNITS.get(response, (1.0, ""))
    shown = f"{response} ({unit})" if unit and scale != 1 else response
    if len(factors) == 1:
        a = one_factor_anova(data, response, factors[0], s.confidence)
        steps = successive_differences(a)
        diag = diagnostics(a)
        fitted = FittedModel(label, "one-factor", a, steps)
        entry: dict[str, Any] = {
            "model": "one-factor",
            "anova": a.to_dict(),
            "successive_differences": [c.to_dict() for c in steps],
            "diagnostics": diag.to_dict(),
            "residual_sd_by_level": residual_spread_by_level(a),
        }
        part.tables += _one_factor_tabulars(label, a, steps, scale, shown)
        part.tables.append(_diag_tabular(label, diag))
        if "loss" in response:
            rec = recommend_capacity(a, s.loss_threshold)
            fitted.capacity = rec
            entry["capacity"] = rec.to_dict()
            part.items.append(f"<b>{label}</b> — capacity: " + " ".join(rec.reasoning))
            trunc = _truncate(data, response, factors[0], a, s)
            if trunc is not None:
                fitted.truncated = trunc
                td = diagnostics(trunc)
                entry["truncated"] = {
                    "levels": list(trunc.levels),
                    "anova": trunc.to_dict(),
                    "diagnostics": td.to_dict(),
                }
                part.tables.append(
                    _diag_tabular(f"{label} (truncated: {factors[0]} ≥ {trunc.levels[0]})", td)
                )
        models.append(fitted)
        return entry
    if design_kind == "2k-r" and all(data[f].nunique() == 2 for f in factors):
        r = two_k_r(data, response, factors, s.confidence)
        diag = diagnostics(r)
        models.append(FittedModel(label, "2k-r", r))
        part.tables += _two_k_r_tabulars(label, r, scale, shown)
        part.tables.append(_diag_tabular(label, diag))
        return {"model": "2k-r", "result": r.to_dict(), "diagnostics": diag.to_dict()}
    f = full_factorial_anova(data, response, factors, s.confidence)
    diag = diagnostics(f)
    models.append(FittedModel(label, "full-factorial", f))
    part.tables += _factorial_tabulars(label, f, scale, shown)
    part.tables.append(_diag_tabular(label, diag))
    return {"model": "full-factorial", "result": f.to_dict(), "diagnostics": diag.to_dict()}


def _truncate(data: pd.DataFrame, response: str, factor: str, a: Any, s: Settings) -> Any:
    """ONL's truncated model: from the first level whose mean loss exceeds the threshold on, when that
    leaves ≥ 2 levels and fewer than all of them."""
    first = next((e.level for e in a.effects if e.mean > s.loss_threshold), None)
    if first is None or first == a.levels[0] or a.levels.index(first) > len(a.levels) - 2:
        return None
    try:
        return truncated_model(data, response, factor, low=first, confidence=s.confidence)
    except DataError:
        return None


def _scaled(x: float | None, scale: float) -> str:
    return num(None if x is None else x / scale)


def _one_factor_tabulars(label: str, a: Any, steps: Sequence[Any], scale: float, shown: str) -> list[Tabular]:
    conf = f"{100 * a.confidence:g} %"
    rows = []
    for r in a.table():
        rows.append(
            [
                r["component"],
                num(r["sum_of_squares"], 8),
                pct(r["pct_variation"]),
                str(r["dof"]),
                num(r["mean_square"], 5),
                num(r["f"], 5),
                num(r["f_table"], 4),
                num(r["p_value"], 2),
            ]
        )
    anova = Tabular(
        f"{label}: one-factor ANOVA by {a.factor} (a = {a.a}, N = {a.n})",
        ["component", "SS", "% of var.", "DF", "MS", "F", f"F[{conf}]", "p"],
        rows,
        f"response {a.response} in its stored unit; s_e = {num(a.s_e, 5)}; "
        f"{'significant' if a.f > a.f_table else 'not significant'} at {conf}",
    )
    effects = Tabular(
        f"{label}: mean and effect per level ({conf} intervals)",
        ["level", "r", f"mean {shown}", "effect", "interval", "significant"],
        [
            [
                str(e.level),
                str(e.n),
                _scaled(e.mean, scale),
                _scaled(e.effect, scale),
                ci(e.ci_low / scale, e.ci_high / scale),
                yes(e.significant),
            ]
            for e in a.effects
        ],
    )
    out = [anova, effects]
    if steps:
        out.append(
            Tabular(
                f"{label}: successive differences ({conf}, s = s_e·√(2/r), t on {steps[0].dof} DF)",
                ["contrast", f"estimate {shown}", "interval", "significant"],
                [
                    [
                        c.label,
                        _scaled(c.estimate, scale),
                        ci(c.ci_low / scale, c.ci_high / scale),
                        yes(c.significant),
                    ]
                    for c in steps
                ],
            )
        )
    return out


def _two_k_r_tabulars(label: str, r: Any, scale: float, shown: str) -> list[Tabular]:
    conf = f"{100 * r.confidence:g} %"
    coding = "; ".join(f"{f}: −1 = {lo}, +1 = {hi}" for f, (lo, hi) in r.coding.items())
    rows = [
        [
            e.letters,
            e.name,
            _scaled(e.q, scale),
            ci(e.ci_low / scale, e.ci_high / scale),
            yes(e.significant),
            num(e.ss),
            pct(e.pct_variation),
        ]
        for e in r.effects
    ]
    rows.append(["e", "errors", "", "", "", num(r.sse), pct(r.pct_e)])
    return [
        Tabular(
            f"{label}: 2^{r.k}·{r.r} effects and allocation of variation ({conf}, t on {r.df_e} DF)",
            ["effect", "factors", f"q {shown}", "interval", "significant", "SS", "% of variation"],
            rows,
            f"{coding}; s_e = {num(r.s_e / scale, 5)}, s_q = {num(r.s_q / scale, 5)} {shown}",
        )
    ]


def _factorial_tabulars(label: str, f: Any, scale: float, shown: str) -> list[Tabular]:
    conf = f"{100 * f.confidence:g} %"
    rows = [
        ["y", num(f.ssy, 8), "", str(f.n), "", "", "", ""],
        ["ȳ..", num(f.ss0, 8), "", "1", "", "", "", ""],
        ["y − ȳ..", num(f.sst, 8), "100.00%", str(f.n - 1), "", "", "", ""],
    ]
    for t in f.terms:
        rows.append(
            [
                t.name,
                num(t.ss, 8),
                pct(t.pct_variation),
                str(t.df),
                num(t.ms, 5),
                num(t.f, 5),
                num(t.f_table, 4),
                num(t.p_value, 2),
            ]
        )
    rows.append(["errors", num(f.sse, 8), pct(f.pct_e), str(f.df_e), num(f.mse, 5), "", "", ""])
    cells = Tabular(
        f"{label}: cell means",
        [*f.factors, "n", f"mean {shown}", "SD"],
        [
            [*(str(r[x]) for x in f.factors), str(r["n"]), _scaled(r["mean"], scale), _scaled(r["sd"], scale)]
            for r in f.cell_means.to_dict("records")
        ],
    )
    kind = "balanced" if f.balanced else "unbalanced: type II SS"
    return [
        Tabular(
            f"{label}: full-factorial ANOVA ({kind})",
            ["component", "SS", "% of var.", "DF", "MS", "F", f"F[{conf}]", "p"],
            rows,
            f"response {f.response} in its stored unit; s_e = {num(f.s_e, 5)}",
        ),
        cells,
    ]


def _diag_tabular(label: str, d: Any) -> Tabular:
    verdict = "errors small (< 1/10 of the response range)" if d.errors_small else "check the plots"
    return Tabular(
        f"{label}: diagnostics",
        ["QQ correlation r", "Shapiro–Wilk p", "residual range / predicted range", "verdict"],
        [[num(d.qq_r, 4), num(d.shapiro_p, 3), num(d.residual_ratio, 3), verdict]],
    )


# ------------------------------------------------------------------------------------ fairness, UDP


def _fairness(
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
            f"Jain's fairness index over replications ({conf} interval of the mean)",
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


def _udp(flows: pd.DataFrame, factors: list[str]) -> tuple[Part | None, list[dict[str, Any]]]:
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


def _reproducibility(
    flows: pd.DataFrame, factors: list[str], builds: pd.DataFrame, design: dict[str, Any], s: Settings
) -> tuple[Part | None, list[dict[str, Any]], list[Any]]:
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
                        "build": r["build"],
                        "metric": f"{r['measurement']} {r['src']}→{r['dst']}{levels} {response}",
                        "value": float(v),
                    }
                )
    frame = pd.DataFrame(long)
    th = ReproducibilityThresholds(confidence=s.confidence)
    results = reproducibility(frame, thresholds=th)
    part = Part(
        "Reproducibility across rebuilds",
        "reproducibility",
        intro=f"The topology was built {flows['build'].nunique()} times from scratch. The first build's "
        f"values are the reference; each rebuild contributes its mean. Verdict thresholds: CV across "
        f"rebuilds ≤ {100 * th.cv_max_ratio:g} %, difference within ±{100 * th.tolerance_ratio:g} % of "
        "the first build (the whole Welch interval).",
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


def _placement(flows: pd.DataFrame, confidence: float) -> tuple[Part | None, list[dict[str, Any]]]:
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
                            _scaled(x.mean, scale),
                            _scaled(x.sd, scale),
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
                                _scaled(p.difference, scale),
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


def _periodic(flows: pd.DataFrame, confidence: float) -> tuple[Part | None, list[dict[str, Any]]]:
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
                                _scaled(r["mean"], scale),
                                _scaled(r["sd"], scale),
                                ci(r["ci_low"] / scale, r["ci_high"] / scale),
                            ]
                            for r in table.to_dict("records")
                        ],
                    )
                )
    return (part if out else None), out
