"""The campaign analysis as tables of plain strings: one layout for the terminal (`vnetbench analyze`)
and the report (HTML), in the form of Jain's tables.

`analysis_parts(analysis)` turns the data of `analysis.campaign_analysis.analyze_campaign` into
`Section`s, in the order the analysis runs: the design, outliers and events, the models' effects,
fairness, UDP effective throughput, rebuilds, placement, time of day, change points, the repetition
plan (`--target-precision`), notes.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from typing import Any

import pandas as pd

from vnetbench.analysis import campaign_parts as cp
from vnetbench.analysis.campaign_analysis import CampaignAnalysis, FittedModel
from vnetbench.analysis.campaign_changes import ChangePoints
from vnetbench.analysis.campaign_plan import RepetitionPlan
from vnetbench.analysis.fairness import index_sd_text
from vnetbench.analysis.fractional import FractionalResult, roman
from vnetbench.analysis.full_factorial import FactorialAnova
from vnetbench.analysis.reproducibility import percent
from vnetbench.analysis.two_factor import TwoFactorResult
from vnetbench.report import format as fmt
from vnetbench.report.format import ci, f_cell, num, p_cell, pct, plain, scaled, unit_of, yes
from vnetbench.report.view import Section, TableView

# a 2^k effect's sign in levels (TwoKRResult.compares): q = (mean where + − mean where −) / 2
COMPARES = "compares"
COMPARES_NOTE = (
    "compares: the levels where an effect's column is +1 minus those where it is −1; "
    "q is half that difference of means"
)


def _signed(text: str) -> str:
    """Effects, contrasts and their intervals with the minus sign U+2212, as the Findings quote them
    ('q = −1.591 Mbit/s, interval −1.601 to −1.580'): the same value in two glyphs read as two."""
    return fmt.minus_all(text)


def _per(x: float | None, scale: float) -> float | None:
    return None if x is None else x / scale


def squared(response: str) -> str:
    """What SS and MS are in: the display unit squared ('(Mbit/s)²'), or the response's own unit."""
    unit = unit_of(response)[1]
    return f"({unit})²" if unit else "the response's unit squared"


def one_factor_tabulars(
    label: str, a: Any, steps: Sequence[Any], scale: float, shown: str
) -> list[TableView]:
    """ANOVA, effects per level and (if given) successive differences of a one-factor model."""
    conf = f"{100 * a.confidence:g} %"
    rows = []
    for r in a.table():
        rows.append(
            [
                r["component"],
                num(_per(r["sum_of_squares"], scale**2), 8),
                pct(r["pct_variation"]),
                str(r["dof"]),
                num(_per(r["mean_square"], scale**2), 5),
                f_cell(r["f"], r.get("f_note")),
                num(r["f_table"], 4),
                p_cell(r["p_value"], r.get("f_note")),
            ]
        )
    anova = TableView(
        f"{label}: one-factor ANOVA by {a.factor} (a = {a.a}, N = {a.n})",
        ["component", "SS", "% of var.", "DF", "MS", "F", f"F[{conf}]", "p"],
        rows,
        f"SS and MS in {squared(a.response)}; s_e = {fmt.metric(a.response, a.s_e, True)}; "
        + (
            f"F {a.f_note}"
            if a.f_note
            else f"{'significant' if a.significant else 'not significant'} at {conf}"
        ),
    )
    effects = TableView(
        f"{label}: mean and effect per level ({conf} intervals)",
        ["level", "r", f"mean {shown}", "effect", "interval", "significant"],
        [
            [
                str(e.level),
                str(e.n),
                scaled(e.mean, scale),
                _signed(scaled(e.effect, scale)),
                ci(e.ci_low / scale, e.ci_high / scale),
                yes(e.significant),
            ]
            for e in a.effects
        ],
    )
    out = [anova, effects]
    if steps:
        out.append(steps_tabular(f"{label}: successive differences", steps, scale, shown, "s = s_e·√(2/r)"))
    return out


def steps_tabular(title: str, steps: Sequence[Any], scale: float, shown: str, formula: str) -> TableView:
    """Contrasts (successive differences) with their intervals, in the response's display unit."""
    conf = f"{100 * steps[0].confidence:g} %"
    return TableView(
        f"{title} ({conf}, {formula}, t on {steps[0].dof} DF)",
        ["contrast", f"estimate {shown}", "interval", "significant"],
        [
            [
                c.label,
                _signed(scaled(c.estimate, scale)),
                ci(c.ci_low / scale, c.ci_high / scale),
                yes(c.significant),
            ]
            for c in steps
        ],
    )


