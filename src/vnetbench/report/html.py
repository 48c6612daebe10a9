"""The campaign report: one self-contained HTML page (figures embedded) plus PNG/SVG files beside it."""

from __future__ import annotations

import contextlib
import datetime as dt
import json
import math
import platform
import re
from importlib.metadata import version
from pathlib import Path
from typing import Any

import pandas as pd
import yaml
from jinja2 import Environment, PackageLoader, select_autoescape
from markupsafe import Markup, escape

from vnetbench import __version__
from vnetbench.analysis import descriptive as d
from vnetbench.analysis.coverage import Coverage, coverage
from vnetbench.analysis.cpu import SATURATED_BUSY, saturated, with_host_busy
from vnetbench.providers.base import EMULATOR_EVENT
from vnetbench.report import fidelity, figures
from vnetbench.report import format as fmt
from vnetbench.report.prepared import TREATMENT, Prepared
from vnetbench.report.rich_view import NBSP, join_units
from vnetbench.report.sections import ReportContext
from vnetbench.report.sections import builders as section_builders
from vnetbench.report.sections.delay_nodes import reports as node_reports
from vnetbench.report.shared_link import SharedLink, SharedLinks
from vnetbench.report.view import Figure, Section, TableView
from vnetbench.spec.units import format_rate
from vnetbench.store.db import Store


def _stats_table(
    title: str,
    table: pd.DataFrame,
    metric: str,
    extra: list[tuple[str, str, Any]] | None = None,
    note: str = "",
) -> TableView:
    """A per-connection table of a stored `metric` (its values already in the display unit): n, mean,
    SD, min, median, p95, max (+ extra columns). Each is a measured value with the metric's digits, its
    zeros kept, as the Findings quote it (a mean of 95.64 Mbit/s, not 95.6; a min of 9.0 beside a mean
    of 9.10 is 9.000), or as many more as keep the row's min and max apart (`_row`); a p95 of fewer
    than `P95_MIN_N` values is left out and the note says why."""
    extra = extra or []
    unit = fmt.display_unit(metric).label
    # several measurements of one kind (tcp and a tuned tcp, udp at 1× and 2×): name each row's
    several = "measurement" in table and table["measurement"].nunique() > 1
    treatment = "treatment" in table  # a designed campaign: one row per connection and treatment
    columns = ["connection", *(["treatment"] if treatment else [])]
    columns += [*(["measurement"] if several else []), "placement", "n", f"mean ({unit})"]
    columns += ["SD", "min", "median", "p95", "max"] + [name for name, _, _ in extra]
    rows = []
    for r in table.to_dict("records"):
        row = [
            f"{r['src']} → {r['dst']}",
            *([r["treatment"]] if treatment else []),
            *([r["measurement"]] if several else []),
            r["placement"],
            str(r["n"]),
        ]
        row += _row(r, fmt.display_unit(metric).digits)
        row += [shown(r.get(key)) for _, key, shown in extra]
        rows.append(row)
    if any(int(r["n"]) < P95_MIN_N for r in table.to_dict("records")):
        # a p95 of 4 throughputs (the quickstart's TCP table) is the largest two interpolated, not the
        # value 5 % of the repetitions exceed
        why = (
            f"p95 is left out ({fmt.MISSING}) where n < {P95_MIN_N}: with fewer values no measured value "
            "lies above the 95th percentile, which is then the largest values interpolated."
        )
        note = f"{note} {why}".strip()
    return TableView(title, columns, rows, note)


def _row(r: dict[str, Any], digits: int) -> list[str]:
    """A row's statistics with the metric's `digits`, or as many more (up to 3) as keep its min and max
    apart: RTTs from 237.9 to 238.4 ms read '238' in every column to an RTT's 3 digits. The SD keeps
    the metric's digits (a spread, not a place among the values)."""
    low, high = r["min"], r["max"]
    finite = all(isinstance(v, int | float) and math.isfinite(v) for v in (low, high))
    row_digits = fmt.digits_apart(digits, low, high) if finite else digits
    few = int(r["n"]) < P95_MIN_N
    return [
        fmt.MISSING if k == "p95" and few else fmt.measured(r[k], digits if k == "sd" else row_digits)
        for k in STAT_COLUMNS
    ]


STAT_COLUMNS = ("mean", "sd", "min", "median", "p95", "max")
P95_MIN_N = 20  # 1 / (1 − 0.95): the fewest values of which one can lie above a 95th percentile


