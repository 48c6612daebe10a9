"""Report section 'Findings': the answer first. The headline numbers with their intervals (at the spec's
analysis.confidence, each line saying what it is over), what the
design found significant and what it did not, the rebuilds' verdicts, the placement differences,
whether simultaneous flows competed, the knees of packet-rate sweeps, and where the packets were lost
(the bottleneck). Every number is one the sections below show in detail; this only picks them.
"""

from __future__ import annotations

import math
from collections import Counter
from typing import Any

import numpy as np
import pandas as pd

from vnetbench.analysis import descriptive as d
from vnetbench.analysis.cpu import SATURATED_BUSY
from vnetbench.analysis.loss import Localization
from vnetbench.analysis.one_factor import level_mean_intervals
from vnetbench.analysis.reproducibility import percent
from vnetbench.report import fidelity
from vnetbench.report import format as fmt
from vnetbench.report.sections import ReportContext
from vnetbench.report.sections.probe import ceiling, knee, repetition_knees, sweep_points
from vnetbench.report.view import Section

ORDER = 1
MAX_CONNECTIONS = 4  # per kind; more connections are summarised as a range


def build(ctx: ReportContext) -> list[Section]:
    if ctx.frame.empty or not (ctx.frame["status"] == "ok").any():
        return []
    prep = ctx.prepared
    items: list[str] = []
    analysis = ctx.analysis
    if analysis is not None and analysis.models:
        items += design_findings(analysis, ctx.frame, ctx.losses)
    elif not prep.factorial:
        items += headline_findings(prep.frame, prep.confidence)
    if analysis is not None:
        items += rebuild_findings(analysis) + placement_findings(analysis)
    together = [
        (t, comp) for t, rows in prep.split(prep.frame) for comp in d.competition(rows, prep.confidence)
    ]
    items += competition_findings(together)
    items += sweep_findings(ctx.frame) + probe_findings(ctx) + loss_findings(ctx.losses, ctx.frame)
    items += cpu_findings(ctx.frame, ctx.cpu)
    if not items:
        return []
    return [
        Section(
            "Findings",
            "findings",
            intro=f"The answer first: the headline numbers with their {_level(prep.confidence)} intervals "
            "(each line says what its interval is over), what mattered and what did not, and where the "
            "bottleneck was. The sections below hold every detail.",
            items=items,
        )
    ]


def _level(confidence: float) -> str:
    """A confidence level as the report writes it: '95 %', '99 %', '99.9 %'."""
    return f"{100 * confidence:g} %"


def _span(ns: list[int]) -> str:
    """'3', or '2 to 4' where the counts differ."""
    return str(min(ns)) if min(ns) == max(ns) else f"{min(ns)} to {max(ns)}"


def _counted_span(ns: list[int], noun: str) -> str:
    """'1 repetition', '3 repetitions', '2 to 4 measurements'."""
    return f"{_span(ns)} {noun}" + ("" if max(ns) == 1 else "s")


def headline_findings(frame: pd.DataFrame, confidence: float = d.CONFIDENCE) -> list[str]:
    """Each connection's mean throughput (TCP, UDP) and RTT, measured alone, with its t interval at
    `confidence` (the spec's analysis.confidence) over its repetitions, as the line says."""
    out = []
    for kind, metric in (("tcp", "throughput_bps"), ("udp", "throughput_bps"), ("rtt", "rtt_mean_ns")):
        table = d.connection_table(frame, kind, metric, confidence=confidence)
        if table.empty:
            continue
        # two measurements of one kind on one pair (e.g. two windows) are told apart by name
        named = table["measurement"].nunique() > 1
        lines = [_connection_line(r, metric, named) for r in table.to_dict("records")]
        collapsed = len(lines) > MAX_CONNECTIONS
        if collapsed:
            low, high = table["mean"].min(), table["mean"].max()
            lines = [
                f"{len(lines)} connections from {fmt.metric(metric, low)} to {fmt.metric(metric, high, True)}"
            ]
        name = f"{kind.upper()} {fmt.metric_name(metric).removeprefix('rtt ')}"
        basis = _connection_basis(table, confidence, collapsed)
        out.append(f"<b>{name}</b> ({basis}): " + "; ".join(lines) + ".")
    return out