def two_k_r_tabulars(label: str, r: Any, scale: float, shown: str) -> list[TableView]:
    """Effects and allocation of variation of a 2^k r design."""
    conf = f"{100 * r.confidence:g} %"
    coding = "; ".join(f"{f}: −1 = {lo}, +1 = {hi}" for f, (lo, hi) in r.coding.items())
    rows = [
        [
            e.letters,
            e.name,
            r.compares(e),
            _signed(scaled(e.q, scale)),
            ci(e.ci_low / scale, e.ci_high / scale),
            yes(e.significant),
            plain(None if e.ss is None else e.ss / scale**2),
            pct(e.pct_variation),
        ]
        for e in r.effects
    ]
    rows.append(["e", "errors", "", "", "", "", plain(r.sse / scale**2), pct(r.pct_e)])
    return [
        TableView(
            f"{label}: 2^{r.k}·{r.r} effects and allocation of variation ({conf}, t on {r.df_e} DF)",
            ["effect", "factors", COMPARES, f"q {shown}", "interval", "significant", "SS", "% of variation"],
            rows,
            f"{coding}; {COMPARES_NOTE}; SS in {squared(r.response)}; "
            f"s_e = {_with_unit(r.s_e / scale, r.response)}, "
            f"s_q = {_with_unit(r.s_q / scale, r.response)}",
        )
    ]


def _with_unit(x: float, response: str) -> str:
    """A standard error in the response's display unit, five digits with their zeros, each with its
    unit: 's_e = 0.024780 Mbit/s, s_q = 0.0050582 Mbit/s' (not 's_e = 0.02478, s_q = … Mbit/s')."""
    unit = unit_of(response)[1]
    return fmt.zeros_kept(x, 5) + (f" {unit}" if unit else "")


def factorial_tabulars(label: str, f: Any, scale: float, shown: str) -> list[TableView]:
    """ANOVA and cell means of a full-factorial design."""
    conf = f"{100 * f.confidence:g} %"
    rows = factorial_anova_rows(f, scale)
    cells = TableView(
        f"{label}: cell means",
        [*f.factors, "n", f"mean {shown}", "SD"],
        [
            [
                *(str(r[x]) for x in f.factors),
                str(r["cell_n"]),
                scaled(r["cell_mean"], scale),
                scaled(r["cell_sd"], scale),
            ]
            for r in f.cell_means.to_dict("records")
        ],
    )
    kind = "balanced" if f.balanced else "unbalanced: type II SS"
    return [
        TableView(
            f"{label}: full-factorial ANOVA ({kind})",
            ["component", "SS", "% of var.", "DF", "MS", "F", f"F[{conf}]", "p"],
            rows,
            f"SS and MS in {squared(f.response)}; s_e = {fmt.metric(f.response, f.s_e, True)}",
        ),
        cells,
    ]


def diag_tabular(label: str, d: Any) -> TableView:
    """A model's diagnostics: QQ correlation, Shapiro–Wilk, residual range, verdict."""
    verdict = "errors small (< 1/10 of the response range)" if d.errors_small else "check the plots"
    return TableView(
        f"{label}: diagnostics",
        ["QQ correlation r", "Shapiro–Wilk p", "residual range / predicted range", "verdict"],
        [
            [
                num(d.qq_r, 4),
                fmt.MISSING if d.shapiro_note else num(d.shapiro_p, 3),
                num(d.residual_ratio, 3),
                verdict,
            ]
        ],
        f"Shapiro–Wilk {d.shapiro_note}" if d.shapiro_note else "",
    )