def write_report(store: Store, campaign_id: str, out_dir: Path) -> Path:
    """Write the campaign's report (index.html, report.json, figures/) into out_dir; returns index.html."""
    out_dir = Path(out_dir)
    fig_dir = out_dir / "figures"
    fig_dir.mkdir(parents=True, exist_ok=True)
    row = store.campaign(campaign_id)
    assert row is not None
    frame = store.measurements_frame(campaign_id)
    context = ReportContext(store, row, frame, fig_dir)
    prep = context.prepared  # treatments, omit, outliers
    ordered: list[tuple[int, Section | None]] = [
        (10, _overview(context)),
        (20, _rtt_section(prep, fig_dir)),
        (30, _throughput_section(prep, "tcp", fig_dir)),
        (40, _throughput_section(prep, "udp", fig_dir)),
        (50, _competition_section(prep, row, fig_dir, context.cpu)),
    ]
    for order, build in section_builders():
        ordered += [(section.order or order, section) for section in build(context)]
    ordered.append((1000, _failures_section(store, campaign_id, frame)))
    ordered.sort(key=lambda item: item[0])
    sections = [s for _, s in ordered if s is not None and (s.tables or s.figures or s.items)]
    cov = coverage(store, row, frame)  # not finished: what it covers, as the commands' note says
    index = out_dir / "index.html"
    generated = dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC")
    index.write_text(page(row, sections, generated, unfinished_banner(cov, store.location)))
    summary = {
        "campaign": campaign_id,
        **({"coverage": coverage_json(cov)} if cov is not None else {}),
        "sections": [
            {
                "title": s.title,
                "tables": [t.__dict__ for t in s.tables],
                "items": s.items,
                "figures": [f.png.name for f in s.figures],
            }
            for s in sections
        ],
    }
    (out_dir / "report.json").write_text(json.dumps(summary, indent=1, default=str))
    return index


# a word of a cell's text that join_units tied (a number and its unit, an interval): between plain spaces
_TIED = re.compile(rf"\S*(?:{NBSP}\S*)+")  # Python's \s matches NBSP: \S never holds one


def unbroken_html(text: Any) -> Markup:
    """The text, escaped, with each number and its unit and each interval (rich_view.join_units: '94.1
    Mbit/s', '(1.0 to 3.0) %') in a <span class="nowrap">, so that a cell whose text may wrap (a table's
    last column, a note) wraps between them, never inside: '(1.766 to' / '6.234)' reads as two numbers.
    The spans hold plain spaces: what a reader copies or greps is the text as it was."""
    tied = str(escape(join_units(str(text))))  # escape adds no space; an entity is inside one word
    return Markup(_TIED.sub(lambda m: f'<span class="nowrap">{m.group(0).replace(NBSP, " ")}</span>', tied))


_BOLD = re.compile(r"&lt;(/?)b&gt;")


def item_html(item: str) -> Markup:
    """A section's item (a Findings line, a verdict) as HTML: its text escaped, the <b>…</b> its builder
    put around the line's label kept. Items hold a campaign's own words — a factor's level, a stored
    failure's message — which are text, never markup: a level `<script>…` is shown, not run. A <b>
    in those words stays bold, the only tag let through, with no attribute to carry anything."""
    return Markup(_BOLD.sub(r"<\1b>", str(escape(item))))


def page(campaign: Any, sections: list[Section], generated: str, banner: Markup | None = None) -> str:
    """The report's HTML: its sections' tables, items and figures (templates/report.html); `banner`,
    above them, says what a campaign that is not finished covers."""
    env = Environment(loader=PackageLoader("vnetbench.report", "templates"), autoescape=select_autoescape())
    env.filters["unbroken"] = unbroken_html
    env.filters["item_html"] = item_html
    return env.get_template("report.html").render(
        campaign=campaign,
        sections=sections,
        generated=generated,
        spec_text=campaign["spec_text"],
        banner=banner,
    )


def unfinished_text(cov: Coverage, location: str) -> str:
    """'Campaign interrupted, not finished. This page covers 14 ok of 26 planned measurements: 3 failed,
    9 not run — `vnetbench resume ID --db STORE` runs the rest.' The report read as complete, its status
    in the header aside."""
    rest = "write this report again when it has finished" if cov.runs else cov.rest(location, "runs the rest")
    return f"Campaign {cov.state}. This page covers {cov.counts_text()} — {rest}."


def unfinished_banner(cov: Coverage | None, location: str) -> Markup | None:
    """unfinished_text as HTML, its command in <code>; None for a finished campaign."""
    if cov is None:
        return None
    text = str(escape(unfinished_text(cov, location)))
    return Markup(re.sub(r"`([^`]+)`", r"<code>\1</code>", text))


def coverage_json(cov: Coverage) -> dict[str, Any]:
    """The coverage in report.json: the counts the banner states."""
    keys = ("status", "ok", "failed", "not_run", "planned")
    return {k: getattr(cov, k) for k in keys} | {"still_running": cov.runs}