def _connection_basis(table: pd.DataFrame, confidence: float, collapsed: bool) -> str:
    """What a headline line's intervals are: 'alone; 95 % t interval over 2 repetitions' — the mean
    of each connection's values, one per repetition (connection_table), not of the RTT table's
    replies. Where a connection has several values in a repetition (several patterns measure it) the
    values are measurements: 'over 18 measurements in 6 repetitions'. A range where the connections'
    counts differ. Collapsed into a range of means, or with a single value each, no interval is
    shown: 'alone; means of 2 repetitions', 'alone; 1 repetition, no interval'."""
    rows = table.to_dict("records")
    ns = [int(r["n"]) for r in rows]
    with_interval = [int(r["n"]) for r in rows if pd.notna(r["ci_low"]) and pd.notna(r["ci_high"])]
    reps = [int(r["repetitions"]) for r in rows if pd.notna(r.get("repetitions"))]
    if reps == ns or not reps:  # each value one repetition's (or no repetition column: taken as such)
        what = _counted_span(with_interval or ns, "repetition")
    else:
        what = f"{_counted_span(with_interval or ns, 'measurement')} in {_counted_span(reps, 'repetition')}"
    if collapsed:
        return f"alone; means of {what}"
    if not with_interval:
        return f"alone; {what}, no interval"
    return f"alone; {_level(confidence)} t interval over {what}"


# an interval's top this far above the model maximum is said to be no rate in the headline line; within
# it (the token bucket's burst, rounding: the quickstart's 95.48 to 95.69 on 95.64) it is left to the
# section's note, or every quiet run's line would carry the words
ABOVE_MODEL = 1.01


def _connection_line(r: dict[str, Any], metric: str, named: bool = False) -> str:
    mean, interval = _mean_ci(metric, r["mean"], r["ci_low"], r["ci_high"])
    if interval and r.get("ci_cut"):  # the 0 is where the interval was cut, not a measured bound
        interval = interval[:-1] + ", cut at 0: the mean cannot be negative)"
    model = r.get("model_max")
    top = r["ci_high"]
    if interval and model is not None and pd.notna(model) and pd.notna(top) and top > ABOVE_MODEL * model:
        # not cut there (the model is no hard bound, the section's note says why); a reader of this line
        # alone would take the top for a rate the link carried
        interval = interval[:-1] + ", its top above the model maximum: the spread of few values, not a rate)"
    name = f" ({r['measurement']})" if named else ""
    text = f"{r['src']}→{r['dst']}{name} {mean} {interval}".rstrip()
    if _under_model(r):  # offered less than the path carries: the share of the offer is the answer
        text += (
            f", {fmt.ratio_pct(r['of_offered'])} of the {fmt.metric(metric, r['offered_rate'], True)} offered"
        )
    if r.get("of_model_max") is not None and pd.notna(r.get("of_model_max")):
        text += f", {fmt.ratio_pct(r['of_model_max'])} of the model maximum"
    return text


def _under_model(r: dict[str, Any]) -> bool:
    """Whether the flow was offered a rate (UDP, a capped TCP) below the model maximum of its path, or
    on a path without one: 19.49 Mbit/s is 40.1 % of a 50 Mbit/s link's maximum, but 97.5 % of the
    20 Mbit/s it was offered, and only the second says whether the path kept up."""
    offered, model = r.get("offered_rate"), r.get("model_max")
    if offered is None or pd.isna(offered) or pd.isna(r.get("of_offered")):
        return False
    return model is None or pd.isna(model) or offered < model


def _mean_ci(metric: str, mean: float, lo: float, hi: float) -> tuple[str, str]:
    """('95.11 Mbit/s', '(94.97 to 95.26)') in the metric's unit, with digits enough to keep two
    different ends apart ('238.0 ms (237.9 to 238.0)', not '238 ms (238 to 238)'), a negative end
    with the minus sign as the signed differences beside it ('(−0.51 to 0.58)'); the interval ''
    without one (a single value)."""
    shown = fmt.mean_interval(metric, mean, lo, hi)[0]
    label = fmt.display_unit(metric).label
    if label and shown != fmt.MISSING:
        shown += f" {label}"
    interval = fmt.metric_ci(metric, lo, hi)  # the tables' interval: one formatter
    return shown, "" if interval == fmt.MISSING else interval