def two_factor_tabulars(label: str, r: TwoFactorResult, scale: float, shown: str) -> list[TableView]:
    """ANOVA, effects, level means and predicted responses of a two-factor design."""
    conf = f"{100 * r.confidence:g} %"
    kind = "with replication" if r.replicated else "without replication"
    anova = TableView(
        f"{label}: two-factor ANOVA {kind}",
        ["component", "SS", "% of var.", "DF", "F", "p"],
        [[t.name, plain(t.ss / scale**2, 8), pct(t.pct_variation), str(t.df), f_cell(t.f, t.f_note),
          p_cell(t.p_value, t.f_note)] for t in r.terms]
        + [["errors", plain(r.sse / scale**2, 8), pct(r.pct_e), str(r.df_e), "", ""]],
        f"SS in {squared(r.response)}; s_e = {fmt.metric(r.response, r.s_e, True)}",
    )  # fmt: skip
    estimates = TableView(
        f"{label}: effects, level means and predicted responses ({conf}, t on {r.df_e} DF)",
        ["estimate", f"value {shown}", "interval", "prediction interval", "significant"],
        [
            [e.label, _signed(scaled(e.value, scale)), ci(e.ci_low / scale, e.ci_high / scale),
             ci(e.prediction[0] / scale, e.prediction[1] / scale) if e.prediction else "",
             yes(e.significant) if e.kind in ("alpha", "beta", "gamma") else ""]
            for e in r.estimates
        ],
    )  # fmt: skip
    return [anova, estimates]


def fraction_tabular(label: str, f: FractionalResult) -> TableView:
    """A 2^(k−p) fraction: its factors' letters, defining relation and the alias chain of each column."""
    # a negative word with the minus sign, as its alias chains write 'ABC − D' (the JSON keeps '-ABCD')
    words = [f"{'−' if s < 0 else ''}{w}" for w, s in zip(f.defining_relation, f.relation_signs, strict=True)]
    return TableView(
        f"{label}: 2^({len(f.factors)}−{f.p}) fraction, resolution {roman(f.resolution)}",
        ["column", "estimates"],
        [["factors", ", ".join(f"{c} = {n}" for c, n in f.letters.items())],
         ["defining relation", "I = " + " = ".join(words)],
         *[[col, chain] for col, chain in f.aliases.items()]],
    )  # fmt: skip


def factorial_anova_rows(f: FactorialAnova, scale: float = 1.0) -> list[list[str]]:
    """The ANOVA table of a full factorial in Jain's form: y, ȳ.., y − ȳ.., each term, the errors;
    sums of squares in the display unit squared (the response / `scale`)."""
    sq = scale**2
    rows = [
        ["y", plain(f.ssy / sq, 8), "", str(f.n), "", "", "", ""],
        ["ȳ..", plain(f.ss0 / sq, 8), "", "1", "", "", "", ""],
        ["y − ȳ..", plain(f.sst / sq, 8), "100.00 %", str(f.n - 1), "", "", "", ""],
    ]
    for x in f.terms:
        rows.append(
            [
                x.name,
                plain(x.ss / sq, 8),
                pct(x.pct_variation),
                str(x.df),
                plain(x.ms / sq, 5),
                f_cell(x.f, x.f_note),
                num(x.f_table, 4),
                p_cell(x.p_value, x.f_note),
            ]
        )
    rows.append(["errors", plain(f.sse / sq, 8), pct(f.pct_e), str(f.df_e), plain(f.mse / sq, 5), "", "", ""])
    return rows


# ------------------------------------------------------------------------------------ the parts


def analysis_parts(a: CampaignAnalysis) -> list[Section]:
    """The tables and notes of a campaign analysis, in the order `vnetbench analyze` prints them."""
    parts = [_overview(a), _outliers(a)]
    if a.data["design"]["kind"] and a.data["groups"]:
        parts.append(_effects(a.models))
    if a.data["flows"]:
        found = (
            _fairness(a.fairness) if a.fairness else None,
            _udp(a.udp) if a.udp else None,
            _rebuilds(a.rebuilds) if a.rebuilds else None,
            _placement(a.placement) if a.placement else None,
            _periodic(a.periodic) if a.periodic else None,
            _change_points(a.change_points) if a.change_points else None,
        )
        parts += [p for p in found if p is not None]
    if a.plan:
        parts.append(_plan(a.plan))
    if a.notes:
        parts.append(Section("Analysis notes", "analysis-notes", items=list(a.notes)))
    return parts