def build_times(builds: pd.Series, teardowns: pd.Series) -> str:
    """How long building and tearing down the topology took: of one build its times, of several their
    medians ('built once: build 31.25 ms median' had no median to take), in ms with four digits and
    their zeros (teardown 4.400 ms beside build 28.61 ms, not 4.4)."""

    def ms(values: pd.Series) -> str:
        return f"{fmt.zeros_kept(float(values.median()) / 1e6)} ms" if len(values) else fmt.MISSING

    if len(builds) == 1:
        return f"The topology was built once: build {ms(builds)}, teardown {ms(teardowns)}."
    return (
        f"The topology was built {len(builds)} times: build {ms(builds)} median, "
        f"teardown {ms(teardowns)} median."
    )


# The libraries that compute a report's statistics (intervals, tests, ANOVA): a report re-made with
# other versions can differ in its last digits or a test's method, so the page names those that made it.
STATISTICS_LIBRARIES = ("numpy", "pandas", "scipy", "statsmodels")


def made_with() -> str:
    """The software that made this report (not the campaign: `vnetbench` above is the one that ran it)."""
    libraries = ", ".join(f"{name} {version(name)}" for name in STATISTICS_LIBRARIES)
    return f"vnetbench {__version__}, Python {platform.python_version()}, {libraries}"


def _overview(context: ReportContext) -> Section:
    store, row, frame, fig_dir = context.store, context.campaign, context.frame, context.fig_dir
    env = row["environment"]
    created = dt.datetime.fromtimestamp(row["created_utc_ns"] / 1e9, dt.UTC).strftime("%Y-%m-%d %H:%M:%S UTC")
    ok = int((frame["status"] == "ok").sum()) if not frame.empty else 0
    failed = int((frame["status"] != "ok").sum()) if not frame.empty else 0
    facts = [
        ["campaign", f"{row['name']} ({row['id']})"],
        ["status", row["status"]],
        ["started", created],
        ["measurements", f"{ok} ok, {failed} failed" + _earlier_attempts(store, row["id"])],
        ["provider", row["provider"]],
        ["kernel", env.get("kernel", "?")],
        ["CPU", f"{env.get('cpu_count')} × {env.get('cpu_model', '?')}"],
        ["vnetbench", env.get("vnetbench", "?")],  # the version that ran it (`vnetbench --version`)
        ["tools", ", ".join(f"{k} {v}" for k, v in row["tool_versions"].items())],
        ["spec", f"{row['spec_source']} (sha256 {row['spec_sha256'][:12]}…)"],
        ["seed", str(row["seed"])],
        ["report made with", made_with()],
    ]
    section = Section(
        "Campaign", "campaign", intro=_description(row["spec_text"]), tables=[TableView("", ["", ""], facts)]
    )
    builds = store.builds_frame(row["id"])
    if not builds.empty:
        layout = builds.iloc[-1]["layout"]
        spec = yaml.safe_load(row["spec_text"])
        links = spec.get("topology", {}).get("links", [])
        switch_host = {
            str(sw.get("name")): str(sw["host"])
            for sw in spec.get("topology", {}).get("switches") or []
            if isinstance(sw, dict) and sw.get("host")
        }
        png = figures.topology(layout, links, fig_dir / "topology", switch_host)
        section.figures.append(Figure("Topology", png, wide=len(layout["node_host"]) > 8))
        section.items += fidelity.shaping_items(layout)
        times = builds["build_ns"].dropna()
        if len(times):
            section.items.append(build_times(times, builds["teardown_ns"].dropna()))
    with contextlib.suppress(yaml.YAMLError):
        section.items += fidelity.method_items(
            yaml.safe_load(row["spec_text"]) or {}, env, str(row["provider"] or ""), frame
        )
    cpu = context.cpu
    steal = dict(zip(cpu["measurement_id"], cpu["host_steal_ratio"], strict=True)) if not cpu.empty else {}
    layout = builds.iloc[-1]["layout"] if not builds.empty else None
    section.items += fidelity.machine_items(
        frame, context.losses, steal, fidelity.sender_shaped_nodes(layout)
    )
    busy = dict(zip(cpu["measurement_id"], cpu["host_busy_ratio"], strict=True)) if not cpu.empty else {}
    section.items += fidelity.saturated_cpu_items(frame, busy)
    section.items += fidelity.rtt_loss_items(frame, node_reports(store.events_frame(row["id"])))
    return section


def _earlier_attempts(store: Store, campaign_id: str) -> str:
    """The attempts a re-run replaced (a measurement retried, or re-run by `resume`): the counts
    beside it are of each measurement's latest attempt, and '26 ok, 0 failed' read as if nothing had
    ever failed."""
    earlier = sum(n - 1 for n in store.attempts(campaign_id).values())
    if not earlier:
        return ""
    return f" (and {fmt.counted(earlier, 'earlier attempt')} of re-run measurements, not used)"


