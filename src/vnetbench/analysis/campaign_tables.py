"""Tables of plain strings for the campaign analysis: one layout for the terminal (rich) and the
report (HTML), in the form of Jain's tables."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from vnetbench.analysis.render import ci, factorial_anova_rows, num, pct, yes

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


def scaled(x: float | None, scale: float) -> str:
    return num(None if x is None else x / scale)


def one_factor_tabulars(label: str, a: Any, steps: Sequence[Any], scale: float, shown: str) -> list[Tabular]:
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
                scaled(e.mean, scale),
                scaled(e.effect, scale),
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


def steps_tabular(title: str, steps: Sequence[Any], scale: float, shown: str, formula: str) -> Tabular:
    conf = f"{100 * steps[0].confidence:g} %"
    return Tabular(
        f"{title} ({conf}, {formula}, t on {steps[0].dof} DF)",
        ["contrast", f"estimate {shown}", "interval", "significant"],
        [
            [c.label, scaled(c.estimate, scale), ci(c.ci_low / scale, c.ci_high / scale), yes(c.significant)]
            for c in steps
        ],
    )


def two_k_r_tabulars(label: str, r: Any, scale: float, shown: str) -> list[Tabular]:
    conf = f"{100 * r.confidence:g} %"
    coding = "; ".join(f"{f}: −1 = {lo}, +1 = {hi}" for f, (lo, hi) in r.coding.items())
    rows = [
        [
            e.letters,
            e.name,
            scaled(e.q, scale),
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


def factorial_tabulars(label: str, f: Any, scale: float, shown: str) -> list[Tabular]:
    conf = f"{100 * f.confidence:g} %"
    rows = factorial_anova_rows(f)
    cells = Tabular(
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
        Tabular(
            f"{label}: full-factorial ANOVA ({kind})",
            ["component", "SS", "% of var.", "DF", "MS", "F", f"F[{conf}]", "p"],
            rows,
            f"response {f.response} in its stored unit; s_e = {num(f.s_e, 5)}",
        ),
        cells,
    ]


def diag_tabular(label: str, d: Any) -> Tabular:
    verdict = "errors small (< 1/10 of the response range)" if d.errors_small else "check the plots"
    return Tabular(
        f"{label}: diagnostics",
        ["QQ correlation r", "Shapiro–Wilk p", "residual range / predicted range", "verdict"],
        [[num(d.qq_r, 4), num(d.shapiro_p, 3), num(d.residual_ratio, 3), verdict]],
    )
