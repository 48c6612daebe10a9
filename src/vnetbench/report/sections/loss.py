"""Report section: where the packets of every UDP / packet-rate measurement went (telemetry, issue 5)."""

from __future__ import annotations

import warnings
from dataclasses import asdict
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from matplotlib.colors import to_rgba
from matplotlib.patches import FancyBboxPatch

from vnetbench.analysis.loss import (
    NOISE_PACKETS,
    Localization,
    cpu_busy_series,
    series,
)
from vnetbench.palette import BLACK, BLUE, FAILED, NEUTRAL
from vnetbench.report import format as fmt
from vnetbench.report.figures import plt, save
from vnetbench.report.sections import ReportContext
from vnetbench.report.view import Figure, Section, TableView
from vnetbench.store.db import Store

ORDER = 60
MAX_ROWS = 60
MAX_DETAILS = 4


def path_diagram(loc: Localization, title: str, path: Path) -> Path:
    """Boxes for every counting point along the path; the hop that lost most is in the failure red, its
    frame thicker and its loss followed by the words "most lost", with its counter (never the colour
    alone); the others blue."""
    stages = [s for s in loc.stages if s.count is not None]
    fig, ax = plt.subplots(figsize=(max(8.0, 1.25 * len(stages)), 2.6))
    for i, stage in enumerate(stages):
        red = stage.key == loc.hop_key
        edge = FAILED if red else BLUE
        ax.add_patch(
            FancyBboxPatch(
                (i + 0.06, 0.35), 0.88, 0.5, boxstyle="round,pad=0.02",
                facecolor=to_rgba(edge, 0.15), edgecolor=edge, linewidth=2.0 if red else 1.0,
            )
        )  # fmt: skip
        label = stage.label.replace(" by the ", "\n").replace(" by ", "\n").replace("'s ", "'s\n")
        label = label.replace(" (kernel count)", "\n(kernel)")
        ax.text(i + 0.5, 0.72, label, ha="center", va="center", fontsize=6.5, wrap=True)
        ax.text(i + 0.5, 0.45, fmt.count(stage.count), ha="center", va="center", fontsize=8, weight="bold")
        if i:
            ax.annotate(
                "", (i + 0.06, 0.6), (i - 0.06, 0.6), arrowprops={"arrowstyle": "->", "color": NEUTRAL}
            )
        if stage.lost and stage.lost > 0.5:
            ax.text(i + 0.5, 0.25, f"−{stage.lost:,.0f}" + (" most lost" if red else ""), ha="center",
                    va="center", fontsize=7.5, color=FAILED if red else BLACK)  # fmt: skip
        if red and stage.explainers:
            top = max(stage.explainers, key=lambda e: e.packets)
            ax.text(i + 0.5, 0.1, f"{top.counter}: {top.packets:,.0f}", ha="center", va="center", fontsize=7,
                    color=FAILED)  # fmt: skip
    ax.set_xlim(0, len(stages))
    ax.set_ylim(0, 1)
    ax.axis("off")
    ax.set_title(title, fontsize=9)
    with warnings.catch_warnings():  # the boxes fill the axes on purpose; tight_layout has nothing to fit
        warnings.simplefilter("ignore", UserWarning)
        return save(fig, path)


def counter_over_time(store: Store, loc: Localization, title: str, path: Path) -> Path | None:
    """The explaining counter per reading (bars) and the host's CPU busy share (line) during the run."""
    if loc.measurement_id is None or not loc.counter_scope or not loc.counter_metric:
        return None
    drops = series(store, loc.measurement_id, loc.counter_scope, loc.counter_metric)
    cpu = cpu_busy_series(store, loc.measurement_id)
    if drops.empty:
        return None
    fig, ax = plt.subplots(figsize=(7, 3))
    t = drops["t_ns"].to_numpy(dtype=float) / 1e9
    per_interval = drops["value"] / max(1, loc.fragments_per_datagram)
    # each reading closes the interval before it: a bar spans it, from the reading before
    start = interval_starts(t, cpu["t_ns"].to_numpy(dtype=float) / 1e9)
    ax.bar(start, per_interval, width=t - start, align="edge", color=FAILED, alpha=0.6, label=loc.counter)
    ax.set_xlabel("seconds after the baseline reading (end of each interval)")
    ax.set_ylabel("datagrams per interval")
    handles, labels = ax.get_legend_handles_labels()
    if not cpu.empty:
        ax2 = ax.twinx()
        ax2.plot(cpu["t_ns"] / 1e9, cpu["busy_ratio"] * 100, color=BLUE, marker="o", label="host CPU busy")
        ax2.set_ylabel("host CPU busy (%)")
        ax2.set_ylim(0, 105)
        more = ax2.get_legend_handles_labels()
        handles, labels = handles + more[0], labels + more[1]
    # one legend below the axes: inside, the CPU's covered the last bar (save keeps it in the file)
    ax.legend(handles, labels, fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.22), ncol=2)
    ax.set_title(title, fontsize=9)
    ax.grid(alpha=0.3)
    return save(fig, path)


