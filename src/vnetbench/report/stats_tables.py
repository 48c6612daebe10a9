"""The rich tables `vnetbench stats` prints for each design (`table_analysis_tables`), with those of
the analyses that come after the ANOVA (issue #14): two-factor effects, fractional designs, multiple
comparisons, assumption checks, planning and level means. The ANOVA, 2^k r and factorial tables are
report/terminal.py's."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from rich.table import Table

from vnetbench.analysis.assumptions import AssumptionChecks
from vnetbench.analysis.fractional import FractionalResult, roman
from vnetbench.analysis.multiple import AdjustedContrast, PairDifference
from vnetbench.analysis.planning import PlanRow
from vnetbench.analysis.table_analysis import TableAnalysis
from vnetbench.analysis.two_factor import TwoFactorResult
from vnetbench.report.format import MISSING, ci, f_cell, minus_all, num, p_cell, pct, plain, whole, yes
from vnetbench.report.terminal import (
    anova_columns,
    factorial_tables,
    one_factor_tables,
    rich_table,
    two_k_r_tables,
)
from vnetbench.report.view import TableView


def table_analysis_tables(t: TableAnalysis) -> list[Table]:
    """The tables `vnetbench stats` prints for its design, the transform and the plan."""
    tables = _design_tables(t)
    if t.transform.kind != "none":
        tables[0].title = f"{tables[0].title} — response transformed: {t.transform.label}"
    if t.precision is not None:
        tables.append(plan_table(t.plan, t.precision, f"{100 * t.json['confidence']:g} %"))
    return tables


def _design_tables(t: TableAnalysis) -> list[Table]:
    if t.design == "one-factor":
        conf = f"{100 * t.result.confidence:g} %"
        return [
            *one_factor_tables(t.result, t.contrasts),
            level_means_table(t.level_means, conf),
            adjusted_table(t.adjusted, conf),
            tukey_table(t.tukey, conf),
            *([assumption_table(t.assumptions)] if t.assumptions else []),
        ]
    if t.design == "two-factor":
        return two_factor_tables(t.result)
    if t.design == "2k-r":
        return two_k_r_tables(t.result)
    if t.design == "2k-p":
        return fractional_tables(t.result)
    return factorial_tables(t.result, t.contrasts)


def table(title: str, columns: Sequence[str], rows: Sequence[Sequence[str]], caption: str = "") -> Table:
    """A rich table of display strings (first column left, the others right-aligned)."""
    return rich_table(TableView(title, list(columns), [list(r) for r in rows], caption))


def two_factor_tables(r: TwoFactorResult) -> list[Table]:
    conf = f"{100 * r.confidence:g} %"
    kind = "with replication (Jain ch. 22)" if r.replicated else "without replication (Jain ch. 21)"
    anova = Table(title=f"Two-factor ANOVA of {r.response} {kind}")
    anova_columns(anova, conf)
    for x in r.terms:
        anova.add_row(
            x.name, plain(x.ss, 8), pct(x.pct_variation), str(x.df), plain(x.ms, 5), f_cell(x.f, x.f_note),
            num(x.f_table, 4), p_cell(x.p_value, x.f_note),
        )  # fmt: skip
    anova.add_row("errors", plain(r.sse, 8), pct(r.pct_e), str(r.df_e), plain(r.sse / r.df_e, 5), "", "", "")
    anova.caption = f"s_e = {num(r.s_e, 5)}"
    a, b = r.factors
    effects = table(
        f"Effects with {conf} intervals (t on {r.df_e} DF; columns {a}, rows {b})",
        ["effect", "value", "sd", "interval", "significant"],
        [
            [
                e.label,
                minus_all(num(e.value)),
                num(e.sd, 4),
                ci(e.ci_low, e.ci_high),
                "" if e.kind == "mean" else yes(e.significant),
            ]
            for e in r.estimates
            if e.kind in ("mean", "alpha", "beta", "gamma")
        ],
    )
    means = table(
        f"Level means and predicted responses ({conf}; prediction: one more observation)",
        ["estimate", "value", "interval of the mean", "prediction interval"],
        [
            [
                e.label,
                minus_all(num(e.value)),
                ci(e.ci_low, e.ci_high),
                ci(*e.prediction) if e.prediction else "",
            ]
            for e in r.estimates
            if e.kind in ("level mean", "predicted")
        ],
    )
    return [anova, effects, means]


def fractional_tables(f: FractionalResult) -> list[Table]:
    # a negative word with the minus sign, as its alias chains write 'ABC − D' (the JSON keeps '-ABCD')
    words = [f"{'−' if s < 0 else ''}{w}" for w, s in zip(f.defining_relation, f.relation_signs, strict=True)]
    letters = ", ".join(f"{c} = {name}" for c, name in f.letters.items())
    header = table(
        f"2^({len(f.factors)}−{f.p}) fractional factorial design, resolution {roman(f.resolution)}",
        ["", ""],
        [
            ["factors", letters],
            ["generators", ", ".join(map(str, f.generators))],
            ["defining relation", "I = " + " = ".join(words)],
            *[[col, chain] for col, chain in f.aliases.items()],
        ],
        "each column's q estimates the sum of its alias chain",
    )
    return [header, *two_k_r_tables(f.effects)]


def tukey_table(pairs: Sequence[PairDifference], conf: str) -> Table:
    return table(
        f"Tukey HSD: every pair of levels ({conf} simultaneous intervals)",
        ["pair", "difference", "interval", "p (adjusted)", "significant"],
        [
            [
                f"{p.high} − {p.low}",
                minus_all(num(p.estimate)),
                ci(p.ci_low, p.ci_high),
                num(p.p_adjusted, 2),
                yes(p.significant),
            ]
            for p in pairs
        ],
    )


def adjusted_table(adjusted: Sequence[AdjustedContrast], conf: str) -> Table:
    return table(
        f"Successive differences adjusted for {len(adjusted)} comparisons",
        ["contrast", "estimate", "p", "p (Holm)", "p (Bonferroni)", f"Bonferroni {conf} interval", "Holm"],
        [
            [
                a.contrast.label,
                minus_all(num(a.contrast.estimate)),
                num(a.p_value, 2),
                num(a.p_holm, 2),
                num(a.p_bonferroni, 2),
                ci(*a.bonferroni_ci),
                yes(a.significant_holm),
            ]
            for a in adjusted
        ],
    )


def assumption_table(c: AssumptionChecks) -> Table:
    def row(name: str, r: Any) -> list[str]:
        return [name, num(r.statistic, 5), num(r.p_value, 2), r.note or r.method or ""]

    return table(
        "Does the model fit? Tests that do not need its assumptions",
        ["test", "statistic", "p", "note"],
        [
            row("Levene (equal variances)", c.levene),
            row("Brown–Forsythe (equal variances, median)", c.brown_forsythe),
            row("Welch's ANOVA (equal means, unequal variances)", c.welch_anova),
            row("Kruskal–Wallis (equal distributions, ranks)", c.kruskal_wallis),
            ["Shapiro–Wilk of the residuals", "", num(c.shapiro_p, 2), ""],
            [
                "slope of log SD on log mean",
                num(c.sd_mean_slope, 3),
                "",
                c.sd_mean_slope_note or "1: SD ∝ mean (log)",
            ],
        ],
        f"read: {c.read} — {c.advice}",
    )


def level_means_table(rows: Sequence[dict[str, Any]], conf: str) -> Table:
    """Means with the half-widths of their intervals: readable at any offset (9.4e9 ± 1.6e3). The
    half-width is the upper end's distance from the mean: an interval cut at 0 (a response that
    cannot be negative, `level_mean_intervals`) keeps its upper end, and the lower one is marked
    '*' (it printed mean − 0, '± 0.0076' for a level whose interval was (0 to 2.19))."""

    def half(mean: float, interval: Sequence[float | None]) -> str:
        low, high = (math.nan if v is None else v for v in interval)
        text = num(high - mean, 4)
        return text + "*" if math.isfinite(low) and low > mean - (high - mean) + 1e-12 * abs(high) else text

    rows_ = [
        [str(r["level"]), str(r["n"]), num(r["mean"], 10), half(r["mean"], r["ci"]),
         half(r["mean"], r["prediction_interval"])]
        for r in rows
    ]  # fmt: skip
    cut = any(x.endswith("*") for row in rows_ for x in row[3:])
    return table(
        f"Level means μ + α_j ({conf}; prediction: one more observation)",
        ["level", "r", "mean", "± (mean)", "± (prediction)"],
        rows_,
        "* cut at 0: the response cannot be negative, so the interval is (0 to mean + ±)" if cut else "",
    )


def plan_table(rows: Sequence[PlanRow], precision: float, conf: str) -> Table:
    return table(
        f"Repetitions for a ±{100 * precision:g} % interval of each mean at {conf} (Jain §13.9)",
        ["treatment", "n (pilot)", "mean", "SD", "pilot ± %", "needed (z)", "needed (t)"],
        [
            [
                r.treatment,
                str(r.n),
                num(r.mean),
                num(r.sd, 4),
                f"{100 * r.half_width_ratio:.3g} %" if math.isfinite(r.half_width_ratio) else MISSING,
                whole(r.needed_jain),
                whole(r.needed),
            ]
            for r in rows
        ],
        "needed (z): Jain's n = (100·z·s/(r·x̄))²; needed (t): the smallest n whose t interval is that narrow"
        + "".join(f"\n{r.treatment}: {r.note}" for r in rows if r.note),
    )
