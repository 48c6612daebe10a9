"""Report section for vnb-probe measurements: packet-rate sweeps, millisecond traces, CPU share, UDP RTT.

- Sweeps (`pps`): received against offered packet rate per packet size, the saturation knee (the
  highest offered rate received with < 1 % loss before the first that is not) and the theoretical
  limit of the path's shaped link from the overhead model (an unshaped veth has none: said so).
  Flows measured alone (pairs, or the alone steps of star/fan-in/parallel patterns) are drawn one
  series each; flows swept at the same moment (a parallel pattern's tenants) get their own figures
  (report/sweeps_multi.py): each flow and the mean per flow against the offered rate per flow, and the
  aggregate against the total offered, beside the same pair swept alone.
- Traces (`trace`, `background`): throughput per bin over time with quiet periods (bins that
  received nothing) and bursts (bins above 1.5 × the offered rate) marked, as in the EC2 study.
- `cpushare`: the share of time a node's loop held a CPU, per node.
- `probe-rtt`: min/median/mean/max/SD over every probe of every repetition, per connection.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from vnetbench.analysis.cpu import with_host_busy
from vnetbench.analysis.knee import KNEE_LOSS, KNEE_SENT  # the dashboard's sweep cells use the same
from vnetbench.kinds.overhead import frame_bytes
from vnetbench.palette import MAGENTA, NEUTRAL
from vnetbench.report import format as fmt
from vnetbench.report import sweeps_multi
from vnetbench.report.figures import plt, save
from vnetbench.report.sections import ReportContext
from vnetbench.report.view import Figure, Section, TableView

ORDER = 60
BURST_FACTOR = 1.5  # a trace bin above this × the offered rate is a burst
MAX_TRACES = 4


def build(ctx: ReportContext) -> list[Section]:
    frame = ctx.frame
    if frame.empty or "kind" not in frame.columns:
        return []
    ok = frame[frame["status"] == "ok"]
    pps = with_host_busy(ok[ok["kind"] == "pps"], ctx.cpu)
    background_steps = set(frame.loc[frame["group_kind"] == "background", "step_key"])
    out = [
        _sweep_section(pps, ctx.fig_dir, background_steps),
        _trace_section(ctx, ok[ok["kind"].isin(["trace", "background"])]),
        _cpushare_section(ok[ok["kind"] == "cpushare"], ctx.fig_dir),
        _rtt_section(ctx, ok[ok["kind"] == "probe-rtt"]),
    ]
    return [s for s in out if s is not None]


# ------------------------------------------------------------------------------------------ helpers


def _col(df: pd.DataFrame, name: str) -> pd.Series:
    return df[name] if name in df.columns else pd.Series(np.nan, index=df.index)


def _factors_label(value: Any) -> str:
    if isinstance(value, dict) and value:
        return ", ".join(f"{k}={v}" for k, v in sorted(value.items()))
    return ""


def _series_label(row: pd.Series) -> str:
    parts = [f"{row['pattern']}: {row['measurement']} {row['src']}→{row['dst']}"]
    factors = _factors_label(row.get("factors"))
    if factors:
        parts.append(factors)
    return " · ".join(parts)


def limit_pps(link_rate_bps: float | None, size: int) -> float | None:
    """Most packets/s a tbf/htb-shaped link passes: they count the L2 frame without FCS (size + 42)."""
    if link_rate_bps is None or not np.isfinite(link_rate_bps) or link_rate_bps <= 0:
        return None
    return link_rate_bps / ((frame_bytes(size, "l2")) * 8)


def knee(points: pd.DataFrame) -> float | None:
    """The highest offered rate that passed before the first that did not (None: none passed).

    A point passes when the sender sent at least 95 % of the offered rate and less than 1 % was lost: a
    sender that cannot keep up has saturated the path (on a veth its receive work runs on the sender's
    CPU) as surely as a drop shows it. 95 %, not 99 %: on a loaded machine stalls over the sender's
    5 ms threshold skip a few slots without the path being saturated.
    """
    best = None
    for _, p in points.sort_values("offered_pps").iterrows():
        sent_enough = "achieved_pps" not in p or p["achieved_pps"] >= KNEE_SENT * p["offered_pps"]
        if p["loss"] < KNEE_LOSS and sent_enough:
            best = p["offered_pps"]
        else:
            break
    return best


def sweep_points(rows: pd.DataFrame) -> pd.DataFrame:
    """Mean over repetitions of every (series, size, offered rate)."""
    df = pd.DataFrame(
        {
            "series": rows.apply(_series_label, axis=1) if not rows.empty else [],
            "size": _col(rows, "payload_bytes"),
            "offered_pps": _col(rows, "target_pps"),
            "achieved_pps": _col(rows, "achieved_pps"),
            "received_pps": _col(rows, "received_pps"),
            "loss": _col(rows, "loss_ratio"),
            "lateness_p99_ns": _col(rows, "send_lateness_p99_ns"),
            "link_rate_bps": _col(rows, "link_rate_bps"),
            "path_pps_limit": _col(rows, "path_pps_limit"),
            "repetition": _col(rows, "repetition"),
        }
    )
    df = df.dropna(subset=["size", "offered_pps"])
    return df.groupby(["series", "size", "offered_pps"], as_index=False).agg(
        achieved_pps=("achieved_pps", "mean"),
        received_pps=("received_pps", "mean"),
        received_min=("received_pps", "min"),
        received_max=("received_pps", "max"),
        loss=("loss", "mean"),
        lateness_p99_ns=("lateness_p99_ns", "max"),
        link_rate_bps=("link_rate_bps", "first"),
        path_pps_limit=("path_pps_limit", "first"),
        n=("received_pps", "size"),
    )


def repetition_knees(rows: pd.DataFrame, series: str, size: float) -> list[float | None]:
    """The knee of each repetition's own sweep, in repetition order (the knee of the mean curve can
    pass a point that one repetition failed: its loss averaged below 1 % with the others')."""
    if rows.empty or "repetition" not in rows:
        return []
    mask = (rows.apply(_series_label, axis=1) == series) & (_col(rows, "payload_bytes") == size)
    mine = rows[mask]
    return [knee(sweep_points(r)) for _, r in mine.groupby(_col(mine, "repetition"), sort=True)]


