"""`vnetbench analyze`: the analyses that fit a stored campaign, on its stored samples.

What runs depends on what the campaign holds:

- factors with a design → per series and response a one-factor ANOVA (with intervals of successive
  differences, diagnostics, a truncated model and, for loss, a capacity recommendation), a 2^k r
  analysis or a full-factorial ANOVA;
- simultaneous flows → Jain's fairness index per group and its spread over replications;
- UDP → effective throughput (1 − loss) × offered rate;
- rebuilt topologies → reproducibility of every connection's metrics against the first build;
- two or more placement categories → categories compared with intervals of their differences;
- a campaign spanning hours → hour-of-day (and, over days, day-of-week) profiles;
- series of ≥ 20 runs (a periodic schedule) → change points (E-divisive means).

Before any statistic: transient removal (`analysis.omit`) and the outlier policy (`analysis.outliers`,
`none` by default: nothing is excluded unless asked; events such as unreachable replies are counted).
The result is data: the fitted models and every part's numbers, and one JSON object carrying them
(`analyze --json`). Their tables — the same for the terminal and the report — are the report's
(report/analysis_tables.py).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from vnetbench.analysis import campaign_data as cd
from vnetbench.analysis import campaign_parts as cp
from vnetbench.analysis.campaign_changes import ChangePoints, campaign_change_points
from vnetbench.analysis.campaign_designs import fit_fraction, fit_two_factor
from vnetbench.analysis.campaign_plan import RepetitionPlan, repetition_plan
from vnetbench.analysis.capacity import recommend_capacity
from vnetbench.analysis.contrasts import factor_successive_differences, successive_differences
from vnetbench.analysis.diagnostics import diagnostics, residual_spread_by_level, truncated_model
from vnetbench.analysis.full_factorial import full_factorial_anova
from vnetbench.analysis.inputs import DataError
from vnetbench.analysis.jsonable import jsonable
from vnetbench.analysis.one_factor import one_factor_anova
from vnetbench.analysis.outliers import OutlierPolicy
from vnetbench.analysis.reproducibility import ReproducibilityThresholds
from vnetbench.analysis.two_k_r import two_k_r
from vnetbench.spec.loader import spec_of

__all__ = ["CampaignAnalysis", "FittedModel", "Settings", "analyze_campaign", "settings_from_spec"]


@dataclass
class FittedModel:
    """One model with what was derived from it (tables and figures are made from these)."""

    label: str  # series · response
    kind: str  # one-factor | two-factor | 2k-r | 2k-p | full-factorial
    result: Any
    contrasts: list[Any] = field(default_factory=list)  # one-factor: successive differences
    capacity: Any = None  # one-factor of a loss response: the capacity recommendation
    truncated: Any = None  # ONL's truncated model (one-factor of loss)
    diagnostics: Any = None
    truncated_diagnostics: Any = None
    factor_contrasts: dict[str, list[Any]] = field(default_factory=dict)  # full factorial, per factor
    fraction: Any = None  # 2k-p: the FractionalResult (design, aliases) whose effects are `result`


@dataclass
class Settings:
    confidence: float = 0.95
    omit_ns: int = 0
    outliers: str = "none"
    loss_threshold: float = 0.01
    response: str | None = None
    reproducibility_tolerance: float = 0.05
    reproducibility_cv_max: float = 0.05
    target_precision: float | None = None  # plan repetitions for ± this share (analyze --target-precision)
    generators: tuple[str, ...] = ()  # the design's (2k-p), from the spec


@dataclass
class CampaignAnalysis:
    """Everything `analyze` found: the JSON of `--json`, and the objects its tables are made from."""

    json: dict[str, Any]
    models: list[FittedModel]
    settings: Settings
    policy: OutlierPolicy
    measurements_stored: int
    notes: list[str]
    data: dict[str, Any] = field(default_factory=dict)  # what `json` holds, before it became JSON
    excluded: list[dict[str, Any]] = field(default_factory=list)  # observations the outlier policy excluded
    fairness: cp.Fairness | None = None
    udp: cp.UdpEffective | None = None
    rebuilds: cp.Rebuilds | None = None
    placement: cp.Placements | None = None
    periodic: cp.Periodic | None = None
    change_points: ChangePoints | None = None
    plan: RepetitionPlan | None = None  # with Settings.target_precision

    @property
    def reproducibility(self) -> list[Any]:
        """Every metric's rebuilds against the first build ([] without rebuilds)."""
        return self.rebuilds.results if self.rebuilds else []


