"""Packet-rate sweeps of flows started at the same moment (a parallel pattern's tenants).

Every sweep point of such a pattern is one step whose N flows started behind one barrier, each
stored as its own measurement. Per group (pattern · measurement, and factor levels) and payload
size this draws two panels:

- per flow: every flow's received rate (thin) and the mean per flow (thick) against the rate
  offered to each flow, beside the same pair swept alone (N = 1, black);
- aggregate: the flows' received rates summed per step against the total offered (N × the rate per
  flow), beside the alone sweep against its own offered rate: flows that share one saturation limit
  meet the single flow's plateau (the OpenStack study's "30 Kpps + 30 Kpps < 80 Kpps").

The alone reference is a single or alone step of the same measurement on one of the group's pairs
without background flows, from the same pattern if it has one (`alone: true`), else from any other.
The table gives every point: mean, min and max per flow, the aggregate, Jain's index of the flows'
received rates, the worst loss and the spread of the start barrier's release.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from matplotlib.ticker import FuncFormatter

from vnetbench.analysis.cpu import SATURATED_BUSY, saturated
from vnetbench.analysis.fairness import jain_index
from vnetbench.kinds.overhead import frame_bytes
from vnetbench.report import format as fmt
from vnetbench.report.figures import FILLS, plt, save
from vnetbench.report.view import Figure, TableView

TOGETHER = ("together", "parallel")
REF_STYLES = ((":", "s"), ("-.", "^"), ((0, (1, 3)), "D"))  # the alone references: black, told apart
KPPS = fmt.display_unit("pps").label  # "K pps": the unit of the probe section's sweep table and the Findings
SATURATED = 0.95  # a flow alone saturated when it received less than this share of its top offered rate
COLUMNS = (
    "payload_bytes",
    "target_pps",
    "received_pps",
    "achieved_pps",
    "loss_ratio",
    "start_skew_ns",
    "host_busy_ratio",  # analysis.cpu.with_host_busy; NaN without telemetry
)


@dataclass
class MultiPart:
    intro: str
    figures: list[Figure] = field(default_factory=list)
    tables: list[TableView] = field(default_factory=list)
    items: list[str] = field(default_factory=list)  # where the machine, not the network, was the limit


def is_together(rows: pd.DataFrame) -> pd.Series:
    """Rows of flows that ran with other flows of the same sweep (not background flows)."""
    if rows.empty:
        return pd.Series(False, index=rows.index)
    return rows["group_kind"].isin(TOGETHER) & (rows["group_size"].fillna(1) > 1)


def _factors(value: Any) -> str:
    if isinstance(value, dict) and value:
        return ", ".join(f"{k}={v}" for k, v in sorted(value.items()))
    return ""


def _with_columns(rows: pd.DataFrame) -> pd.DataFrame:
    out = rows.copy()
    for col in COLUMNS:
        if col not in out:
            out[col] = np.nan
    out["group"] = [
        f"{p}: {m}" + (f" · {_factors(f)}" if _factors(f) else "")
        for p, m, f in zip(
            out["pattern"], out["measurement"], out.get("factors", [None] * len(out)), strict=True
        )
    ]
    out["flow"] = out["src"] + "→" + out["dst"]
    return out.dropna(subset=["payload_bytes", "target_pps"])


def step_table(rows: pd.DataFrame) -> pd.DataFrame:
    """One row per step (a sweep point of one repetition): flows, aggregate, Jain, worst loss, skew."""
    out = []
    for (group, size, pps, step), g in rows.groupby(["group", "payload_bytes", "target_pps", "step_key"]):
        received = g["received_pps"].to_numpy(dtype=float)
        fair = received[np.isfinite(received)]
        out.append(
            {
                "group": group,
                "size": int(size),
                "offered_pps": float(pps),
                "step_key": step,
                "flows": len(g),
                "aggregate_pps": float(np.nansum(received)),
                "aggregate_sent_pps": float(np.nansum(g["achieved_pps"].to_numpy(dtype=float))),
                "jain": jain_index(fair) if fair.size and (fair >= 0).all() and fair.sum() > 0 else np.nan,
                "loss_max": float(g["loss_ratio"].max()),
                "skew_ns": float(g["start_skew_ns"].max()),
                "host_busy": float(g["host_busy_ratio"].max()),
            }
        )
    return pd.DataFrame(out)


def reference(
    all_rows: pd.DataFrame, group_rows: pd.DataFrame, background_steps: set[str]
) -> tuple[pd.DataFrame, str | None]:
    """Mean received and sent per (size, offered) of one of the group's pairs swept alone (in a step
    without background flows)."""
    alone = _with_columns(all_rows[all_rows["group_kind"].isin(["single", "alone"])])
    if alone.empty:
        return pd.DataFrame(), None
    first = group_rows.iloc[0]
    alone = alone[
        (alone["measurement"] == first["measurement"])
        & alone["flow"].isin(set(group_rows["flow"]))
        & ~alone["step_key"].isin(background_steps)
    ]
    if "factors" in alone and "factors" in group_rows:
        alone = alone[[_factors(f) == _factors(first["factors"]) for f in alone["factors"]]]
    if alone.empty:
        return pd.DataFrame(), None
    same = alone[alone["pattern"] == first["pattern"]]
    chosen = same if not same.empty else alone
    pattern = chosen["pattern"].iloc[0]
    chosen = chosen[chosen["pattern"] == pattern]
    flow = chosen["flow"].iloc[0] if chosen["flow"].nunique() == 1 else f"{chosen['flow'].nunique()} pairs"
    pts = chosen.groupby(["payload_bytes", "target_pps"], as_index=False).agg(
        received_pps=("received_pps", "mean"), achieved_pps=("achieved_pps", "mean")
    )
    return pts, f"one flow alone ({pattern}: {flow})"


def multi_flow_part(
    all_rows: pd.DataFrame, fig_dir: Path, background_steps: set[str] | None = None
) -> MultiPart | None:
    """Figures and tables of the flows in `all_rows` (a campaign's ok `pps` rows) that ran together;
    `background_steps`: keys of steps that had background flows (their single flows are no reference)."""
    rows = _with_columns(all_rows[is_together(all_rows)])
    if rows.empty:
        return None
    per_flow = rows.groupby(["group", "payload_bytes", "target_pps", "flow"], as_index=False).agg(
        received_pps=("received_pps", "mean")
    )
    sweep = _Sweep(all_rows, rows, step_table(rows), per_flow, background_steps or set())
    part = MultiPart(
        "Flows swept at the same moment (parallel patterns: one step per point, N flows behind one "
        "barrier) have figures of their own: left, every flow's received rate (thin) and the mean per "
        "flow (thick) against the rate offered to each; right, the flows' received rates summed against "
        "the total offered — beside one of the same pairs swept alone (black), so a shared "
        "saturation limit shows as an aggregate that meets the single flow's plateau."
    )
    for size in sorted(rows["payload_bytes"].unique()):
        size_i = int(size)
        png = _size_figure(sweep, size, fig_dir / f"probe_pps_multi_{size_i}")
        part.figures.append(
            Figure(f"Simultaneous flows: per flow and aggregate, {size_i}-byte payloads", png)
        )
    table, summary = sweep.table, sweep.summary
    part.tables.append(
        TableView(
            "Simultaneous flows: saturation shared",
            [
                "group",
                "flows",
                "payload B",
                "max mean per flow (K pps)",
                "max aggregate (K pps)",
                "max of one flow alone (K pps)",
                "alone saturated",
                "aggregate / alone",
                "steps with host CPU saturated",
            ],
            summary,
            note="Aggregate / alone near 1: the flows share the limit one flow reaches alone; above 1 the "
            "path had capacity one flow could not use; below 1 the flows together got less than one alone. "
            "The alone maximum is a limit only where the flow alone saturated (received < 95 % of its top "
            "offered rate); otherwise it is just the top offered rate. Steps with host CPU saturated: "
            f"steps during which the host's CPU was {SATURATED_BUSY} busy.",
        )
    )
    part.tables.append(
        TableView(
            "Simultaneous flows per sweep point",
            [
                "group",
                "flows",
                "payload B",
                "offered per flow (K pps)",
                "received per flow, mean (K pps)",
                "per flow min – max (K pps)",
                "one flow alone (K pps)",
                "mean per flow / alone %",
                "aggregate received (K pps)",
                "total offered (K pps)",
                "Jain",
                "max loss %",
                "start skew ms",
                "host CPU busy % (max)",
            ],
            table,
            note="Means over repetitions. Jain's index of the flows' received rates per step, then its mean; "
            "start skew: the spread of the barrier's release over the step's flows (worst repetition); "
            f"host CPU: the busiest repetition's share of the host's CPU time ({SATURATED_BUSY}: "
            "the machine itself may have set the point — senders, receivers and the forwarding softirqs "
            "share its cores).",
        )
    )
    part.items = _machine_items(sweep.steps)
    return part


def _machine_items(steps: pd.DataFrame) -> list[str]:
    """Name the groups whose points ran on a saturated host: their aggregate is this machine's."""
    items = []
    for group, g in steps.groupby("group", sort=False):
        hot = g[saturated(g["host_busy"])]
        if len(hot):
            items.append(
                f"Machine as bottleneck: {group}: in {len(hot)} of {len(g)} steps of simultaneous flows the "
                f"host's CPU was {SATURATED_BUSY} busy (up to {_kpps(hot['offered_pps'].max(), True)} "
                "offered per flow). There, senders, receivers and the forwarding softirqs "
                "competed for the same cores: the received rates say what this machine forwarded, not "
                "what the switch can."
            )
    return items


def _kpps(pps: Any, unit: bool = False) -> str:
    """A packet rate as the probe section's sweep table and the Findings write it: in K pps with the
    metric's digits, 60457 -> '60.46' (`unit`: '60.46 K pps'); '–' when missing."""
    return fmt.metric("pps", None if pps is None else float(pps), unit)


def kpps_ticks(ax: Any) -> None:
    """Both axes of a figure drawn in packets/s ticked in K pps, as their labels say (and the tables)."""
    for axis in (ax.xaxis, ax.yaxis):
        axis.set_major_formatter(FuncFormatter(lambda v, _: f"{v / 1000:g}" if v else "0"))


@dataclass
class _Sweep:
    """The simultaneous flows of a campaign's sweeps, and the table rows made from them so far."""

    all_rows: pd.DataFrame
    rows: pd.DataFrame  # flows that ran together, with the columns of COLUMNS
    steps: pd.DataFrame  # step_table(rows)
    per_flow: pd.DataFrame  # mean received rate per group, size, offered rate and flow
    background_steps: set[str]
    table: list[list[str]] = field(default_factory=list)
    summary: list[list[str]] = field(default_factory=list)

    @property
    def groups(self) -> list[str]:
        return list(dict.fromkeys(self.rows["group"]))


def _size_figure(sweep: _Sweep, size: Any, path: Path) -> Path:
    """One payload size: per-flow (left) and aggregate (right) panels of every group."""
    size_i = int(size)
    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4.2))
    top_flow = top_total = 0.0
    refs_drawn: list[str] = []
    colours = {g: FILLS[i % len(FILLS)] for i, g in enumerate(sweep.groups)}  # black: the alone references
    for group in sweep.groups:
        g_rows = sweep.rows[(sweep.rows["group"] == group) & (sweep.rows["payload_bytes"] == size)]
        if g_rows.empty:
            continue
        tops = _draw_group(sweep, group, size, g_rows, (left, right), colours[group], refs_drawn)
        top_flow, top_total = max(top_flow, tops[0]), max(top_total, tops[1])
    left.plot([0, top_flow], [0, top_flow], color="grey", lw=0.8, label="received = offered")
    right.plot([0, top_total], [0, top_total], color="grey", lw=0.8)
    left.set_xlabel(f"offered rate per flow ({KPPS})")
    left.set_ylabel(f"received rate per flow ({KPPS})")
    left.set_title("per flow: thin = each flow, thick = mean per flow", fontsize=9)
    right.set_xlabel(f"total offered rate ({KPPS})")
    right.set_ylabel(f"aggregate received rate ({KPPS})")
    right.set_title("aggregate: sum of the flows (dashed: sent)", fontsize=9)
    for ax in (left, right):
        ax.grid(alpha=0.3)
        kpps_ticks(ax)
    left.legend(fontsize=7)
    right.legend(fontsize=7)
    fig.suptitle(
        f"Simultaneous flows, {size_i}-byte payloads ({frame_bytes(size_i)}-byte frames)", fontsize=10
    )
    return save(fig, path)