def _groups(out: dict[str, Any]) -> str:
    """Steps of two or more flows started together; steps of one flow are counted apart (they are
    no group: openstack-bridges' 60 single sweeps made '160 groups of simultaneous flows' of 100)."""
    multi = out.get("simultaneous_groups", out["groups"])
    alone = int(out.get("alone_steps", 0))  # steps of a star's flow alone: not in `groups`
    single = out["groups"] - multi + alone
    if not single:
        return str(multi)
    text = f"{multi} (and {single} {'step' if single == 1 else 'steps'} of one flow"
    if alone:  # quickstart: '2 (and 18 steps of one flow)' of 24 steps left out the star's 4 alone
        text += f", {alone} of them {'a flow' if alone == 1 else 'flows'} of a group measured alone"
    return text + ")"


def _replications(d: dict[str, Any]) -> str:
    """The design's replications, and what the store holds where that differs: '2 stored (5 planned)'
    for an unfinished campaign, '3 stored (1 planned)' for a monitored one (a run is a repetition)."""
    planned, stored = d["replications"], d.get("replications_stored")
    return str(planned) if stored in (None, 0, planned) else f"{stored} stored ({planned} planned)"


def _overview(a: CampaignAnalysis) -> Section:
    out = a.data
    d = out["design"]
    levels = "; ".join(f"{f['name']} ∈ {f['levels']} ({f['path']})" for f in d["factors"]) or "none"
    t = out["transient"]
    rows = [
        ["design", str(d["kind"] or "none (no factors)")],
        ["factors", levels],
        ["replications", _replications(d)],
        ["run order", f"randomised, seed {d['seed']}" if d["randomize"] else "as written"],
        ["rebuild per replication", "yes" if d["rebuild"] else "no"],
        ["flows analysed", f"{out['flows']} ok of {a.measurements_stored} stored"],
        ["groups of simultaneous flows", _groups(out)],
        [
            "transient removal",
            f"first {t['omit_ns'] / 1e9:g} s of every flow: {t['samples_dropped']} samples dropped, "
            f"{t['flows_recomputed']} flows recomputed"
            if t["omit_ns"]
            else "none (analysis.omit is 0)",
        ],
        ["confidence", f"{100 * out['confidence']:g} %"],
    ]
    return Section("Designed experiment", "design", tables=[TableView("", ["", ""], rows)])


def _outliers(a: CampaignAnalysis) -> Section:
    part = Section(
        "Outliers and events",
        "outliers",
        intro="Nothing is excluded unless the spec's analysis.outliers (or --outliers) asks for it; "
        "events are counted, never dropped silently.",
    )
    part.items.append(a.policy.describe())
    counts = a.data["events"]
    if counts:
        part.tables.append(TableView("Events", ["event", "count"], [[k, str(v)] for k, v in counts.items()]))
    else:
        part.items.append("No events (unreachable replies, tool anomalies, incomplete groups) were recorded.")
    if a.excluded:
        part.tables.append(
            TableView(
                "Observations excluded by the outlier policy",
                ["model", "step", "value", "reason"],
                [
                    [e["model"], e["step_key"], fmt.metric(e["model"], e["value"], True), e["reason"]]
                    for e in a.excluded
                ],
            )
        )
    return part


def _shown(response: str) -> tuple[float, str]:
    """The display scale of a response and its column label: 'throughput (Mbit/s)'."""
    return unit_of(response)[0], fmt.metric_label(response)


def _effects(models: list[FittedModel]) -> Section:
    part = Section(
        "Effects of the factors",
        "effects",
        intro="One model per series (pattern · measurement, with the connection for pairs) and response. "
        "Each observation is one group of simultaneous flows in one replication: its mean per flow "
        "(throughput, loss, RTT), or Jain's index over its flows.",
    )
    for fitted in models:
        m = fmt.shown_model(fitted)  # its label with the response in people's words: 'throughput (Mbit/s)'
        scale, shown = _shown(m.result.response)
        if m.kind == "one-factor":
            part.tables += one_factor_tabulars(m.label, m.result, m.contrasts, scale, shown)
            part.tables.append(diag_tabular(m.label, m.diagnostics))
            if m.capacity is not None:
                part.items.append(f"<b>{m.label}</b> — capacity: " + " ".join(m.capacity.reasoning))
            if m.truncated is not None:
                title = f"{m.label} (truncated: {m.result.factor} ≥ {m.truncated.levels[0]})"
                part.tables.append(diag_tabular(title, m.truncated_diagnostics))
        elif m.kind == "2k-r":
            part.tables += two_k_r_tabulars(m.label, m.result, scale, shown)
            part.tables.append(diag_tabular(m.label, m.diagnostics))
        elif m.kind == "2k-p":
            part.tables.append(fraction_tabular(m.label, m.fraction))
            part.tables += two_k_r_tabulars(m.label, m.result, scale, shown)
            part.tables.append(diag_tabular(m.label, m.diagnostics))
        elif m.kind == "two-factor":
            part.tables += two_factor_tabulars(m.label, m.result, scale, shown)
            part.tables.append(diag_tabular(m.label, m.diagnostics))
        else:
            part.tables += factorial_tabulars(m.label, m.result, scale, shown)
            for factor, contrasts in m.factor_contrasts.items():
                title = f"{m.label}: successive levels of {factor} (marginal means)"
                part.tables.append(steps_tabular(title, contrasts, scale, shown, "s = s_e·√(Σh²/r)"))
            part.tables.append(diag_tabular(m.label, m.diagnostics))
    return part