def design_findings(
    analysis: Any, frame: pd.DataFrame | None = None, losses: list[Localization] | None = None
) -> list[str]:
    """Per fitted model: which factors matter (share of variation, and a 2^k design's effect with
    its interval) and which do not; terms without a test (no error estimate) are named as such;
    capacity, with a caveat where some of the loss at a level was this machine's (`frame`, `losses`:
    the measurements and their loss localization, as the Machine as bottleneck lines read them)."""
    out = []
    machine = fidelity.machine_loss_ids(frame, losses or [])
    for fitted in analysis.models:
        m = fmt.shown_model(fitted)
        response = m.result.response
        significant, not_significant, untested = _terms(m)
        parts = []
        if significant:
            parts.append("significant: " + ", ".join(significant))
        elif not_significant:
            parts.append("no factor has a significant effect")
        if not_significant:
            parts.append("not significant: " + ", ".join(not_significant))
        if untested:
            parts.append("not tested (no error estimate): " + ", ".join(untested))
        line = f"<b>{m.label}</b>: " + ("; ".join(parts) if parts else "no factor to test")
        line += _caution(m.diagnostics)
        means = _level_means(m, response)
        if means:
            line += f". Mean per level ({_level_basis(m.result)}): {means}"
        if m.capacity is not None and m.capacity.recommended is not None:
            line += f". Recommended maximum: {m.result.factor} = {m.capacity.recommended}"
            caveat = fidelity.capacity_caveat(m.result.factor, frame, losses or [], machine)
            line += f" — caveat: {caveat}" if caveat else ""
        out.append(line + ".")
    return out


def _level_basis(anova: Any) -> str:
    """What a one-factor model's level intervals are: ȳ.j ± t·s_e/√r_j at the analysis' confidence,
    over each level's repetitions (r_j, one observation each) with the SD pooled over all levels:
    '95 % t interval over 3 repetitions per level, pooled SD'."""
    reps = [int(e.n) for e in anova.effects]
    return f"{_level(anova.confidence)} t interval over {_span(reps)} repetitions per level, pooled SD"


def _caution(diag: Any) -> str:
    """When the errors are not small against the response (Jain's rule: residual range under 1/10 of
    the predicted range), the verdicts above rest on assumptions the diagnostics put in doubt: say so
    here, not only in the diagnostics table further down."""
    if diag is None or diag.errors_small or not math.isfinite(diag.residual_ratio):
        return ""
    text = (
        f". Caution: the residuals span {fmt.num(diag.residual_ratio, 3)} × the range of the predicted "
        "responses (errors count as small below 1/10)"
    )
    if diag.shapiro_p is not None and diag.shapiro_p < 0.05:
        text += f" and are not normal (Shapiro–Wilk p = {fmt.num(diag.shapiro_p, 3)})"
    return text + ", so the intervals and tests are doubtful: see the diagnostics"


def _terms(m: Any) -> tuple[list[str], list[str], list[str]]:
    """The model's terms with their share of the variation: significant, not significant, and not
    tested (no error estimate: a 2^k design without replication, an ANOVA term whose F is undefined).
    A 2^k (r or −p) design's significant effects carry q and its interval in the response's unit, and
    a main effect the change from its −1 to its +1 level, 2q (Jain's q is half of it)."""
    r = m.result
    if m.kind == "one-factor":
        term = f"{r.factor} ({fmt.pct(r.pct_a)} of the variation, p = {fmt.num(r.p_value, 2)})"
        return ([term], [], []) if r.f > r.f_table else ([], [term], [])
    two_level = m.kind in ("2k-r", "2k-p")
    effects = getattr(r, "effects", None) if two_level else getattr(r, "terms", None)
    yes: list[str] = []
    no: list[str] = []
    untested: list[str] = []
    for e in effects or []:
        share = getattr(e, "pct_variation", None)
        if share is None:  # the mean (I) of a 2^k r design
            continue
        variation = f"{fmt.pct(share)} of the variation"
        if e.significant is None:
            untested.append(f"{e.name} ({variation})")
        elif two_level and e.significant:
            yes.append(f"{e.name} ({_effect(r, e)}; {variation})")
        elif two_level:
            no.append(f"{e.name} ({variation})")
        else:
            (yes if e.significant else no).append(f"{e.name} ({variation}, p = {fmt.num(e.p_value, 2)})")
    return yes, no, untested


