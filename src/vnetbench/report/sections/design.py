"""Report sections of the designed-experiment analysis: the tables of `vnetbench analyze` and the
figures that go with them (residuals against predicted response, normal QQ plots, level means with
the capacity threshold, effects and contrast intervals, rebuilds against the first build, each
series with its change points)."""

from __future__ import annotations

import re
from typing import Any

from vnetbench.analysis.campaign_analysis import FittedModel
from vnetbench.report import fidelity
from vnetbench.report import format as fmt
from vnetbench.report import stats_figures as sf
from vnetbench.report.analysis_tables import analysis_parts
from vnetbench.report.sections import ReportContext
from vnetbench.report.view import Figure, Section

ORDER = 70
MAIN_RESULT = 15  # the design's effects, the rebuilds' verdicts, the placements: before per-connection views
MAIN_PARTS = ("design", "outliers", "effects", "reproducibility", "placement")


def build(ctx: ReportContext) -> list[Section]:
    if ctx.frame.empty or not (ctx.frame["status"] == "ok").any():
        return []
    result = ctx.analysis
    if result is None:  # the data cannot be analysed as the spec asks: say why, keep the report
        return [
            Section("Designed experiment", "analysis-design", items=[f"Not analysed: {ctx.analysis_error}"])
        ]
    designed = bool(result.json["design"]["kind"])
    sections = []
    for part in analysis_parts(result):
        if part.anchor in ("design", "outliers") and not designed:
            continue  # without factors the overview and the policy say nothing new
        section = Section(
            part.title,
            f"analysis-{part.anchor}",
            intro=part.intro,
            tables=list(part.tables),
            items=list(part.items),
            order=MAIN_RESULT if part.anchor in MAIN_PARTS else None,
        )
        if part.anchor == "effects":
            section.figures = _model_figures(result.models, ctx)
            section.items = _capacity_caveats(section.items, result.models, ctx)
        if part.anchor == "reproducibility":
            section.figures = _reproducibility_figures(result.reproducibility, ctx)
        if part.anchor == "placement":
            section.figures = _placement_figures(result.json["placement"], ctx)
        if part.anchor == "change-points":
            section.figures = _change_point_figures(result.json["change_points"], ctx)
        sections.append(section)
    has_analysis = any(s.anchor not in ("analysis-design", "analysis-outliers") for s in sections)
    return sections if designed or has_analysis else []


def _capacity_caveats(items: list[str], models: list[Any], ctx: ReportContext) -> list[str]:
    """Each capacity item whose recommendation counts loss that the Machine as bottleneck lines call
    this machine's, with the caveat that says at which levels (fidelity.capacity_caveat)."""
    out = list(items)
    for m in models:
        if m.capacity is None or m.capacity.recommended is None:
            continue
        caveat = fidelity.capacity_caveat(m.result.factor, ctx.frame, ctx.losses)
        said = f"Recommended maximum: {m.result.factor} = {m.capacity.recommended} "
        for i, item in enumerate(out):
            if caveat and " — capacity: " in item and said in item and "Caveat:" not in item:
                out[i] = f"{item} Caveat: {caveat}."
    return out


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9]+", "_", text).strip("_")[:80]


def _model_figures(models: list[FittedModel], ctx: ReportContext) -> list[Figure]:
    figures = []
    for i, fitted in enumerate(models):
        m = fmt.shown_model(fitted)  # 'rx · udp · loss (%)', as the tables say
        base = ctx.fig_dir / f"design_{i}_{_slug(m.label)}"
        scale, unit = fmt.unit_of(m.result.response)  # the tables' unit (Mbit/s for bit/s)
        figures.append(
            Figure(
                f"{m.label}: residuals vs predicted",
                sf.residuals_vs_predicted(
                    m.result, base.with_name(base.name + "_resid"), m.label, scale, unit
                )[0],
                "a trend or a funnel means the errors' spread depends on the response",
            )
        )
        figures.append(
            Figure(
                f"{m.label}: normal QQ plot of residuals",
                sf.normal_qq(m.result, base.with_name(base.name + "_qq"), m.label, scale, unit)[0],
                "points on the line: normally distributed errors",
            )
        )
        if m.kind == "one-factor":
            threshold = m.capacity.threshold if m.capacity is not None else None
            figures.append(
                Figure(
                    f"{m.label}: mean per level",
                    sf.level_means(
                        m.result, base.with_name(base.name + "_means"), threshold, m.label, scale, unit
                    )[0],
                )
            )
            if m.contrasts:
                figures.append(
                    Figure(
                        f"{m.label}: successive differences",
                        sf.contrast_intervals(
                            m.contrasts, base.with_name(base.name + "_steps"), m.label, scale, unit
                        )[0],
                        "an interval that excludes 0 is a significant step",
                    )
                )
            if m.truncated is not None:
                label = f"{m.label} (truncated model, levels {list(m.truncated.levels)})"
                figures.append(
                    Figure(
                        f"{label}: normal QQ plot",
                        sf.normal_qq(
                            m.truncated, base.with_name(base.name + "_trunc_qq"), label, scale, unit
                        )[0],
                    )
                )
        elif m.kind in ("2k-r", "2k-p"):  # a fraction's model is its basic 2^k design
            figures.append(
                Figure(
                    f"{m.label}: effects",
                    sf.effects_chart(m.result, base.with_name(base.name + "_effects"), m.label, scale, unit)[
                        0
                    ],
                    "grey: the interval includes 0 (not significant)",
                )
            )
    return figures


def _reproducibility_figures(results: list[Any], ctx: ReportContext) -> list[Figure]:
    figures = []
    for i, r in enumerate(results):  # every metric with data gets its figure
        if r.n_rebuilds < 1:
            continue
        path = ctx.fig_dir / f"design_repro_{i}_{_slug(r.metric)}"
        title = f"{fmt.shown_metric(r.metric)}: {r.verdict}"
        figures.append(Figure(title, sf.reproducibility_chart(r, path)[0]))
    return figures


def _placement_figures(comparisons: list[dict[str, Any]], ctx: ReportContext) -> list[Figure]:
    figures = []
    for i, c in enumerate(comparisons):
        scale, unit = fmt.unit_of(c["response"])
        # 'rtt: mean (ms)', not 'rtt: rtt mean (ms)', as the table above it; the title says what the
        # error bars are (the quickstart's figures drew them unexplained)
        label = f"{c['measurement']}: {fmt.metric_label(c['response'], c['measurement'])} per placement"
        title = f"{label} (bars: {100 * c['confidence']:g} % interval of the mean)"
        path = (
            ctx.fig_dir
            / f"design_placement_{i}_{_slug(c['measurement'] + ' ' + c['response'])}_per_placement"
        )
        figures.append(Figure(label, sf.placement_chart(c, path, scale, unit, title)[0]))
    return figures


def _change_point_figures(series: list[dict[str, Any]], ctx: ReportContext) -> list[Figure]:
    """Each series with a change point, its segments' means and the points marked."""
    figures = []
    for s in series:
        if not s["change_points"]:
            continue
        scale, unit = fmt.unit_of(s["response"])
        label = f"{s['series']} {s['pair']} ({s['treatment']})"
        path = ctx.fig_dir / f"changes_{_slug(label)}_{s['response']}"
        figures.append(
            Figure(label, sf.change_points_chart(s, path, scale, unit)[0], "dashed: a change point")
        )
    return figures