def _kpps(pps: float) -> str:
    """A packet rate in the unit and digits the Findings quote it with: 60457 -> '60.46' (K pps)."""
    return fmt.metric("pps", pps)


def ceiling(rows: pd.DataFrame, series: str, size: float) -> tuple[float, float, int] | None:
    """The series' ceiling: the most packets/s received in each repetition; (mean, sd, repetitions)."""
    if rows.empty or "repetition" not in rows:
        return None
    mask = (rows.apply(_series_label, axis=1) == series) & (_col(rows, "payload_bytes") == size)
    per_rep = _col(rows[mask], "received_pps").groupby(_col(rows[mask], "repetition")).max().dropna()
    if per_rep.empty:
        return None
    sd = float(per_rep.std(ddof=1)) if len(per_rep) > 1 else float("nan")
    return float(per_rep.mean()), sd, len(per_rep)


# ------------------------------------------------------------------------------------------ sweeps


def _sweep_section(all_rows: pd.DataFrame, fig_dir: Path, background_steps: set[str]) -> Section | None:
    if all_rows.empty:
        return None
    together = sweeps_multi.is_together(all_rows)
    rows = all_rows[~together]
    pts = sweep_points(rows)
    multi = sweeps_multi.multi_flow_part(all_rows, fig_dir, background_steps)
    if pts.empty and multi is None:
        return None
    section = Section(
        "Packet rate: received vs offered",
        "probe-pps",
        intro=(
            "Constant-rate UDP from vnb-probe, one step per offered rate and packet size; received rate at "
            "the receiver (distinct packets), mean over repetitions (bars: min–max). The dashed line of the "
            "same colour is what the sender managed to send (below the offered rate: the sender, not the "
            "path, was the limit — on a veth the receive path runs on the sender's CPU). The knee is the "
            "highest offered rate sent at ≥ 95 % and received with < 1 % loss before the first that was "
            "not. The black dashed line is the shaped link's limit from the overhead model (tbf/htb count "
            "L2 frames: payload + 42 bytes); a physical 1 Gbit/s link passes 1 Gbit/s × 1500/1538 of "
            "1500-byte packets."
        ),
    )
    if multi is not None:
        section.intro += " " + multi.intro
        section.items += multi.items
    rows_out: list[list[str]] = []
    for size, by_size in pts.groupby("size"):
        png = _size_figure(int(size), by_size, rows, rows_out, fig_dir / f"probe_pps_{int(size)}")
        section.figures.append(Figure(f"Received vs offered, {int(size)}-byte payloads", png))
    if rows_out:
        section.tables.append(
            TableView(
                "Sweep summary",
                [
                    "series",
                    "payload B",
                    "frame B",
                    "knee (K pps)",
                    "knee per repetition (K pps)",
                    "max of the mean received (K pps)",
                    "ceiling (K pps), mean ± SD over repetitions",
                    "link limit (K pps)",
                    "points limited by the sender",
                    "max loss %",
                    "max |achieved/target − 1| %",
                    "max lateness p99 µs",
                ],
                rows_out,
                note="Every step stores the sender's achieved rate and its send lateness p50/p99/max. The "
                "knee is that of the mean over repetitions (a point passes on its mean loss and sent "
                "rate), beside each repetition's own; the max of the mean received is the top of the drawn "
                "curve; the ceiling is the most packets/s received in each repetition (mean ± sample SD); "
                "a point whose sender sent < 95 % of the offered rate measured this machine, not the path. "
                "The link limit includes a switch's packet-rate capacity (a link's pps) on the path. "
                "Frame B is the Ethernet frame with its FCS (a 1472-byte payload: 1518 B); a shaper "
                "counts the frame without the FCS (1514 B), and the link limit is computed that way.",
            )
        )
    if multi is not None:
        section.figures += multi.figures
        section.tables += multi.tables
    return section