def _effect(r: Any, e: Any) -> str:
    """'q = −1.586 Mbit/s, interval −1.601 to −1.571: flows 2 → 3 changes the mean by −3.172 Mbit/s'
    (the minus sign U+2212, as '+' of a positive q)."""
    text = f"q = {fmt.metric(r.response, e.q, True, delta=True)}"
    interval = fmt.metric_ci(r.response, e.ci_low, e.ci_high)  # '(−1.601 to −1.571)', as the tables
    if interval != fmt.MISSING:
        text += f", interval {interval[1:-1]}"
    if e.name in r.coding:
        lo, hi = r.coding[e.name]
        change = fmt.metric(r.response, 2 * e.q, True, delta=True)
        text += f": {e.name} {lo} → {hi} changes the mean by {change}"
    elif hasattr(r, "compares"):  # an interaction: which way its sign points, in levels
        text += f"; {r.compares(e)}"
    return text


def _level_means(m: Any, response: str) -> str:
    """Each level's mean and interval. A level whose every repetition is exactly 0 says so beside its
    interval, which is the pooled one (s_e of all levels): '0 % (0 to 0.0315)' read as if the level
    itself had varied (onl-udp-receivers b0bfad94, levels 1-5); such neighbours share one entry."""
    if m.kind != "one-factor":
        return ""
    # the levels' means and intervals as the analysis gives them (ȳ.j ± t·s_e/√r_j, cut at 0 for a
    # metric that cannot be negative); JSON's None back to NaN for the formatter
    levels = zip(m.result.effects, level_mean_intervals(m.result), strict=True)
    entries: list[tuple[list[str], str, str]] = []  # (levels, mean, interval), zero runs merged
    for e, row in sorted(levels, key=lambda pair: fmt.sort_key(pair[0].level)):
        low, high = (math.nan if v is None else v for v in row["ci"])
        mean, interval = _mean_ci(response, e.mean, low, high)
        if interval and _all_zero(m.result, e.level):
            interval = f"(every repetition 0; pooled interval {interval[1:-1]})"
            if entries and entries[-1][1:] == (mean, interval):
                entries[-1][0].append(str(e.level))
                continue
        entries.append(([str(e.level)], mean, interval))
    return ", ".join(f"{_and(names)}: {mean} {interval}".rstrip() for names, mean, interval in entries)


def _all_zero(anova: Any, level: Any) -> bool:
    """Whether every observation of the level is exactly 0."""
    observed = np.asarray(anova.observed)[np.asarray(anova.level_of) == level]
    return bool(observed.size) and not np.any(observed)


def _and(names: list[str]) -> str:
    """'5', '4 and 5', '1, 2, 3, 4 and 5'."""
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + f" and {names[-1]}"


def rebuild_findings(analysis: Any) -> list[str]:
    """The rebuilds' verdict per metric, grouped by verdict."""
    if analysis.rebuilds is None:
        return []
    by_verdict: dict[str, list[str]] = {}
    for r in analysis.rebuilds.results:
        words = r.metric.split()
        metric = words[-1]
        name = " ".join([*words[:-1], fmt.metric_name(metric, words[0] if len(words) > 1 else "")])
        diff = fmt.metric(metric, r.difference, True, delta=True)
        # the CV as the section's table and sentences write it (13 % there was 12.99 % here)
        cv = f", CV {percent(r.cv_rebuilds_ratio)}" if math.isfinite(r.cv_rebuilds_ratio) else ""
        by_verdict.setdefault(r.verdict, []).append(f"{name} ({diff}{cv})")
    builds = analysis.rebuilds.builds
    parts = [f"{verdict} ({len(names)}): " + "; ".join(names) for verdict, names in by_verdict.items()]
    return [f"<b>Rebuilt {builds} times</b> — " + ". ".join(p[0].upper() + p[1:] for p in parts) + "."]