def _draw_group(
    sweep: _Sweep,
    group: str,
    size: Any,
    g_rows: pd.DataFrame,
    axes: tuple[Any, Any],
    colour: Any,
    refs: list[str],
) -> tuple[float, float]:
    """Draw one group at one size, add its table and summary rows; returns the largest offered rates
    (per flow, total) drawn. `refs`: labels of the alone references drawn so far in this figure."""
    left, right = axes
    size_i = int(size)
    n = int(g_rows.groupby("step_key").size().max())
    flows = sweep.per_flow[(sweep.per_flow["group"] == group) & (sweep.per_flow["payload_bytes"] == size)]
    for _, f in flows.groupby("flow", sort=False):
        f = f.sort_values("target_pps")
        left.plot(f["target_pps"], f["received_pps"], color=colour, lw=0.7, alpha=0.55)
    st = sweep.steps[(sweep.steps["group"] == group) & (sweep.steps["size"] == size_i)]
    agg = st.groupby("offered_pps", as_index=False).agg(
        aggregate_pps=("aggregate_pps", "mean"),
        aggregate_sent_pps=("aggregate_sent_pps", "mean"),
        flows=("flows", "max"),
        jain=("jain", "mean"),
        loss_max=("loss_max", "max"),
        skew_ns=("skew_ns", "max"),
        host_busy=("host_busy", "max"),
        saturated_steps=("host_busy", lambda b: int(saturated(b).sum())),
        steps=("host_busy", "count"),  # steps with a CPU reading
    )
    x = agg["offered_pps"].to_numpy()
    left.plot(x, agg["aggregate_pps"] / agg["flows"], color=colour, lw=2.2, marker="o", ms=4,
              label=f"{group} ({n} flows): mean per flow")  # fmt: skip
    total = x * agg["flows"]
    right.plot(total, agg["aggregate_pps"], color=colour, lw=2, marker="o", ms=4,
               label=f"{group} ({n} flows): received")  # fmt: skip
    right.plot(total, agg["aggregate_sent_pps"], color=colour, lw=0.8, ls="--")
    ref, ref_label = reference(sweep.all_rows, g_rows, sweep.background_steps)
    ref = ref[ref["payload_bytes"] == size] if not ref.empty else ref
    if not ref.empty and ref_label and ref_label not in refs:
        ls, marker = REF_STYLES[len(refs) % len(REF_STYLES)]
        refs.append(ref_label)
        ref = ref.sort_values("target_pps")
        for ax in (left, right):
            ax.plot(ref["target_pps"], ref["received_pps"], color="black", ls=ls, marker=marker, ms=4,
                    lw=1.2, label=ref_label if ax is left else None)  # fmt: skip
    sweep.table += _point_rows(group, size_i, agg, flows, ref)
    sweep.summary.append(_summary_row(group, n, size_i, agg, ref))
    return float(x.max()), float(total.max())