def _description(spec_text: str) -> str:
    try:
        return str(yaml.safe_load(spec_text).get("description", ""))
    except yaml.YAMLError:
        return ""


def _label(r: dict[str, Any] | pd.Series, several: bool = False) -> str:
    """A CDF line's name: the connection, its measurement (when several), its treatment, placement."""
    inner = [str(r["measurement"])] if several else []
    inner += [str(r[TREATMENT])] if r.get(TREATMENT) else []
    return f"{r['src']}→{r['dst']} ({', '.join([*inner, str(r['placement'])])})"


def _rtt_section(prep: Prepared, fig_dir: Path) -> Section | None:
    table = prep.per_treatment(prep.frame, lambda f: d.rtt_table(f, prep.samples))
    if table.empty:
        return None
    intro = "Every reply of every repetition (ping -D), per connection"
    intro += " and treatment." if prep.factorial else "."
    section = Section("Round-trip time", "rtt", intro=" ".join(filter(None, [intro, prep.intro("rtt")])))
    section.tables.append(
        _stats_table(
            "RTT per connection",
            table,
            "rtt_ns",
            [("loss", "loss", fmt.loss_pct), ("unreachable", "unreachable", lambda v: fmt.value(v, 3))],
        )
    )
    rows = d.ok_alone(prep.frame)
    rows = rows[rows["kind"] == "rtt"]
    rtts = prep.samples[prep.samples["metric"] == "rtt_ns"]
    series, styles = {}, {}
    for _, group in rows.groupby(["src", "dst", "placement", TREATMENT], sort=False):
        label = _label(group.iloc[0])
        series[label] = rtts[rtts["measurement_id"].isin(group["id"])]["value"] / 1e6
        styles[label] = figures.PLACEMENT_STYLE.get(str(group["placement"].iloc[0]), "-")
    section.figures.append(
        Figure(
            "CDF of RTT per connection",
            figures.cdf(series, "RTT (ms)", "RTT per connection", fig_dir / "rtt_cdf", styles),
        )
    )
    return section


def _throughput_section(prep: Prepared, kind: str, fig_dir: Path) -> Section | None:
    frame = prep.frame
    table = prep.per_treatment(frame, lambda f: d.connection_table(f, kind, "throughput_bps", 1e6))
    if table.empty:
        return None
    name = kind.upper()
    intro = _throughput_intro(prep, kind, table)
    section = Section(
        f"{name} throughput",
        kind,
        intro=" ".join(filter(None, [intro, prep.intro(kind), _only_together(prep, kind, table)])),
    )
    extra = [
        ("link", "link_rate", lambda v: fmt.MISSING if v is None or pd.isna(v) else format_rate(v)),
        ("model max (Mbit/s)", "model_max", _mbit),
        ("of model max", "of_model_max", fmt.ratio_pct),
    ]
    if kind == "udp":
        table = _with_udp_columns(prep, table)
        extra += [
            ("offered (Mbit/s)", "offered", _mbit),  # one formatter: not '20' beside '20.0'
            ("sent (Mbit/s)", "sent", _mbit),
            ("mean loss", "loss_mean", fmt.loss_pct),
            (
                "mean jitter (ms)",
                "jitter_mean",
                lambda v: _nan_missing(v, fmt.display_unit("jitter_mean_ns").digits),
            ),
        ]
    section.tables.append(_stats_table(f"{name} throughput per connection", table, "throughput_bps", extra))
    section.figures += _throughput_figures(prep, kind, table, fig_dir)
    return section


def _mbit(v: Any) -> str:
    """A rate already in Mbit/s with the throughput's digits, its zeros kept: an offered 20 Mbit/s is
    '20.00' beside a sent '20.00' and a mean '19.98', not '20' beside '20.0'."""
    return _nan_missing(v, fmt.display_unit("throughput_bps").digits)


def _nan_missing(v: Any, digits: int) -> str:
    """`fmt.measured` with `digits`; '–' for a missing value (a merge leaves NaN)."""
    return fmt.MISSING if v is None or pd.isna(v) else fmt.measured(float(v), digits)


def _only_together(prep: Prepared, kind: str, table: pd.DataFrame) -> str:
    """Which treatments this per-connection table (flows measured alone) leaves out, and where they are."""
    if not prep.factorial or "treatment" not in table:
        return ""
    flows = prep.frame[prep.frame["kind"] == kind]
    missing = [t for t in prep.treatments if t in set(flows[TREATMENT]) and t not in set(table["treatment"])]
    if not missing:
        return ""
    return (
        f"The table and the per-repetition figures show the flows measured alone; under {', '.join(missing)} "
        "every flow ran together with others: those are in 'Effects of the factors' (the design's result) "
        "and 'Simultaneous flows'."
    )


