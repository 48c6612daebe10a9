"""Rich tables of the analysis results for the terminal (`vnetbench stats`), in the layout of Jain's
tables, and the tables of plain strings of `vnetbench analyze` (report/analysis_tables.py). The tables
of the analyses after the ANOVA, and which tables each design prints, are in report/stats_tables.py."""

from __future__ import annotations

from collections.abc import Sequence

from rich.table import Table

from vnetbench.analysis.contrasts import ContrastCI
from vnetbench.analysis.full_factorial import FactorialAnova
from vnetbench.analysis.one_factor import OneFactorAnova
from vnetbench.analysis.two_k_r import TwoKRResult
from vnetbench.report.analysis_tables import COMPARES, COMPARES_NOTE, factorial_anova_rows
from vnetbench.report.format import ci, f_cell, minus_all, num, p_cell, pct, plain, signed, yes
from vnetbench.report.rich_view import rich_table  # noqa: F401  (report/stats_tables.py imports it from here)


def anova_columns(t: Table, conf: str) -> None:
    """Jain's columns, short enough for an 80-column terminal."""
    t.add_column("component", no_wrap=True)
    for col in ("SS", "% of var.", "DF", "MS", "F", f"F[{conf}]", "p"):
        t.add_column(col, justify="right", no_wrap=True)


def one_factor_tables(a: OneFactorAnova, contrasts: Sequence[ContrastCI] = ()) -> list[Table]:
    """ANOVA, effects and (if given) contrasts of a one-factor model as rich tables."""
    conf = f"{100 * a.confidence:g} %"
    t = Table(title=f"ANOVA: {a.response} by {a.factor} (a = {a.a}, N = {a.n})")
    anova_columns(t, conf)
    for row in a.table():
        t.add_row(
            row["component"], num(row["sum_of_squares"], 8), pct(row["pct_variation"]), str(row["dof"]),
            num(row["mean_square"], 5), f_cell(row["f"], row.get("f_note")), num(row["f_table"], 4),
            p_cell(row["p_value"], row.get("f_note")),
        )  # fmt: skip
    t.caption = f"s_e = {num(a.s_e, 5)}; R² = SSA/SST = {num(a.pct_a / 100, 5)}"
    if a.f_note:
        t.caption += f"\nF {a.f_note}"

    e = Table(title=f"Effects α_j = ȳ.j − ȳ.. with {conf} intervals (ȳ.. = {num(a.grand_mean, 6)})")
    for col in ("level", "r", "mean", "effect", "sd", "interval", "significant"):
        e.add_column(col, justify="right")
    for x in a.effects:
        e.add_row(
            str(x.level),
            str(x.n),
            num(x.mean, 10),
            minus_all(num(x.effect)),
            num(x.sd, 4),
            ci(x.ci_low, x.ci_high),
            yes(x.significant),
        )
    tables = [t, e]
    if contrasts:
        c = Table(title=f"Contrasts with {conf} intervals (s = s_e·√(Σh²/r), t on {contrasts[0].dof} DF)")
        for col in ("contrast", "estimate", "sd", "interval", "significant"):
            c.add_column(col, justify="right")
        for x in contrasts:
            c.add_row(x.label, minus_all(num(x.estimate)), num(x.sd, 4), ci(x.ci_low, x.ci_high),
                      yes(x.significant))  # fmt: skip
        tables.append(c)
    return tables


def two_k_r_tables(r: TwoKRResult) -> list[Table]:
    """Sign table and effects of a 2^k r design as rich tables."""
    conf = f"{100 * r.confidence:g} %"
    coding = "; ".join(f"{f}: −1 = {lo}, +1 = {hi}" for f, (lo, hi) in r.coding.items())
    s = Table(title=f"Sign table, 2^{r.k}·{r.r} design of {r.response}", caption=coding)
    cols = [e.letters for e in r.effects]
    for col in [*cols, "mean ȳ"]:
        s.add_column(col, justify="right")
    for _, row in r.sign_table.iterrows():
        # signs as the caption writes them: −1 (U+2212) and +1
        s.add_row(*[signed(int(row[c]), "d") if c != "I" else "1" for c in cols], num(row["mean"]))
    s.add_section()
    s.add_row(*[num(e.q) for e in r.effects], f"← q = Σ(sign·ȳ)/{2**r.k}")

    if r.r == 1:  # Jain ch. 17: no replication, no error estimate; the allocation of variation is all
        e = Table(
            title="Effects and allocation of variation (r = 1: no error estimate, no intervals)",
            caption=f"SST = {plain(r.sst)}; replicate (r ≥ 2) for intervals and tests; {COMPARES_NOTE}",
        )
        for col in ("effect", "factors", COMPARES, "q", "SS", "% of variation"):
            e.add_column(col, justify="right")
        for x in r.effects:
            e.add_row(x.letters, x.name, r.compares(x), num(x.q), plain(x.ss), pct(x.pct_variation))
        return [s, e]
    e = Table(
        title=f"Effects and allocation of variation ({conf} intervals, t on {r.df_e} DF)",
        caption=f"SST = {plain(r.sst)}, SSE = {plain(r.sse)} ({pct(r.pct_e)}), "
        f"s_e = {num(r.s_e, 5)}, s_q = {num(r.s_q, 5)}; {COMPARES_NOTE}",
    )
    for col in ("effect", "factors", COMPARES, "q", "interval", "significant", "SS", "% of variation"):
        e.add_column(col, justify="right")
    for x in r.effects:
        e.add_row(
            x.letters,
            x.name,
            r.compares(x),
            minus_all(num(x.q)),
            ci(x.ci_low, x.ci_high),
            yes(x.significant),
            plain(x.ss),
            pct(x.pct_variation),
        )
    e.add_row("e", "errors", "", "", "", "", plain(r.sse), pct(r.pct_e))
    return [s, e]


def factorial_tables(f: FactorialAnova, contrasts: Sequence[ContrastCI] = ()) -> list[Table]:
    """ANOVA (and contrasts, if given) of a full-factorial design as rich tables."""
    conf = f"{100 * f.confidence:g} %"
    kind = "balanced" if f.balanced else "unbalanced: type II SS"
    t = Table(title=f"Full-factorial ANOVA of {f.response} ({kind})")
    anova_columns(t, conf)
    for row in factorial_anova_rows(f):
        t.add_row(*row)
    t.caption = f"s_e = {num(f.s_e, 5)}"
    notes = {x.f_note for x in f.terms if x.f_note}
    if notes:
        t.caption += "".join(f"\nF {n}" for n in notes)
    if not contrasts:
        return [t]
    c = Table(title=f"Successive levels of each factor, marginal means ({conf}, t on {f.df_e} DF)")
    for col in ("contrast", "estimate", "sd", "interval", "significant"):
        c.add_column(col, justify="right")
    for x in contrasts:
        c.add_row(x.label, minus_all(num(x.estimate)), num(x.sd, 4), ci(x.ci_low, x.ci_high),
                  yes(x.significant))  # fmt: skip
    return [t, c]