def _size_figure(
    size: int, by_size: pd.DataFrame, rows: pd.DataFrame, rows_out: list[list[str]], path: Path
) -> Path:
    """Received vs offered of every series at one payload size, with knees and the link's limit;
    each series' summary row is added to rows_out (`rows`: the measurements, for the ceiling)."""
    fig, ax = plt.subplots(figsize=(7, 4))
    top = float(by_size["offered_pps"].max())
    limits = set()
    for series, s in by_size.groupby("series", sort=False):
        s = s.sort_values("offered_pps")
        yerr = [s["received_pps"] - s["received_min"], s["received_max"] - s["received_pps"]]
        line = ax.errorbar(s["offered_pps"], s["received_pps"], yerr=yerr, marker="o", ms=3, label=series)
        ax.plot(s["offered_pps"], s["achieved_pps"], ls="--", lw=0.8, color=line[0].get_color())
        k = knee(s)
        if k is not None:
            ax.axvline(k, color=line[0].get_color(), ls=":", lw=1)
        lim = limit_pps(s["link_rate_bps"].iloc[0], size)
        cap = s["path_pps_limit"].iloc[0]
        if cap is not None and np.isfinite(cap) and cap > 0:  # a switch's packet-rate capacity
            lim = min(lim, float(cap)) if lim is not None else float(cap)
        if lim is not None:
            limits.add(lim)
        top_rx = ceiling(rows, str(series), float(size))
        spread = fmt.MISSING
        if top_rx and top_rx[2] > 1:  # as the Findings quote it: '60.46 ± 0.0043', not '60,457 ± 4'
            spread = f"{_kpps(top_rx[0])} ± {fmt.metric_sd('pps', top_rx[1], unit=False)} (n={top_rx[2]})"
        limited = int((s["achieved_pps"] < KNEE_SENT * s["offered_pps"]).sum())
        per_rep = repetition_knees(rows, str(series), float(size))
        rows_out.append(
            [
                series,
                str(size),
                str(int(frame_bytes(size))),
                _kpps(k) if k is not None else "none passed",
                ", ".join("none passed" if r is None else _kpps(r) for r in per_rep) or fmt.MISSING,
                _kpps(float(s["received_pps"].max())),
                spread,
                _kpps(lim) if lim is not None else "no link-rate limit (unshaped)",
                f"{limited} of {len(s)}" + (" (the sender, i.e. this machine)" if limited else ""),
                fmt.sig(s["loss"].max() * 100, 2),
                fmt.sig(np.nanmax(np.abs(s["achieved_pps"] / s["offered_pps"] - 1)) * 100, 2),
                fmt.sig(s["lateness_p99_ns"].max() / 1e3),
            ]
        )
    ax.plot([0, top], [0, top], color=NEUTRAL, lw=0.8, label="received = offered")
    notes = [] if limits else ["unshaped path: no link-rate limit"]
    for lim in sorted(limits):
        if lim <= 1.5 * top:
            # grey, not black: black is the second series' colour (palette.SERIES)
            label = f"link limit {fmt.metric('pps', lim, True)}"
            ax.axhline(lim, color=NEUTRAL, ls="--", lw=1.2, label=label)
        else:  # drawing it would squash every curve to the axis
            notes.append(f"link limit {fmt.metric('pps', lim, True)}: far above the offered rates")
    if notes:
        ax.text(0.02, 0.95, "\n".join(notes), transform=ax.transAxes, fontsize=8, va="top")
    ax.set_xlabel(f"offered rate ({sweeps_multi.KPPS})")  # as the sweep summary below it
    ax.set_ylabel(f"received rate ({sweeps_multi.KPPS})")
    sweeps_multi.kpps_ticks(ax)
    ax.set_title(
        f"{size}-byte payloads ({frame_bytes(size)}-byte frames); dashed: sent, dotted: knee",
        fontsize=10,
    )
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7)
    return save(fig, path)