def _throughput_intro(prep: Prepared, kind: str, table: pd.DataFrame) -> str:
    own = " under its own treatment (a factor may change link rates)" if prep.factorial else ""
    return (
        f"{kind.upper()} goodput at the receiver, {_values_basis(table)}, per connection"
        f"{' and treatment' if prep.factorial else ''}{_measured_twice(table)}. "
        "'of model max' compares the mean with the overhead-model maximum of the path's "
        f"bottleneck link{own} (rate × payload / frame bytes)."
        + (
            " 'offered' is the rate iperf3 was asked for, 'sent' what it sent: a sender whose own link is "
            "the shaped one is held back by its kernel (sent < offered, no loss), while an overloaded link "
            "further on drops the excess (loss)."
            if kind == "udp"
            else ""
        )
    )


def _several_per_repetition(table: pd.DataFrame) -> list[str]:
    """The connections (a per-connection table's rows) with more values than repetitions: measured
    alone by several patterns in a repetition (quickstart: vm1 → vm2 by 'connections' and by the
    star's alone step, n = 4 in 2 repetitions)."""
    if "repetitions" not in table:
        return []
    rows = [r for r in table.to_dict("records") if pd.notna(r["repetitions"]) and r["n"] > r["repetitions"]]
    return list(dict.fromkeys(f"{r['src']} → {r['dst']}" for r in rows))


def _values_basis(table: pd.DataFrame) -> str:
    """What one value of a per-connection table is: 'one value per repetition' only where it is."""
    several = _several_per_repetition(table)
    return "one value per measurement of a flow alone" if several else "one value per repetition"


def _measured_twice(table: pd.DataFrame) -> str:
    """Which connections n counts more than once a repetition, and why."""
    several = _several_per_repetition(table)
    if not several:
        return ""
    names = ", ".join(several[:-1]) + (" and " if len(several) > 1 else "") + several[-1]
    return (
        f" ({names}: measured alone more than once in a repetition, by several patterns; n counts every "
        "measurement, and the per-repetition figure draws one line per pattern)"
    )


def _with_udp_columns(prep: Prepared, table: pd.DataFrame) -> pd.DataFrame:
    """Offered vs sent vs received: a sender pushed back by its own shaped link sends less than
    offered and loses nothing; an overloaded path downstream drops the difference instead."""
    keys = [*d.CONNECTION, *(["treatment"] if prep.factorial else [])]
    metrics = {
        "offered": ("offered_bps", 1e6),
        "sent": ("sender_throughput_bps", 1e6),
        "loss_mean": ("loss_ratio", 1.0),
        "jitter_mean": ("jitter_mean_ns", 1e6),
    }
    for col, (metric, unit_scale) in metrics.items():
        t = prep.per_treatment(
            prep.frame, lambda f, m=metric, u=unit_scale: d.connection_table(f, "udp", m, u)
        )
        if not t.empty:
            table = table.merge(t[[*keys, "mean"]].rename(columns={"mean": col}), on=keys, how="left")
    return table


def _throughput_figures(prep: Prepared, kind: str, table: pd.DataFrame, fig_dir: Path) -> list[Figure]:
    """The CDF, the share of the model maximum, and (over repetitions) throughput and UDP loss."""
    name = kind.upper()
    rows = d.ok_alone(prep.frame)
    rows = rows[rows["kind"] == kind]
    several = rows["measurement"].nunique() > 1
    series = {
        _label(g.iloc[0], several): g["throughput_bps"] / 1e6
        for _, g in rows.groupby(["measurement", "src", "dst", "placement", TREATMENT], sort=False)
    }
    title = f"CDF of {name} throughput ({_values_basis(table)})"
    out = [
        Figure(
            f"CDF of {name} throughput",
            figures.cdf(series, "throughput (Mbit/s)", title, fig_dir / f"{kind}_cdf"),
        )
    ]
    if "of_model_max" in table and table["of_model_max"].notna().any():
        shaped = table[table["of_model_max"].notna()]
        png = figures.model_ratio(shaped, f"{name}: measured / model maximum", fig_dir / f"{kind}_model")
        out.append(Figure("Share of the overhead-model maximum", png))
    if prep.factorial:
        rows = rows.assign(treatment=rows[TREATMENT])  # one line per connection and treatment
    if rows["repetition"].nunique() > 1:
        title = f"{name} throughput per repetition"
        png = figures.per_repetition(rows, "throughput_bps", 1e6, "Mbit/s", title, fig_dir / f"{kind}_reps")
        out.append(Figure(title, png))
        if kind == "udp" and "loss_ratio" in rows:
            title = "UDP loss per repetition"
            png = figures.per_repetition(
                rows, "loss_ratio", 0.01, "loss (%)", title, fig_dir / "udp_loss_reps"
            )
            out.append(Figure(title, png))
    return out