def _point_rows(
    group: str, size: int, agg: pd.DataFrame, flows: pd.DataFrame, ref: pd.DataFrame
) -> list[list[str]]:
    """One row per sweep point of a group: per flow, against the flow alone, aggregate, Jain, loss, skew."""
    ref_at = dict(zip(ref["target_pps"], ref["received_pps"], strict=True)) if not ref.empty else {}
    out = []
    for _, p in agg.iterrows():
        at = flows[flows["target_pps"] == p["offered_pps"]]["received_pps"]
        alone = ref_at.get(p["offered_pps"])
        mean = p["aggregate_pps"] / p["flows"]
        out.append(
            [
                group,
                str(int(p["flows"])),
                str(size),
                _kpps(p["offered_pps"]),
                _kpps(mean),
                f"{_kpps(at.min())} – {_kpps(at.max())}",
                _kpps(alone),
                fmt.sig(mean / alone * 100 if alone else np.nan),
                _kpps(p["aggregate_pps"]),
                _kpps(p["offered_pps"] * p["flows"]),
                fmt.sig(p["jain"], 4),
                fmt.sig(p["loss_max"] * 100, 2),
                fmt.sig(p["skew_ns"] / 1e6, 2),
                fmt.sig(p["host_busy"] * 100, 3),
            ]
        )
    return out


def _summary_row(group: str, n: int, size: int, agg: pd.DataFrame, ref: pd.DataFrame) -> list[str]:
    """A group at one size: its maxima against the flow alone, and whether the flow alone saturated."""
    alone_max = float(ref["received_pps"].max()) if not ref.empty else np.nan
    saturated = fmt.MISSING
    if not ref.empty:
        top = ref.loc[ref["target_pps"].idxmax()]
        saturated = "yes" if top["received_pps"] < SATURATED * top["target_pps"] else "no"
    agg_max = float(agg["aggregate_pps"].max())
    return [
        group,
        str(n),
        str(size),
        _kpps(float((agg["aggregate_pps"] / agg["flows"]).max())),
        _kpps(agg_max),
        _kpps(alone_max),
        saturated,
        fmt.sig(agg_max / alone_max if np.isfinite(alone_max) and alone_max else np.nan),
        f"{int(agg['saturated_steps'].sum())} of {int(agg['steps'].sum())}"
        if agg["steps"].sum()
        else fmt.MISSING,
    ]