# ------------------------------------------------------------------------------------------ traces


def trace_marks(
    values_bps: np.ndarray, offered_bps: float | None, pps: float | None, bin_s: float
) -> tuple[np.ndarray, np.ndarray]:
    """(quiet, burst) masks. Quiet: runs of empty bins lasting at least 2 bins and 3 packet intervals
    (an empty bin alone is normal when fewer than ~2 packets are due per bin). Burst: a bin above
    BURST_FACTOR × the offered rate."""
    empty = values_bps <= 0
    min_bins = max(2, int(np.ceil(3 / (pps * bin_s)))) if pps and bin_s > 0 else 2
    quiet = np.zeros_like(empty)
    for start, length in _runs(empty):
        if length >= min_bins:
            quiet[start : start + length] = True
    burst = values_bps > BURST_FACTOR * offered_bps if offered_bps else np.zeros_like(empty)
    return quiet, burst


def _runs(mask: np.ndarray) -> list[tuple[int, int]]:
    """(start, length) of every run of True."""
    out, start = [], None
    for i, v in enumerate(mask):
        if v and start is None:
            start = i
        elif not v and start is not None:
            out.append((start, i - start))
            start = None
    if start is not None:
        out.append((start, len(mask) - start))
    return out


def _zoom(t: np.ndarray, quiet: np.ndarray, burst: np.ndarray, bin_s: float) -> tuple[float, float]:
    runs = _runs(quiet)
    if runs:
        start, length = max(runs, key=lambda r: r[1])
    else:
        hits = np.flatnonzero(burst)
        start, length = (int(hits[0]), 1) if hits.size else (0, 1)
    centre = t[start] + length * bin_s / 2
    return centre - 0.1, centre + 0.1


def _draw_trace(
    ax: Any,
    t: np.ndarray,
    v: np.ndarray,
    quiet: np.ndarray,
    burst: np.ndarray,
    bin_s: float,
    offered: float | None,
    window: tuple[float, float] | None,
) -> None:
    ax.step(t, v / 1e6, where="post", lw=0.6)
    for start, length in _runs(quiet):
        ax.axvspan(t[start], t[start] + length * bin_s, color="grey", alpha=0.45, lw=0)
    for start, length in _runs(burst):
        ax.axvspan(t[start], t[start] + length * bin_s, color=MAGENTA, alpha=0.4, lw=0)
    if offered:
        ax.axhline(offered / 1e6, color=NEUTRAL, ls="--", lw=1, label="offered")
        ax.legend(fontsize=7, loc="upper right")
    if window:
        ax.set_xlim(*window)
    ax.set_xlabel("time since the first packet was sent (s)")
    ax.set_ylabel(f"Mbit/s per {bin_s * 1e3:g} ms")
    ax.grid(alpha=0.3)


def _beside(frame: pd.DataFrame, row: pd.Series) -> str:
    """What a background flow ran beside: the step's sweep point (' beside sweep a→b, 18 B at 1000
    pps'); '' for a trace of its own. Without it, a background flow's traces of one repetition (one
    per sweep point) all had the same label."""
    if row.get("group_kind") != "background" or "step_key" not in frame:
        return ""
    step = frame[(frame["step_key"] == row["step_key"]) & (frame["kind"] == "pps")]
    if step.empty:
        return ""
    points = []
    for _, p in step.iterrows():
        size, pps = p.get("payload_bytes"), p.get("target_pps")
        point = f" {int(size)} B at {int(pps)} pps" if pd.notna(size) and pd.notna(pps) else ""
        points.append(f"{p['measurement']} {p['src']}→{p['dst']}{point}")
    return " beside " + ", ".join(points)