def _competition_section(
    prep: Prepared, campaign: dict[str, Any], fig_dir: Path, cpu: pd.DataFrame
) -> Section | None:
    results = [
        (t, comp) for t, rows in prep.split(prep.frame) for comp in d.competition(rows, prep.confidence)
    ]
    if not results:
        return None
    links = SharedLinks(campaign)
    intro = (
        "Star, fan-in and parallel patterns measure each flow alone, then all together behind a start "
        "barrier. Do simultaneous flows get less than each alone? (Packet-rate sweeps are compared point "
        "by point in the packet-rate section.)"
    )
    if prep.factorial:
        intro += " One table per treatment: flows of different treatments are never summed or compared."
    section = Section(
        "Simultaneous flows", "competition", intro=" ".join(filter(None, [intro, prep.intro("together")]))
    )
    section.items = _verdicts(results)
    combined: dict[tuple[str, str], list[tuple[str, d.Competition, float | None]]] = {}
    for i, (treatment, comp) in enumerate(results):
        name = f"{comp.pattern} · {comp.measurement}" + (f" · {treatment}" if treatment else "")
        throughput = comp.metric == "throughput_bps"
        shared = links.find(treatment, comp.measurement, [(f.src, f.dst) for f in comp.flows])
        table = _competition_table(name, comp, shared)
        hot, reps = _saturated_repetitions(prep, comp, treatment, cpu)
        if hot:
            table.note += f"; host CPU {SATURATED_BUSY} busy in {hot} of {reps} repetitions together"
            # flows over separate links (their sum above one link's maximum) competed for no link
            links_too = "" if _separate_links(comp, shared) else " as well as for the link"
            section.items.append(
                f"Machine as bottleneck: <b>{name}</b>: in {hot} of {reps} repetitions together the host's "
                f"CPU was {SATURATED_BUSY} busy — the flows competed for this machine's cores{links_too}, "
                "so their shares are not the network's alone."
            )
        section.tables.append(table)
        if prep.factorial and throughput:  # one figure across treatments, after the tables
            model = shared.model_max_bps if shared and shared.model_max_bps else comp.model_max
            combined.setdefault((comp.pattern, comp.measurement), []).append((str(treatment), comp, model))
            continue
        section.figures += _competition_figures(prep, name, comp, treatment, fig_dir, i)
    for j, ((pattern, measurement), entries) in enumerate(combined.items()):
        section.figures += _treatments_figures(prep, f"{pattern} · {measurement}", entries, fig_dir, j)
    return section


def _saturated_repetitions(
    prep: Prepared, comp: d.Competition, treatment: str | None, cpu: pd.DataFrame
) -> tuple[int, int]:
    """(repetitions together during which the host's CPU was saturated, repetitions together)."""
    rows = _together_rows(prep, comp, treatment)
    rows = rows[rows["status"] == "ok"]
    if rows.empty:
        return 0, 0
    hot = saturated(with_host_busy(rows, cpu)["host_busy_ratio"])
    per_rep = hot.groupby(rows["repetition"]).any()
    return int(per_rep.sum()), len(per_rep)


def _competition_table(name: str, comp: d.Competition, shared: SharedLink | None) -> TableView:
    """Each flow alone and together (and against the model maximum); for throughput their sum."""
    throughput = comp.metric == "throughput_bps"
    scale, unit = (1e6, "Mbit/s") if throughput else (1e6, "ms")
    of_model = bool(throughput and comp.model_max)
    rows = [
        [
            f"{f.src} → {f.dst}",
            fmt.value(f.alone_mean / scale),
            fmt.value(f.together_mean / scale),
            fmt.ratio_pct(f.ratio),
        ]
        + ([fmt.ratio_pct(f.together_mean / comp.model_max)] if of_model else [])
        for f in comp.flows
    ]
    if throughput:  # a sum of RTTs means nothing
        rows.append(
            ["sum together", "", fmt.value(comp.sum_together / scale), ""]
            + ([_sum_share(comp, shared)] if of_model else [])
        )
    return TableView(
        name,
        ["flow", f"alone ({unit})", f"together ({unit})", "together / alone"]
        + (["together / model max"] if of_model else []),
        rows,
        note=(f"Jain's index {d.jain_text(comp)}; " if throughput else "")
        + f"start skew {comp.skew_mean_ns / 1e6:.2f} ms mean, "
        f"{comp.skew_max_ns / 1e6:.2f} ms max",
    )


