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

from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from vnetbench.analysis import campaign_data as cd
from vnetbench.analysis import campaign_parts as cp
from vnetbench.analysis import campaign_tables as ct
from vnetbench.analysis.campaign_tables import Part, Tabular
from vnetbench.analysis.capacity import recommend_capacity
from vnetbench.analysis.contrasts import factor_successive_differences, successive_differences
from vnetbench.analysis.diagnostics import diagnostics, residual_spread_by_level, truncated_model
from vnetbench.analysis.full_factorial import full_factorial_anova
from vnetbench.analysis.inputs import DataError
from vnetbench.analysis.jsonable import jsonable
from vnetbench.analysis.one_factor import one_factor_anova
from vnetbench.analysis.outliers import OutlierPolicy
from vnetbench.analysis.render import num
from vnetbench.analysis.reproducibility import ReproducibilityThresholds
from vnetbench.analysis.two_k_r import two_k_r

__all__ = ["CampaignAnalysis", "FittedModel", "Part", "Settings", "Tabular", "analyze_campaign"]


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
    reproducibility_tolerance: float = 0.05
    reproducibility_cv_max: float = 0.05


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
    return Settings(
        a.confidence,
        int(a.omit),
        a.outliers,
        float(a.loss_threshold),
        a.response,
        float(a.reproducibility_tolerance),
        float(a.reproducibility_cv_max),
    )


def analyze_campaign(frames: cd.CampaignFrames, settings: Settings | None = None) -> CampaignAnalysis:
    spec = spec_of(frames.campaign)
    s = settings or settings_from_spec(spec)
    factors = list(cd.factor_columns([f.name for f in spec.factors]).values())  # their columns
    listed = {col: list(f.levels) for f, col in zip(spec.factors, factors, strict=True)}
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
        model_part, out["models"] = _models(
            groups, factors, listed, design_kind, s, policy, models, notes, excluded
        )
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
    out |= {"fairness": {"groups": [], "spread": []}, "udp_effective_throughput": [], "reproducibility": []}
    out |= {"placement": [], "periodic": []}
    repro: list[Any] = []
    if flows.empty:
        notes.append("no measurement of this campaign is stored as ok: nothing to analyse")
    else:
        fair, out["fairness"] = cp.fairness_part(flows, factors, s.confidence)
        udp, out["udp_effective_throughput"] = cp.udp_part(flows, factors)
        rebuilt, out["reproducibility"], repro = cp.reproducibility_part(
            flows,
            factors,
            out["design"],
            ReproducibilityThresholds(
                cv_max_ratio=s.reproducibility_cv_max,
                tolerance_ratio=s.reproducibility_tolerance,
                confidence=s.confidence,
            ),
        )
        place, out["placement"] = cp.placement_part(flows, s.confidence)
        periodic, out["periodic"] = cp.periodic_part(flows, s.confidence)
        parts += [p for p in (fair, udp, rebuilt, place, periodic) if p is not None]
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
    listed: dict[str, list[Any]],
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
            data = _in_listed_order(_apply_policy(policy, data, response, label, excluded), varying, listed)
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


def _in_listed_order(data: pd.DataFrame, factors: list[str], listed: dict[str, list[Any]]) -> pd.DataFrame:
    """Each factor's levels in the order the spec lists them (an ordered categorical): a 2^k design
    codes the first −1, tables and successive differences follow the list. Without it, text levels
    would follow the (randomised) run order and an effect's sign could flip between two runs."""
    data = data.copy()
    for f in factors:
        order = [lv for lv in listed.get(f, []) if (data[f] == lv).any()]
        order += [lv for lv in pd.unique(data[f]) if lv not in order]
        data[f] = pd.Categorical(data[f], categories=order, ordered=True)
    return data


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
    scale, unit = ct.UNITS.get(response, (1.0, ""))
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
        part.tables += ct.one_factor_tabulars(label, a, steps, scale, shown)
        part.tables.append(ct.diag_tabular(label, diag))
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
                    ct.diag_tabular(f"{label} (truncated: {factors[0]} ≥ {trunc.levels[0]})", td)
                )
        models.append(fitted)
        return entry
    if design_kind == "2k-r" and all(data[f].nunique() == 2 for f in factors):
        r = two_k_r(data, response, factors, s.confidence)
        diag = diagnostics(r)
        models.append(FittedModel(label, "2k-r", r))
        part.tables += ct.two_k_r_tabulars(label, r, scale, shown)
        part.tables.append(ct.diag_tabular(label, diag))
        return {"model": "2k-r", "result": r.to_dict(), "diagnostics": diag.to_dict()}
    f = full_factorial_anova(data, response, factors, s.confidence)
    diag = diagnostics(f)
    models.append(FittedModel(label, "full-factorial", f))
    part.tables += ct.factorial_tabulars(label, f, scale, shown)
    steps = {factor: factor_successive_differences(f, factor) for factor in factors}
    for factor, contrasts in steps.items():
        title = f"{label}: successive levels of {factor} (marginal means)"
        part.tables.append(ct.steps_tabular(title, contrasts, scale, shown, "s = s_e·√(Σh²/r)"))
    part.tables.append(ct.diag_tabular(label, diag))
    return {
        "model": "full-factorial",
        "result": f.to_dict(),
        "successive_differences": {k: [c.to_dict() for c in v] for k, v in steps.items()},
        "diagnostics": diag.to_dict(),
    }


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