def interval_starts(t: np.ndarray, readings: np.ndarray) -> np.ndarray:
    """Where the interval each counter reading at `t` (s after the baseline) closes began: the reading
    before it among every reading of the run (`readings`, the CPU's, taken at each), or the baseline
    (0). The store keeps a counter's non-zero deltas only, so its own times skip readings: bars 0.8 ×
    the median gap between them wide drew 101 drops of a 62 ms interval over 0.8 s, across the 36 of
    the second before (quickstart d1453f96, measurement 18)."""
    grid = np.unique(np.concatenate([[0.0], readings, t]))
    return grid[np.searchsorted(grid, t) - 1]


def build(ctx: ReportContext) -> list[Section]:
    locs, skipped = ctx.accounting
    if not locs and not skipped:
        return []
    section = Section(
        "Where the packets went",
        "loss",
        intro="For every UDP and vnb-probe flow, the packets counted at each point of the path "
        "(application, sender stack, every interface and queue, receiver stack, socket), the hop where "
        "the count drops most and the kernel counter that explains it (socket buffer full, qdisc drop, "
        "bridge drop, reassembly failure).",
        tables=[summary_table([loc.to_json() for loc in locs[:MAX_ROWS]], ctx.frame, len(locs))]
        if locs
        else [],
    )
    if skipped:
        section.tables.append(not_accounted_table([asdict(n) for n in skipped]))
    # Details for the worst measurement of each (measurement, flow).
    by_id = ctx.frame.set_index("id")
    worst: dict[tuple[str, str, str], Localization] = {}
    for loc in locs:
        key = (str(by_id.loc[loc.measurement_id]["measurement"]), loc.src, loc.dst)
        if loc.hop is not None and (key not in worst or loc.app_lost > worst[key].app_lost):
            worst[key] = loc
    for (name, src, dst), loc in list(worst.items())[:MAX_DETAILS]:
        _details(section, ctx, f"{name} {src}→{dst}", loc)
    return [section]


def summary_table(locs: list[dict[str, Any]], frame: pd.DataFrame, total: int | None = None) -> TableView:
    """One row per measurement (`Localization.to_json()`): where its packets were lost, and why."""
    by_id = frame.set_index("id")
    rows = []
    for loc in locs:
        m = by_id.loc[loc["measurement_id"]]
        why = loc["cause"] or ""
        if loc["counter"]:
            why += f" — {loc['counter']}: {fmt.count(loc['counter_packets'])}"
        others = [f"{c} — {counter}: {fmt.count(n)}" for c, counter, n in _other_explainers(loc)]
        if others:  # without a cause of its own, not '; also …' after nothing (a flow that lost none)
            why += ("; also " if why else "counters on its path: ") + "; also ".join(others)
        lost = max(0.0, loc["app_lost"])
        rows.append(
            [
                f"{m['measurement']} ({loc['measurement_id']})",
                f"{loc['src']}→{loc['dst']}",
                _repetition(m),
                fmt.count(loc["sent"]),
                f"{fmt.count(lost)} ({fmt.share(lost, loc['sent'])})",
                loc["verdict"],
                why,
                _explained(loc, lost),
            ]
        )
    note = (
        "Counts are in datagrams: interface counters (frames) minus the sender's TCP/ICMP packets and "
        "the tool's own set-up and end datagrams (iperf3's UDP connect, vnb-probe's FIN copies), divided "
        "by the fragments per datagram. With a warm-up (omit) the counts cover the tool's whole run, as "
        "the kernel counted it. 'explained' = share of the application's loss that a "
        "kernel counter accounts for; a queue the step's flows shared counts all their drops, so its "
        "counter explains a flow's loss only up to its drops ('+ ≤ N % shared') and exactly for the step "
        "as a whole (its drops against what the step's flows lost there). A loss of up to "
        f"{NOISE_PACKETS:g} datagrams is located only where a counter saw it."
    )
    if total is not None and total > len(locs):
        note += f" First {len(locs)} of {total} measurements; all of them: vnetbench loss --json."
    columns = ["measurement (id)", "flow", "rep", "sent", "lost", "lost at", "why", "explained"]
    return TableView("Loss localization", columns, rows, note)