def _competition_figures(
    prep: Prepared, name: str, comp: d.Competition, treatment: str | None, fig_dir: Path, i: int
) -> list[Figure]:
    """Alone vs together bars, and (throughput) the flows over time in their first repetition together."""
    throughput = comp.metric == "throughput_bps"
    scale, unit = (1e6, "Mbit/s") if throughput else (1e6, "ms")
    out = [
        Figure(
            f"{name}: alone vs together",
            figures.competition_bars(comp, scale, unit, fig_dir / f"competition_{i}", treatment),
        )
    ]
    if throughput:
        rep, labels = _first_together(prep, comp, treatment)
        out.append(
            Figure(
                f"{name}: throughput over time, together",
                figures.timeseries(
                    prep.samples,
                    labels,
                    "throughput_bps",
                    1e6,
                    "Mbit/s",
                    f"{name}: the flows together (repetition {rep})",
                    fig_dir / f"competition_ts_{i}",
                ),
            )
        )
    return out


def _treatments_figures(
    prep: Prepared,
    name: str,
    entries: list[tuple[str, d.Competition, float | None]],
    fig_dir: Path,
    j: int,
) -> list[Figure]:
    """One pattern's flows together across treatments: stacked bars, and their time series."""
    bars = Figure(
        f"{name}: the flows together, per treatment",
        figures.competition_by_treatment(
            entries,
            1e6,
            "Mbit/s",
            f"{name}: mean throughput together per treatment",
            fig_dir / f"competition_treatments_{j}",
        ),
        "each bar is one treatment's flows stacked; the black tick is the overhead-model "
        "maximum of the link they share",
    )
    panels = [(t, _first_together(prep, comp, t)[1]) for t, comp, _ in entries]
    series = Figure(
        f"{name}: throughput over time, together, per treatment",
        figures.timeseries_grid(
            panels,
            prep.samples,
            "throughput_bps",
            1e6,
            "Mbit/s",
            f"{name}: the flows together (first repetition of each treatment)",
            fig_dir / f"competition_ts_treatments_{j}",
        ),
    )
    return [bars, series]


def _verdicts(results: list[tuple[str | None, d.Competition]]) -> list[str]:
    """Each competition's verdict and reasons; one line for a pattern whose every treatment got the
    same bare verdict (no flow measured alone, say)."""
    items: list[str] = []
    groups: dict[tuple[str, str], list[tuple[str | None, d.Competition]]] = {}
    for treatment, comp in results:
        groups.setdefault((comp.pattern, comp.measurement), []).append((treatment, comp))
    for (pattern, measurement), entries in groups.items():
        verdicts = {comp.verdict for _, comp in entries}
        if len(entries) > 1 and len(verdicts) == 1 and not any(comp.reasons for _, comp in entries):
            items.append(
                f"<b>{pattern} · {measurement}</b>, all {len(entries)} treatments: {verdicts.pop()}."
            )
            continue
        for treatment, comp in entries:
            name = f"{pattern} · {measurement}" + (f" · {treatment}" if treatment else "")
            items.append(f"<b>{name}</b>: {comp.verdict}.")
            items.extend(comp.reasons)
    return items


def _together_rows(prep: Prepared, comp: d.Competition, treatment: str | None) -> pd.DataFrame:
    """The measurements of a competition's flows started together (any status)."""
    frame = prep.frame
    return frame[
        (frame["pattern"] == comp.pattern)
        & (frame["measurement"] == comp.measurement)
        & (frame["group_kind"] == "together")
        & (frame[TREATMENT] == (treatment or ""))
    ]


def _first_together(prep: Prepared, comp: d.Competition, treatment: str | None) -> tuple[int, dict[int, str]]:
    """The first repetition of a competition's flows together, and their ids → labels."""
    together = _together_rows(prep, comp, treatment)
    first = together[together["repetition"] == together["repetition"].min()]
    rep = int(first["repetition"].min()) if len(first) else 1
    return rep, {int(r.id): f"{r.src}→{r.dst}" for r in first.itertuples()}


def _sum_share(comp: d.Competition, shared: SharedLink | None = None) -> str:
    """The flows' sum against one bottleneck's overhead-model maximum (and raw rate). A sum above one
    link's maximum shows the flows do not all cross one such link (a star over separate links).
    When the flows share a shaped link other than their own bottleneck (a star into a host whose
    uplink is faster than each VM's link), the sum is compared with that link."""
    assert comp.model_max
    if shared and shared.model_max_bps and shared.rate_bps != comp.link_rate:
        share = comp.sum_together / shared.model_max_bps
        return (
            f"{fmt.ratio_pct(share)} of the shared link {shared.name} ({format_rate(shared.rate_bps)}, "
            f"model max {fmt.value(shared.model_max_bps / 1e6)} Mbit/s)"
        )
    share = comp.sum_together / comp.model_max
    if _separate_links(comp, shared):
        return f"{fmt.ratio_pct(share)} of one link's model max: the flows cross separate links"
    rate = f", {fmt.ratio_pct(comp.sum_together / comp.link_rate)} of link rate" if comp.link_rate else ""
    return f"{fmt.ratio_pct(share)}{rate}"