def settings_from_spec(spec: Any) -> Settings:
    """The spec's `analysis:` section as settings (the command line may override them)."""
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
    """Every analysis that fits the stored campaign (module docstring), as data and JSON."""
    spec = spec_of(frames.campaign)
    s = settings or settings_from_spec(spec)
    factors = list(cd.factor_columns([f.name for f in spec.factors]).values())  # their columns
    listed = {col: list(f.levels) for f, col in zip(spec.factors, factors, strict=True)}
    design = spec.design
    design_kind = design.kind if design else ("full-factorial" if factors else None)
    s.generators = tuple(design.generators) if design else ()
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
            # what the store holds: fewer for an unfinished campaign, one per run for a monitored one
            "replications_stored": _repetitions_stored(frames.measurements),
            "randomize": bool(design.randomize) if design else spec.schedule.order == "random",
            "rebuild": bool(design.rebuild) if design else spec.schedule.rebuild,
            "seed": row["seed"],
        },
        "confidence": s.confidence,
        "transient": transient,
        "flows": len(flows),
        "groups": len(groups),  # steps: flows started together, one flow or more
        "simultaneous_groups": int((groups["n_flows"] >= 2).sum()) if len(groups) else 0,
        # the alone steps of star/fan-in patterns: no group (group_table leaves them out), the
        # baseline of the simultaneous flows; counted so the overview accounts for every step
        "alone_steps": int(flows.loc[flows["group_kind"] == "alone", "step_key"].nunique())
        if len(flows)
        else 0,
    }
    models: list[FittedModel] = []
    notes: list[str] = []
    policy = OutlierPolicy(s.outliers, by=("series", *factors))  # judged among a treatment's replications
    excluded: list[dict[str, Any]] = []
    out["events"] = _event_counts(frames.events, flows)
    out["models"] = []
    if design_kind and not groups.empty:
        out["models"] = _models(groups, factors, listed, design_kind, s, policy, models, notes, excluded)
    out["outliers"] = {"policy": policy.describe(), "method": policy.method, "excluded": excluded}
    result = CampaignAnalysis({}, models, s, policy, len(frames.measurements), notes, excluded=excluded)
    _parts(result, out, flows, factors)
    if s.target_precision is not None:
        result.plan = repetition_plan(groups, factors, s.target_precision, s.confidence)
        out["plan"] = result.plan.to_json() if result.plan else []
    out["notes"] = notes
    result.json = jsonable(out)
    result.data = out
    return result


def _parts(result: CampaignAnalysis, out: dict[str, Any], flows: pd.DataFrame, factors: list[str]) -> None:
    """The analyses without a model (campaign_parts.py), into `result` and `out`."""
    s = result.settings
    out |= {"fairness": {"groups": [], "spread": []}, "udp_effective_throughput": [], "reproducibility": []}
    out |= {"placement": [], "periodic": [], "change_points": []}
    if flows.empty:
        result.notes.append("no measurement of this campaign is stored as ok: nothing to analyse")
        return
    thresholds = ReproducibilityThresholds(
        cv_max_ratio=s.reproducibility_cv_max,
        tolerance_ratio=s.reproducibility_tolerance,
        confidence=s.confidence,
    )
    result.fairness = cp.fairness(flows, factors, s.confidence)
    result.udp = cp.udp_effective(flows, factors)
    result.rebuilds = cp.rebuilds(flows, factors, out["design"], thresholds)
    result.placement = cp.placements(flows, s.confidence)
    result.periodic = cp.periodic(flows, s.confidence)
    result.change_points = campaign_change_points(flows)
    if result.fairness:
        out["fairness"] = result.fairness.to_json()
    if result.udp:
        out["udp_effective_throughput"] = result.udp.rows
    out["reproducibility"] = [m.to_dict() for m in result.reproducibility]
    if result.placement:
        out["placement"] = result.placement.to_json()
    if result.periodic:
        out["periodic"] = result.periodic.to_json()
    if result.change_points:
        out["change_points"] = result.change_points.to_json()


# ------------------------------------------------------------------------------------ outliers