def placement_findings(analysis: Any) -> list[str]:
    """Placement categories: their means, and which differences are significant."""
    if analysis.placement is None:
        return []
    out = []
    for entry in analysis.placement.entries:
        c = entry.comparison
        if c is None:
            continue
        metric = entry.response
        means = ", ".join(
            f"{x.category} {' '.join(_mean_ci(metric, x.mean, x.ci_low, x.ci_high))}".rstrip()
            for x in c.categories
        )
        sig = [_placement_difference(metric, p) for p in c.pairs if p.significant]
        nsig = [f"{p.second} vs {p.first}" for p in c.pairs if p.significant is False]
        # no spread in either category: no test, an exact difference (ContrastCI.exact's rule)
        differ = [_placement_difference(metric, p) for p in c.pairs if p.exact and p.difference != 0]
        same = [f"{p.second} vs {p.first}" for p in c.pairs if p.exact and p.difference == 0]
        name = fmt.metric_name(metric, entry.measurement)  # 'rtt: mean', not 'rtt: rtt mean'
        line = f"<b>{entry.measurement}: {name} by placement</b> ({_placement_basis(c)}): {means}"
        for label, items in (
            ("significant", sig),
            ("not significant", nsig),
            ("different in every repetition (no spread, so no test applies)", differ),
            ("the same in every repetition (no spread, so no test applies)", same),
        ):
            if items:
                line += f"; {label}: " + ", ".join(items)
        out.append(line + ".")
    return out


def _placement_basis(c: Any) -> str:
    """What a placement line's intervals are: each category's flows measured alone, every connection
    in it in every repetition, at the analysis' confidence (compare_placements):
    'alone; 95 % t interval over flows × repetitions, n = 4 per placement'."""
    ns = [int(x.n) for x in c.categories if x.n > 1]
    if not ns:
        return "alone; 1 flow per placement, no interval"
    return f"alone; {_level(c.confidence)} t interval over flows × repetitions, n = {_span(ns)} per placement"


def _placement_difference(metric: str, p: Any) -> str:
    """'cross-site − same-host +1.00 pp', 'cross-site − same-host −86.08 Mbit/s' (U+2212)."""
    return f"{p.second} − {p.first} {fmt.metric(metric, p.difference, True, delta=True)}"


def competition_findings(results: list[tuple[str | None, d.Competition]]) -> list[str]:
    """Each group of simultaneous flows' verdict (section 'Simultaneous flows'); with many groups,
    how many competed. Nothing when no flow was measured alone: such a campaign (onl-udp-receivers,
    onl-tcp-factorial) does not ask whether its flows compete, and the section says why it cannot."""
    if all(comp.verdict == d.NOT_COMPARED for _, comp in results):
        return []
    lines = [
        f"{comp.pattern} · {comp.measurement}"
        + (f" · {t}" if t else "")
        + f": {comp.verdict}"
        + (
            f" — from runs of {comp.duration_s:.0f} s, in which TCP's shares may not have settled"
            if _unsettled(comp)
            else ""
        )
        for t, comp in results
    ]
    if len(lines) > MAX_CONNECTIONS:
        lines = [_competition_count(results)]
    return ["<b>Simultaneous flows</b>: " + "; ".join(lines) + "."]


def _competition_count(results: list[tuple[str | None, d.Competition]]) -> str:
    """How many of the compared sets of flows competed: a set is one pattern · measurement under one
    treatment, over its repetitions (not `analyze`'s groups of simultaneous flows, one per
    repetition); a set none of whose flows was measured alone cannot be counted as competing or not."""
    compared = [comp for _, comp in results if comp.verdict != d.NOT_COMPARED]
    missing = len(results) - len(compared)
    one, many = _set_noun(results)
    compete = sum("the flows compete" in comp.verdict for comp in compared)
    line = f"in {compete} of {len(compared)} {one if len(compared) == 1 else many} the flows compete"
    line += " (each gets less than alone)"
    if missing:
        have = f"{one} has" if missing == 1 else f"{many} have"
        line += f"; {missing} {have} no flow measured alone (not compared)"
    return line