def _series_key(row: dict[str, Any], keys: Sequence[str]) -> tuple[Any, ...]:
    """Rows by series with the numbers in its label in numeric order (a sweep's '… 18 B at 30000 pps'
    before '… at 100000 pps', which text order put after it), then by the factor columns."""
    words = re.split(r"(\d+(?:\.\d+)?)", str(row[keys[0]]))
    series = tuple((0, float(w), "") if i % 2 else (1, 0.0, w) for i, w in enumerate(words))
    return (series, fmt.row_key(row, keys[1:]))


# benchmarks/fidelity/README.md, fairness.py --only window; said only where TCP flows shared a link
TCP_SETTLING = (
    " TCP flows' shares settle over tens of seconds on slow links (three cubic flows into one "
    "20 mbit link: 6 of 16 runs within 25–42 % each over 10 s, 16 of 16 over 60 s), so a low "
    "index from a short run can be congestion control converging, not an unfair network."
)


def _fairness(f: cp.Fairness) -> Section:
    conf = f"{100 * f.confidence:g} %"
    part = Section(
        "Fairness of simultaneous flows",
        "fairness",
        intro="Jain's index (Σx)²/(n·Σx²) of the flows' throughput in each group started together; "
        "1 is a fair share, 1/n one flow taking everything. Its spread over replications per treatment."
        + (TCP_SETTLING if f.tcp else ""),
    )
    rows = sorted(f.spread.to_dict("records"), key=lambda r: _series_key(r, f.config))
    part.tables.append(
        TableView(
            f"Jain's fairness index over replications ({conf} interval of the expected index)",
            [*f.config, "replications", "mean", "SD", "min", "max", "interval"],
            [
                [
                    *(str(r[c]) for c in f.config),
                    str(r["replications"]),
                    # four digits with their zeros, as the interval beside them (0.9940, not 0.994
                    # beside (0.9886, 0.9963)); the SD without exponent, below the index's four
                    # decimals '< 0.0001' (not 4.84e-07 nor 0.0000000000641)
                    fmt.zeros_kept(r["mean"]) if pd.notna(r["mean"]) else "undefined",
                    _index_sd(r["sd"]),
                    fmt.zeros_kept(r["min"]),
                    fmt.zeros_kept(r["max"]),
                    ci(r["ci_low"], r["ci_high"]),
                ]
                for r in rows
            ],
            # replications where every flow got 0 have no index (fairness.fairness_spread's note)
            "\n".join(
                f"{', '.join(str(r[c]) for c in f.config)}: {r['note']}"
                for r in rows
                if isinstance(r.get("note"), str)
            ),
        )
    )
    return part


def _index_sd(sd: float) -> str:
    """The SD of Jain's index over replications: three significant digits; one smaller than the
    table's last decimal (0.0001) as '< 0.0001'; '' when there is none (one replication). The
    competition's sentences write it so too (`fairness.index_sd_text`)."""
    return "" if pd.isna(sd) else index_sd_text(float(sd))