def _event_counts(events: pd.DataFrame, flows: pd.DataFrame) -> dict[str, int]:
    counts = {str(k): int(v) for k, v in events.groupby("kind").size().items()} if not events.empty else {}
    if not flows.empty and flows["unreachable_events"].notna().any():
        counts["unreachable replies"] = int(flows["unreachable_events"].fillna(0).sum())
    return counts


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
) -> list[dict[str, Any]]:
    """Fit one model per series and response; the JSON entry of each (`models` gets the objects)."""
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
                shown = "" if pd.isna(value) else "∞" if np.isinf(value) else f"{value:.6g}"
                notes.append(f"{label}: every observation is {shown}; nothing to explain")
                continue
            data = _in_listed_order(_apply_policy(policy, data, response, label, excluded), varying, listed)
            try:
                entry = _fit(data, response, varying, design_kind, s, label, models)
            except DataError as exc:
                notes.append(f"{label}: {exc}")
                continue
            out.append({"series": series, "response": response, "factors": varying} | entry)
    for entry in out:
        entry["outliers_excluded"] = [
            e for e in excluded if e["model"] == f"{entry['series']} · {entry['response']}"
        ]
    return out


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
    models: list[FittedModel],
) -> dict[str, Any]:
    if len(factors) == 1:
        return _fit_one_factor(data, response, factors[0], s, label, models)
    if design_kind == "two-factor" and len(factors) == 2:
        two, diag, entry = fit_two_factor(data, response, factors, s.confidence)
        models.append(FittedModel(label, "two-factor", two, diagnostics=diag))
        return entry
    if design_kind == "2k-p" and s.generators:  # a series where a factor does not vary gets a note
        fraction, diag, entry = fit_fraction(data, response, factors, s.generators, s.confidence)
        # the basic design's effects are the model (its figures are the 2^k ones); the fraction names them
        models.append(FittedModel(label, "2k-p", fraction.effects, diagnostics=diag, fraction=fraction))
        return entry
    if design_kind == "2k-r" and all(data[f].nunique() == 2 for f in factors):
        r = two_k_r(data, response, factors, s.confidence)
        diag = diagnostics(r)
        models.append(FittedModel(label, "2k-r", r, diagnostics=diag))
        return {"model": "2k-r", "result": r.to_dict(), "diagnostics": diag.to_dict()}
    f = full_factorial_anova(data, response, factors, s.confidence)
    diag = diagnostics(f)
    steps = {factor: factor_successive_differences(f, factor) for factor in factors}
    models.append(FittedModel(label, "full-factorial", f, diagnostics=diag, factor_contrasts=steps))
    return {
        "model": "full-factorial",
        "result": f.to_dict(),
        "successive_differences": {k: [c.to_dict() for c in v] for k, v in steps.items()},
        "diagnostics": diag.to_dict(),
    }


def _fit_one_factor(
    data: pd.DataFrame, response: str, factor: str, s: Settings, label: str, models: list[FittedModel]
) -> dict[str, Any]:
    """One-factor ANOVA with successive differences; for loss also capacity and the truncated model."""
    a = one_factor_anova(data, response, factor, s.confidence)
    steps = successive_differences(a)
    diag = diagnostics(a)
    fitted = FittedModel(label, "one-factor", a, steps, diagnostics=diag)
    entry: dict[str, Any] = {
        "model": "one-factor",
        "anova": a.to_dict(),
        "successive_differences": [c.to_dict() for c in steps],
        "diagnostics": diag.to_dict(),
        "residual_sd_by_level": residual_spread_by_level(a),
    }
    if "loss" in response:
        rec = recommend_capacity(a, s.loss_threshold)
        fitted.capacity = rec
        entry["capacity"] = rec.to_dict()
        trunc = _truncate(data, response, factor, a, s)
        if trunc is not None:
            fitted.truncated = trunc
            fitted.truncated_diagnostics = td = diagnostics(trunc)
            entry["truncated"] = {
                "levels": list(trunc.levels),
                "anova": trunc.to_dict(),
                "diagnostics": td.to_dict(),
            }
    models.append(fitted)
    return entry


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


def _repetitions_stored(measurements: pd.DataFrame) -> int:
    """How many repetitions have a stored measurement (a monitored campaign's are its runs)."""
    if measurements.empty or "repetition" not in measurements:
        return 0
    return int(measurements["repetition"].nunique())