def _set_noun(results: list[tuple[str | None, d.Competition]]) -> tuple[str, str]:
    """What one competition verdict is about, singular and plural: a treatment when the sets are one
    pattern · measurement's treatments, as the section 'Simultaneous flows' names them."""
    series = {(comp.pattern, comp.measurement) for _, comp in results}
    treated = all(t for t, _ in results)
    if treated and len(series) == 1:
        return "treatment", "treatments"
    what = "pattern · measurement · treatment" if treated else "pattern · measurement"
    return f"combination of {what}", f"combinations of {what}"


def _unsettled(comp: d.Competition) -> bool:
    return "unfairly" in comp.verdict and d.may_not_have_settled(comp)


def sweep_findings(frame: pd.DataFrame) -> list[str]:
    """Packet-rate sweeps: per series and size the knee (highest offered rate received whole) of the
    mean curve and of each repetition, and the ceiling, each repetition's most received packets/s
    (mean ± SD), as the sweep summary table gives them."""
    ok = frame[(frame["status"] == "ok") & (frame["kind"] == "pps")] if "kind" in frame else frame.iloc[0:0]
    if ok.empty:
        return []
    alone = ok[ok["group_kind"].isin(d.ALONE)] if "group_kind" in ok else ok
    points = sweep_points(alone)
    out = []
    for size, by_size in points.groupby("size"):
        knees = []
        for series, s in by_size.groupby("series", sort=False):
            knees.append(f"{series}: {_sweep_line(alone, s, str(series), float(size))}")
        out.append(f"<b>Packet rate, {int(size)}-byte payloads</b>: " + "; ".join(knees) + ".")
    return out


def _sweep_line(rows: pd.DataFrame, points: pd.DataFrame, series: str, size: float) -> str:
    """'whole up to 30.00 K pps on the mean of 2 repetitions (per repetition: 30.00 K pps, 1.000 K pps),
    ceiling 52.33 ± 7.8 K pps (the most received in each of 2 repetitions, mean ± SD)'."""
    k = knee(points)
    text = f"whole up to {fmt.metric('pps', k, True)}" if k is not None else "none passed"
    per_rep = repetition_knees(rows, series, size)
    if len(per_rep) > 1:
        shown = ", ".join("none passed" if r is None else fmt.metric("pps", r, True) for r in per_rep)
        text += f" on the mean of {len(per_rep)} repetitions (per repetition: {shown})"
    top = ceiling(rows, series, size)
    if top is None:
        return text + f", at most {fmt.metric('pps', float(points['received_pps'].max()), True)} received"
    mean, sd, n = top
    if n == 1:
        return text + f", at most {fmt.metric('pps', mean, True)} received"
    return (
        text + f", ceiling {fmt.metric('pps', mean)} ± {fmt.metric_sd('pps', sd)} "
        f"(the most received in each of {n} repetitions, mean ± SD)"
    )


def probe_findings(ctx: ReportContext) -> list[str]:
    """vnb-probe's CPU share per node and its UDP RTT per connection (median and p99 of every probe)."""
    ok = ctx.frame[ctx.frame["status"] == "ok"] if "kind" in ctx.frame else ctx.frame.iloc[0:0]
    out = []
    share = ok[ok["kind"] == "cpushare"]
    if not share.empty and "cpu_share_ratio" in share:
        nodes = [
            f"{node} {fmt.metric('cpu_share_ratio', float(g['cpu_share_ratio'].median()), True)}"
            for node, g in share.groupby("src", sort=False)
        ]
        out.append("<b>CPU share</b> (median of the runs): " + "; ".join(nodes) + ".")
    probes = ok[ok["kind"] == "probe-rtt"]
    if not probes.empty:
        rtts = ctx.samples.values([int(i) for i in probes["id"]], "rtt_ns", 0)
        ids = probes.set_index("id")
        lines = []
        for (src, dst), g in rtts.groupby(
            [rtts["measurement_id"].map(ids["src"]), rtts["measurement_id"].map(ids["dst"])]
        ):
            median, p99 = (fmt.metric("rtt_ns", g["value"].quantile(q), True) for q in (0.5, 0.99))
            if len(g) >= P99_MIN:
                lines.append(f"{src}→{dst} median {median}, p99 {p99}")
            else:  # of fewer probes a p99 is the largest RTTs interpolated: say max, and how many
                top = fmt.metric("rtt_ns", g["value"].max(), True)
                lines.append(f"{src}→{dst} median {median}, max {top} ({fmt.counted(len(g), 'probe')})")
        if lines:
            out.append("<b>UDP RTT</b> (vnb-probe, every probe): " + "; ".join(lines) + ".")
    return out