def _trace_section(ctx: ReportContext, rows: pd.DataFrame) -> Section | None:
    if rows.empty:
        return None
    samples = ctx.store.samples_frame(ctx.campaign_id, ["throughput_bps"], list(rows["id"]))
    if samples.empty:
        return None
    section = Section(
        "Throughput traces",
        "probe-trace",
        intro="Received throughput per trace bin (vnb-probe recv's kernel receive stamps). Quiet periods "
        "(empty bins lasting ≥ 2 bins and ≥ 3 packet intervals) are shaded grey, bursts (bins above "
        f"{BURST_FACTOR} × the offered rate) magenta — the EC2 study's signs of a VM descheduled and then "
        "draining its backlog.",
    )
    table = []
    shown = rows[rows["kind"] == "trace"]
    shown = shown if not shown.empty else rows
    for _, row in shown.head(MAX_TRACES).iterrows():
        s = samples[samples["measurement_id"] == row["id"]].sort_values("t_ns")
        if s.empty:
            continue
        t = s["t_ns"].to_numpy() / 1e9
        v = s["value"].to_numpy()
        bin_s = float(np.median(np.diff(t))) if len(t) > 1 else 0.001
        offered = row.get("offered_bps")
        offered = float(offered) if offered is not None and np.isfinite(offered) else None
        pps = row.get("target_pps")
        pps = float(pps) if pps is not None and np.isfinite(pps) else None
        quiet, burst = trace_marks(v, offered, pps, bin_s)
        label = f"{row['measurement']} {row['src']}→{row['dst']} rep {row['repetition']}"
        label += _beside(ctx.frame, row)
        factors = _factors_label(row.get("factors"))
        fig, axes = plt.subplots(2, 1, figsize=(8, 5.2))
        for ax, window in zip(axes, (None, _zoom(t, quiet, burst, bin_s)), strict=True):
            _draw_trace(ax, t, v, quiet, burst, bin_s, offered, window)
        axes[0].set_title(label + (f" ({factors})" if factors else ""))
        axes[1].set_title("zoom: 200 ms around the longest quiet period (or the first burst)", fontsize=9)
        png = save(fig, ctx.fig_dir / f"probe_trace_{int(row['id'])}")
        section.figures.append(Figure(f"Trace: {label}", png))
        quiet_runs = _runs(quiet)
        table.append(
            [
                label + (f" ({factors})" if factors else ""),
                fmt.sig(bin_s * 1e3),
                fmt.sig(np.median(v) / 1e6),
                fmt.sig(v.max() / 1e6),
                fmt.sig(offered / 1e6) if offered else fmt.MISSING,
                str(int(quiet.sum())),
                fmt.sig(max((n for _, n in quiet_runs), default=0) * bin_s * 1e3),
                str(int(burst.sum())),
                fmt.sig(row.get("send_lateness_max_ns", np.nan) / 1e6),
            ]
        )
    section.tables.append(
        TableView(
            "Quiet periods and bursts",
            [
                "trace",
                "bin ms",
                "median Mbit/s",
                "max Mbit/s",
                "offered Mbit/s",
                "quiet bins",
                "longest quiet ms",
                "burst bins",
                "sender lateness max ms",
            ],
            table,
            note="A quiet period the sender did not cause (its lateness max is small) happened on the path "
            "or at the receiver."
            + (f" The first {MAX_TRACES} of {len(shown)} traces." if len(shown) > MAX_TRACES else ""),
        )
    )
    return section


# ------------------------------------------------------------------------------------------ cpushare