def _udp(u: cp.UdpEffective) -> Section:
    part = Section(
        "UDP effective throughput",
        "udp-effective",
        intro="(1 − loss) × offered rate per flow (ONL eq. 1), averaged over the flows and replications.",
    )
    part.tables.append(
        TableView(
            "UDP effective throughput per treatment",
            [
                *u.keys,
                "n (flows × replications)",
                "offered (Mbit/s)",
                "received (Mbit/s)",
                "mean loss",
                "effective (Mbit/s)",
            ],
            [
                [
                    *(str(r[c]) for c in u.keys),
                    str(r["n_flows"]),
                    fmt.zeros_kept(r["offered_bps"] / 1e6),
                    fmt.zeros_kept(r["throughput_bps"] / 1e6),
                    fmt.share(r["loss_ratio"], 1.0),
                    fmt.zeros_kept(r["effective_throughput_bps"] / 1e6),
                ]
                for r in sorted(u.rows, key=lambda r: _series_key(r, u.keys))
            ],
        )
    )
    return part


def _rebuilds(r: cp.Rebuilds) -> Section:
    th = r.thresholds
    tolerances = ", ".join(
        f"{fmt.metric_name(k)} ±{fmt.metric(k, v, True, delta=True)[1:]}" for k, v in cp.ABS_TOLERANCE.items()
    )
    part = Section(
        "Reproducibility across rebuilds",
        "reproducibility",
        intro=f"The topology was built {r.builds} times from scratch. The first build's "
        f"values are the reference; each rebuild contributes its mean. Verdict thresholds: CV across "
        f"rebuilds ≤ {100 * th.cv_max_ratio:g} %, difference within ±{100 * th.tolerance_ratio:g} % of "
        "the first build (the whole Welch interval); for metrics near zero, absolute tolerances: "
        f"{tolerances}.",
    )
    columns = ["metric", "first build mean (n)", "rebuilds", "mean of rebuilds", "CV", "difference"]
    columns += ["Welch interval", "Mann-Whitney p", "verdict"]
    rows = [
        [
            fmt.shown_metric(m.metric),
            f"{fmt.metric(m.metric, m.mean_first)} ({m.n_first})",
            str(m.n_rebuilds),
            fmt.metric(m.metric, m.mean_rebuilds),
            # the digits of the sentences below the table (percent): 0.00795 %, not 0.00 %
            percent(m.cv_rebuilds_ratio) if math.isfinite(m.cv_rebuilds_ratio) else "",
            fmt.metric(m.metric, m.difference, delta=True)
            + (f" ({percent(m.difference_ratio, True)})" if math.isfinite(m.difference_ratio) else ""),
            "exact: no spread" if m.exact else fmt.metric_ci(m.metric, *m.welch_ci),
            num(m.mannwhitney_p, 3),
            m.verdict,
        ]
        for m in r.results
    ]
    part.tables.append(TableView("Rebuilds against the first build", columns, rows))
    part.items += [m.text for m in r.results]
    return part


def _exact_cell(difference: float) -> str:
    """The 'significant' cell of a difference without any spread: no test, so not ✓ nor blank."""
    return "exact: differs" if difference != 0 else "exact: same"


def _placement(p: cp.Placements) -> Section:
    part = Section(
        "Placement categories",
        "placement",
        intro="Flows measured alone, grouped by where their ends are (GENI Table 1): same host, same site "
        "(different hosts), cross site. Differences of means with Welch's interval.",
    )
    conf = f"{100 * p.confidence:g} %"
    for entry in p.entries:
        c = entry.comparison
        if c is None:
            part.items.append(str(entry.error))
            continue
        # means, intervals and differences with the metric's digits, as the findings quote them (an
        # RTT of 0.107 ms (0 to 0.238) there was 0.1068 (0 to 0.2383) here); a difference signed as there
        response = entry.response
        shown = fmt.metric_label(response, entry.measurement)
        unit = fmt.display_unit(response)
        apart = fmt.metric_name(response, entry.measurement)  # 'rtt: mean', not 'rtt: rtt mean'
        apart += fmt.unit_suffix(unit.delta_label or unit.label)  # pp, not %
        part.tables.append(
            TableView(
                f"{entry.measurement}: {shown} per placement ({conf} interval of the mean)",
                ["placement", "n", "mean", "SD", "interval"],
                [
                    [
                        x.category,
                        str(x.n),
                        mean,
                        fmt.metric(response, x.sd),  # the mean's digits, as the SD beside every mean here
                        fmt.metric_ci(response, x.ci_low, x.ci_high),
                    ]
                    for x in c.categories
                    for mean in [fmt.mean_interval(response, x.mean, x.ci_low, x.ci_high)[0]]
                ],
            )
        )
        if c.pairs:
            part.tables.append(
                TableView(
                    f"{entry.measurement}: differences of {apart} (second − first, Welch {conf})",
                    ["first", "second", "difference", "interval", "p", "significant"],
                    [
                        [
                            d.first,
                            d.second,
                            fmt.metric(response, d.difference, delta=True),
                            fmt.metric_ci(response, d.ci_low, d.ci_high),
                            num(d.p_value, 3),
                            _exact_cell(d.difference) if d.exact else yes(d.significant),
                        ]
                        for d in c.pairs
                    ],
                )
            )
        exact = [f"{d.second} vs {d.first}" for d in c.pairs if d.exact]
        if exact:
            part.items.append(
                f"{entry.measurement}: {shown}: {', '.join(exact)}: every value of both categories is the "
                "same (no spread), so no test applies and there is no p; the difference is exact, the same "
                "in every repetition."
            )
        part.items += list(c.notes)
    return part