def _explained(loc: dict[str, Any], lost: float) -> str:
    """The 'explained' cell: the share the flow's own counters account for; with a shared queue's
    counter as the verdict's, the most it can add for this flow and what it explains for the step."""
    if lost <= 0:
        return fmt.MISSING
    own = fmt.share(loc["explained_packets"], lost)
    shared = loc.get("shared_explained_packets") or 0.0
    if not loc.get("counter_shared") or shared <= 0:
        return own
    text = f"{own} + ≤ {fmt.share(shared, lost)} shared"
    step_lost, flows = loc.get("step_lost") or 0.0, loc.get("step_flows") or 0
    if flows > 1 and step_lost > 0:
        text += (
            f" (step: its {flows} flows lost {fmt.count(step_lost)} there, the counter dropped "
            f"{fmt.count(loc['counter_packets'])}: {fmt.share(loc['counter_packets'], step_lost)})"
        )
    return text


def _repetition(m: pd.Series) -> str:
    """The repetition, with the treatment's factor levels where the design has factors: '4
    (receivers=6)' — a flow's loss depends on them, and rows of different treatments share names."""
    factors = m.get("factors")
    levels = ", ".join(f"{k}={v}" for k, v in factors.items()) if isinstance(factors, dict) else ""
    return f"{m['repetition']} ({levels})" if levels else str(m["repetition"])


def _other_explainers(loc: dict[str, Any]) -> list[tuple[str, str, float]]:
    """(cause, counter, datagrams) of the counters at other points that explain part of the loss: the
    'explained' column sums them all, so the 'why' column names them too."""
    # the main counter once: a shared stage's comes back as the verdict's under another name ('...
    # (all flows through it)'), the same time series
    main = (loc.get("counter_scope"), loc.get("counter_metric"))
    out = []
    for stage in loc.get("stages", []):
        for e in stage["explainers"]:
            same = e["counter"] == loc["counter"] or (
                main[0] is not None and (e.get("scope"), e.get("metric")) == main
            )
            if e["packets"] > 0 and not same:
                out.append((e["cause"], e["counter"], e["packets"]))
    return out


def not_accounted_table(skipped: list[dict[str, Any]]) -> TableView:
    """Packet flows the counters cannot follow, grouped by kind and reason, with the tool's own loss."""
    groups: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for n in skipped:
        groups.setdefault((n["kind"], n["reason"]), []).append(n)
    rows = []
    for (kind, reason), items in groups.items():
        lost = [n["lost"] for n in items if n["lost"] is not None]
        rows.append(
            [
                kind,
                str(len(items)),
                fmt.count(sum(max(0.0, v) for v in lost)) if lost else fmt.MISSING,
                ", ".join(str(n["measurement_id"]) for n in items[:12]) + (" …" if len(items) > 12 else ""),
                reason,
            ]
        )
    return TableView(
        "Packet flows not accounted for hop by hop",
        ["kind", "measurements", "lost (tool's count)", "ids", "why not"],
        rows,
    )


def _details(section: Section, ctx: ReportContext, flow: str, loc: Localization) -> None:
    """The count at each point of one measurement, its path diagram and its explaining counter over time."""
    section.tables.append(
        TableView(
            f"{flow}, measurement {loc.measurement_id}: count at each point",
            ["point", "where", "datagrams", "lost here", "counters"],
            [
                [
                    s.label,
                    s.where,
                    fmt.count(s.count),
                    fmt.count(s.lost),
                    "; ".join(f"{e.counter}: {e.packets:,.0f} ({e.cause})" for e in s.explainers),
                ]
                for s in loc.stages
            ],
            loc.note,
        )
    )
    png = path_diagram(
        loc,
        f"{flow}: {fmt.count(max(0.0, loc.app_lost))} of {fmt.count(loc.sent)} lost, most at {loc.hop}",
        ctx.fig_dir / f"loss-path-{loc.measurement_id}",
    )
    section.figures.append(Figure(f"Path of {flow}", png, "datagrams counted at each point"))
    over_time = counter_over_time(
        ctx.store,
        loc,
        f"{flow}: {loc.counter} per interval",
        ctx.fig_dir / f"loss-series-{loc.measurement_id}",
    )
    if over_time is not None:
        section.figures.append(
            Figure(f"{loc.counter} over time", over_time, "the explaining counter per reading, and host CPU")
        )