def _cpushare_section(rows: pd.DataFrame, fig_dir: Path) -> Section | None:
    if rows.empty:
        return None
    section = Section(
        "CPU share",
        "probe-cpushare",
        intro="vnb-probe cpushare: a loop reading the clock; every step above the threshold is time off the "
        "CPU. Share = 1 − Σ gaps / wall. rusage is what the node's kernel accounted to the loop; steal is "
        "/proc/stat's over the run.",
    )
    table = []
    labels, values = [], []
    few_gaps = False
    for (node, mname), g in rows.groupby(["src", "measurement"], sort=False):
        share = _col(g, "cpu_share_ratio")
        labels.append(f"{node} ({mname})")
        values.append(100 * share.to_numpy())
        # a p99 of a run's gaps needs 100 of them; of 13 (an unlimited node) it is the largest
        p99_whole = bool((_col(g, "gaps_count") >= GAP_P99_MIN).all())
        few_gaps |= not p99_whole
        table.append(
            [
                node,
                mname,
                str(len(g)),
                # in %, as the Findings give the share (45.2 %, where this table said 0.452)
                _percent(share.median()),  # 45.0 – 45.4, not 45 – 45.4
                f"{_percent(share.min())} – {_percent(share.max())}",
                _percent(_col(g, "rusage_cpu_ratio").median()),
                _percent(_col(g, "steal_ratio").median()),
                fmt.sig(_col(g, "gaps_count").median()),
                fmt.sig(_col(g, "gap_p99_ns").median() / 1e6) if p99_whole else fmt.MISSING,
                fmt.sig(_col(g, "gap_max_ns").max() / 1e6),
            ]
        )
    fig, ax = plt.subplots(figsize=(6, 0.6 + 0.5 * len(labels)))
    ax.boxplot(values, orientation="horizontal", tick_labels=labels)
    ax.set_xlim(0, 105)
    ax.set_xlabel("share of time on a CPU (%)")
    ax.grid(alpha=0.3)
    section.figures.append(Figure("CPU share per node", save(fig, fig_dir / "probe_cpushare")))
    section.tables.append(
        TableView(
            "CPU share per node",
            [
                "node",
                "measurement",
                "runs",
                "share, median (%)",
                "share, min – max (%)",
                "rusage (%)",
                "steal (%)",
                "gaps (median per run)",
                "gap p99 ms",
                "gap max ms",
            ],
            table,
            f"gap p99 is left out ({fmt.MISSING}) for a node with a run of fewer than {GAP_P99_MIN} gaps: "
            "of fewer, the 99th percentile is the largest gaps interpolated, not one 1 % of gaps exceed."
            if few_gaps
            else "",
        )
    )
    return section


GAP_P99_MIN = 100  # 1 / (1 − 0.99): the fewest gaps of which one can lie above their 99th percentile


def _percent(ratio: float) -> str:
    """A share of time as a percentage with three digits, its zeros kept: 45.0, 99.9, 0."""
    return fmt.metric("cpu_share_ratio", ratio)


# ------------------------------------------------------------------------------------------ rtt


def _rtt_section(ctx: ReportContext, rows: pd.DataFrame) -> Section | None:
    if rows.empty:
        return None
    samples = ctx.store.samples_frame(ctx.campaign_id, ["rtt_ns"], list(rows["id"]))
    section = Section(
        "UDP round-trip time (vnb-probe)",
        "probe-rtt",
        intro="Isochronous probes (vnb-probe rtt → echo) with the echo's processing time removed; every "
        "probe of every repetition, per connection (the EC2 study's min/median/mean/max/SD).",
    )
    table, series = [], {}
    for (src, dst, mname), g in rows.groupby(["src", "dst", "measurement"], sort=False):
        v = samples[samples["measurement_id"].isin(g["id"])]["value"].to_numpy() / 1e6
        if v.size == 0:
            continue
        label = f"{src}→{dst} ({mname})"
        series[label] = np.sort(v)
        sent = _col(g, "sent_packets").sum()
        lost = _col(g, "lost_packets").sum()
        table.append(
            [
                label,
                str(v.size),
                fmt.sig(v.min()),
                fmt.sig(np.median(v)),
                fmt.sig(v.mean()),
                fmt.sig(v.max()),
                fmt.sig(v.std(ddof=1) if v.size > 1 else np.nan),
                fmt.sig(lost / sent * 100 if sent else np.nan, 2),
                fmt.sig(_col(g, "send_lateness_p99_ns").max() / 1e3),
            ]
        )
    if not table:
        return None
    fig, ax = plt.subplots(figsize=(6, 3.4))
    for label, v in series.items():
        ax.step(v, np.arange(1, v.size + 1) / v.size, where="post", label=label)
    ax.set_xscale("log")
    ax.set_xlabel("RTT (ms)")
    ax.set_ylabel("fraction of probes")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7)
    section.figures.append(Figure("CDF of UDP RTT per connection", save(fig, ctx.fig_dir / "probe_rtt_cdf")))
    section.tables.append(
        TableView(
            "UDP RTT per connection (ms)",
            ["connection", "probes", "min", "median", "mean", "max", "SD", "loss %", "send lateness p99 µs"],
            table,
        )
    )
    return section