def _periodic(p: cp.Periodic) -> Section:
    part = Section(
        "Time of day",
        "periodic",
        intro=f"The campaign spans {p.span_ns / cp.HOUR_NS:.1f} hours: is there a daily (or weekly) pattern? "
        "Non-overlapping intervals between hours mean busy and quiet times differ.",
    )
    for view in p.views:
        scale, unit = unit_of(view.response)
        key = "day" if view.period == "weekday" else "hour"
        name = fmt.metric_name(view.response, view.measurement)  # 'rtt: mean', not 'rtt: rtt mean'
        part.tables.append(
            TableView(
                f"{view.measurement}: {name} by {view.period} (UTC)",
                [key, "n", f"mean ({unit})" if unit else "mean", "SD", "interval"],
                [
                    [
                        str(r[key]),
                        str(r["n"]),
                        scaled(r["mean"], scale),
                        scaled(r["sd"], scale),
                        ci(r["ci_low"] / scale, r["ci_high"] / scale),
                    ]
                    for r in view.rows.to_dict("records")
                ],
            )
        )
    return part


def _change_points(c: ChangePoints) -> Section:
    part = Section(
        "Change points",
        "change-points",
        intro=f"Series of at least {c.min_points} runs in time order, searched for shifts in distribution "
        "with E-divisive means and a permutation test (Matteson & James 2014, as Apache Otava): a change "
        "point is the first run of a new segment, with p ≤ 0.01.",
    )
    for s in c.series:
        scale, unit = unit_of(s.response)
        for cp_ in s.found:
            when = pd.Timestamp(cp_.time, unit="ns", tz="UTC").strftime("%Y-%m-%d %H:%M UTC")
            part.tables.append(
                TableView(
                    f"{s.key['series']} {s.key['pair']} ({s.key['treatment']}): "
                    f"{fmt.metric_name(s.response)}",
                    ["run", "at", f"before ({unit})" if unit else "before", "after", "change", "p"],
                    [[str(cp_.index), when, scaled(cp_.mean_before, scale), scaled(cp_.mean_after, scale),
                      f"{fmt.signed(100 * cp_.relative_change, '.1f')} %", num(cp_.p_value, 2)]],
                )
            )  # fmt: skip
    if not part.tables:
        part.items.append(f"No change point in {len(c.series)} series.")
    return part


def _plan(p: RepetitionPlan) -> Section:
    part = Section(
        f"Repetitions for ±{100 * p.precision:g} %",
        "plan",
        intro=f"How many repetitions each treatment needs for a ±{100 * p.precision:g} % interval of its "
        f"mean at {100 * p.confidence:g} % (Jain §13.9), from this campaign as a pilot: Jain's "
        "n = (100·z·s/(r·x̄))² and the smallest n whose t interval is that narrow (plan with the second).",
        items=list(p.notes),
    )
    for s in p.series:
        part.items += [f"{s.series} · {r.treatment}: {r.note}" for r in s.rows if r.note]
        scale, unit = unit_of(s.response)
        part.tables.append(
            TableView(
                f"{s.series} · {fmt.metric_label(s.response)}",
                ["treatment", "n", f"mean ({unit})" if unit else "mean", "SD", "needed (z)", "needed (t)"],
                [
                    [r.treatment, str(r.n), scaled(r.mean, scale), scaled(r.sd, scale),
                     fmt.whole(r.needed_jain), fmt.whole(r.needed)]
                    for r in s.rows
                ],
            )
        )  # fmt: skip
    return part