P99_MIN = 100  # 1 / (1 − 0.99): the fewest values of which one can lie above their 99th percentile
UNREAD = "left unread in the receiving socket"  # loss.py's cause 'unread': no counter, arrived


def loss_findings(losses: list[Localization], frame: pd.DataFrame | None = None) -> list[str]:
    """How much was lost in all, and where most of it was: the bottleneck — said to be this
    machine's when every flow lost there is one the campaign's 'Machine as bottleneck' lines call
    so (`frame`: the measurements, for their offered rates)."""
    sent = sum(loc.sent for loc in losses)
    lost = sum(max(0.0, loc.app_lost) for loc in losses)
    if not losses or sent <= 0:
        return []
    if lost == 0:
        return [
            f"<b>Loss</b>: none — {fmt.count(sent)} datagrams sent in {fmt.counted(len(losses), 'flow')}, "
            "all received."
        ]
    where: Counter[str] = Counter()
    ids: dict[str, set[int | None]] = {}
    for loc in losses:
        if loc.hop is not None:
            where[_lost_where(loc)] += loc.hop_lost
            ids.setdefault(_lost_where(loc), set()).add(loc.measurement_id)
    share = fmt.share(lost, sent)
    flows = fmt.counted(len(losses), "flow")
    line = f"<b>Loss</b>: {fmt.count(lost)} of {fmt.count(sent)} datagrams ({share}) over {flows}"
    if where:
        hop, n = where.most_common(1)[0]
        if hop == UNREAD:  # they arrived: the end of the measurement, not a bottleneck of the path
            return [
                line + f"; {fmt.share(n, lost)} of the lost arrived and were left unread in the receiving "
                "socket when the receiver stopped (the measurement's end, not the network)."
            ]
        line += f"; the bottleneck: {hop}, {fmt.share(n, lost)} of the lost"
        machine = fidelity.machine_loss_ids(frame, losses)
        # every hop the machine lines call this machine's, not only the largest (quickstart: a stalled
        # shaper's 887 and a full socket buffer's 746 of 1,676 lost)
        mine = sum(m for h, m in where.items() if h != UNREAD and ids[h] <= machine)
        if ids[hop] <= machine and mine <= n:
            line += " — this machine's loss, not the emulated network's (see Machine as bottleneck)"
        elif mine > 0:
            among = ", the bottleneck's among them," if ids[hop] <= machine else ""
            line += (
                f"; {fmt.count(mine)} of the lost ({fmt.share(mine, lost)}){among} were this machine's, "
                "not the emulated network's (see Machine as bottleneck)"
            )
    return [line + "."]


def cpu_findings(frame: pd.DataFrame, cpu: pd.DataFrame) -> list[str]:
    """The measurements above that ran on a saturated host (fidelity.saturated_cpu): their values can
    be this machine's, and a reader of the headlines alone would not know."""
    busy = dict(zip(cpu["measurement_id"], cpu["host_busy_ratio"], strict=True)) if not cpu.empty else {}
    found = fidelity.saturated_cpu(frame, busy)
    if found is None:
        return []
    hot, read, per_rep = found
    return [
        f"<b>Machine</b>: the host's CPU was {SATURATED_BUSY} busy during {hot} of "
        f"{fmt.counted(read, 'measurement')} ({per_rep}); their values can be this machine's, not the "
        "network's (see Machine as bottleneck)."
    ]


def _lost_where(loc: Localization) -> str:
    """Where a flow's loss counts in the bottleneck's tally: its hop and cause, or, when the hop's
    counter belongs to a point the step's flows share (their common queue, not counted per flow), that
    point — each flow's loss is first counted at its own next hop, but was dropped at the shared one."""
    shared = loc.counter_scope is not None and any(
        e.scope == loc.counter_scope and e.metric == loc.counter_metric
        for stage in loc.stages
        if stage.shared
        for e in stage.explainers
    )
    if loc.cause == "unread":
        return UNREAD
    return str(loc.cause) if shared and loc.cause else f"{loc.hop} ({loc.cause})"