def _separate_links(comp: d.Competition, shared: SharedLink | None) -> bool:
    """Whether the flows crossed separate links: no shared shaped link, and together more than one
    link's overhead-model maximum (exogeni-exp4's star: 300.0 % of one link)."""
    compared_to_shared = bool(shared and shared.model_max_bps and shared.rate_bps != comp.link_rate)
    return bool(comp.model_max) and not compared_to_shared and comp.sum_together / comp.model_max > 1.1


# events a section of their own presents: the table names the section instead of a JSON fragment
SHOWN_ELSEWHERE = {EMULATOR_EVENT: "each delay node's report: see the section Delay nodes"}


# what an event's count means where its name alone could mislead: ping's "no answer yet" lines are
# mostly late replies, not loss (exogeni-exp1: 196 beside a loss of 0.00 %)
EVENT_MEANING = {
    "late_reply": "ping requests answered after the next request was sent: late, not lost",
    "no_reply": "ping requests never answered: counted in the loss",
    # runs stored before the two were told apart
    "no_answer": "ping requests unanswered when the next was sent: late or lost (the loss counts only "
    "those never answered)",
}


def _event_name(kind: str) -> str:
    meaning = EVENT_MEANING.get(kind)
    return f"{kind} ({meaning})" if meaning else kind


def _event_example(events: pd.DataFrame, kind: str, frame: pd.DataFrame) -> str:
    example = SHOWN_ELSEWHERE.get(kind) or shortened(str(events[events["kind"] == kind]["detail"].iloc[0]))
    return example + _mss_warning_note(events[events["kind"] == kind], frame)


EXAMPLE_CHARS = 160


def shortened(text: str, limit: int = EXAMPLE_CHARS) -> str:
    """text as it is when it fits in `limit` characters; else cut after the last whole word that fits
    with an ellipsis ("…" counted in the limit), never mid-word — a word cut short can read as another
    word or number ("1470 bytes" cut to "147"). A first word longer than the limit is cut at it."""
    if len(text) <= limit:
        return text
    head = text[: limit - 1]
    if not (text[limit - 1].isspace() or head[-1].isspace()):  # the cut falls inside a word: drop it
        words = head.rsplit(None, 1)
        head = words[0] if len(words) == 2 else head
    return head.rstrip(" \t\n,;:") + "…"


MSS_WARNING = re.compile(r"UDP block size (\d+) exceeds TCP MSS (\d+)")


def _mss_warning_note(events: pd.DataFrame, frame: pd.DataFrame) -> str:
    """iperf3 warns when a UDP datagram is longer than its TCP control connection's MSS, which TCP's
    options shorten: the datagram fragments only if payload + 28 bytes of headers exceed the path MTU.
    Said beside the warning when that holds for every measurement that gave it."""
    found = [(MSS_WARNING.search(str(e.detail)), e.measurement_id) for e in events.itertuples()]
    if not found or not all(m for m, _ in found) or frame.empty or "path_mtu" not in frame:
        return ""
    mtu = frame.set_index("id")["path_mtu"]
    sizes = set()
    for match, mid in found:
        size, path_mtu = int(match.group(1)), mtu.get(mid)
        if path_mtu is None or pd.isna(path_mtu) or size + 28 > path_mtu:
            return ""
        sizes.add((size, int(path_mtu)))
    shown = "; ".join(f"{n} + 28 = {n + 28} bytes within the path MTU {mtu_}" for n, mtu_ in sorted(sizes))
    return (
        f" — not a problem here: {shown}, so no datagram was fragmented (iperf3 compares the datagram "
        "with its TCP connection's MSS, which TCP's options make smaller than the MTU allows)"
    )


def _failures_section(store: Store, campaign_id: str, frame: pd.DataFrame) -> Section | None:
    section = Section("Failures and events", "failures")
    if not frame.empty:
        failed = frame[frame["status"] != "ok"]
        if len(failed):
            section.tables.append(
                TableView(
                    "Failed measurements",
                    ["measurement", "attempt", "reason"],
                    [[r.key, str(r.attempt), r.reason or ""] for r in failed.itertuples()],
                )
            )
    events = store.events_frame(campaign_id)
    if not events.empty:
        counts = events.groupby("kind").size().sort_values(ascending=False)
        section.tables.append(
            TableView(
                "Events recorded",
                ["event", "count", "example"],
                [
                    [_event_name(str(k)), str(n), _event_example(events, str(k), frame)]
                    for k, n in counts.items()
                ],
            )
        )
    return section
