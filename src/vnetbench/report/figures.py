"""The report's figures (matplotlib, Agg). Each function writes PNG + SVG and returns the PNG path.

Importing this module sets matplotlib's colour cycle to vnetbench's palette (src/vnetbench/palette.py,
the live dashboard's too): every report module that draws imports `plt` from here."""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from vnetbench.analysis.descriptive import Competition
from vnetbench.layout.objects import DEFAULT_HOST, DEFAULT_SITE
from vnetbench.palette import BLACK, BLUE, MAGENTA, NEUTRAL, SERIES
from vnetbench.report.cycle import use_palette

# lines drawn without a colour of their own take the palette's, in its order (C0 is its blue)
use_palette()
# bars and areas beside black reference marks: the palette without its black
FILLS = tuple(c for c in SERIES if c != BLACK)

PLACEMENT_STYLE = {"same-host": "-", "same-site": "--", "cross-site": ":"}
# Points per line at most: a 7-inch figure is ~800 pixels wide, and a line of millions of points
# (a long campaign's replies) takes seconds to draw and megabytes of SVG for nothing more to see.
MAX_POINTS = 4000


def thin_cdf(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """A sorted sample's empirical CDF (x, F(x)) at no more than MAX_POINTS of its points, evenly
    spaced in rank; first and last kept, so the curve's ends and every kept step are exact."""
    y = np.arange(1, x.size + 1) / x.size
    if x.size <= MAX_POINTS:
        return x, y
    keep = np.unique(np.linspace(0, x.size - 1, MAX_POINTS).round().astype(np.int64))
    return x[keep], y[keep]


def thin_series(t: np.ndarray, v: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """A time series of more than MAX_POINTS points as the means of consecutive blocks of equal
    length (each at its block's first time)."""
    if t.size <= MAX_POINTS:
        return t, v
    edges = np.linspace(0, t.size, MAX_POINTS + 1).round().astype(np.int64)[:-1]
    sums = np.add.reduceat(np.nan_to_num(v), edges)
    counts = np.add.reduceat(~np.isnan(v), edges)
    with np.errstate(invalid="ignore", divide="ignore"):
        return t[edges], sums / counts


def closed_steps(t: np.ndarray, v: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """A series of interval values, each at its interval's start (the drivers' sample times), with
    the last interval's end added: a 'post' step ends at the last point, so the last interval showed
    as a bare vertical tick (a 6 s TCP run drawn from 1 to 5 s, its last second's 22.3 Mbit/s
    invisible; quickstart d1453f96). The end is the last start plus the median interval."""
    if t.size < 2:
        return t, v
    return np.append(t, t[-1] + float(np.median(np.diff(t)))), np.append(v, v[-1])


def save(fig: plt.Figure, path: Path) -> Path:
    """Write the figure as PNG and SVG beside each other; returns the PNG's path."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with warnings.catch_warnings():
        # very long labels (a user's node names) can defeat tight_layout; the tight bounding box
        # below still keeps every label in the file, so its warning would only alarm a user
        warnings.filterwarnings("ignore", "Tight layout not applied", UserWarning)
        fig.tight_layout()
    fig.savefig(path.with_suffix(".png"), dpi=110, bbox_inches="tight")  # legends outside the axes too
    fig.savefig(path.with_suffix(".svg"), bbox_inches="tight")
    plt.close(fig)
    return path.with_suffix(".png")


def spans_decades(values: np.ndarray, decades: float = 1.5) -> bool:
    """True when positive values span more than `decades` powers of ten: a linear axis would squash
    the smaller ones against zero."""
    v = values[np.isfinite(values) & (values > 0)]
    return bool(v.size) and float(np.log10(v.max() / v.min())) > decades


def with_margin(ax: plt.Axes, top: float, bottom: float = 0.0, share: float = 0.12) -> None:
    """A y axis from `bottom` that holds the data with room above it: a line at the data's maximum
    does not sit on the frame."""
    if np.isfinite(top) and top > bottom:
        ax.set_ylim(bottom, top + share * (top - bottom))


def cdf(
    series: Mapping[str, np.ndarray | pd.Series],
    xlabel: str,
    title: str,
    path: Path,
    styles: Mapping[str, str] | None = None,
) -> Path:
    """Empirical CDFs of several series in one figure."""
    fig, ax = plt.subplots(figsize=(7, 4))
    everything = [np.asarray(pd.Series(v).dropna(), dtype=float) for v in series.values()]
    log = spans_decades(np.concatenate(everything) if everything else np.array([]))
    for label, values in series.items():
        x = np.sort(np.asarray(pd.Series(values).dropna(), dtype=float))
        if x.size == 0:
            continue
        shown_x, shown_y = thin_cdf(x)
        ax.step(
            shown_x,
            shown_y,
            where="post",
            label=f"{label} (n={x.size})",
            linestyle=(styles or {}).get(label, "-"),
            marker="o" if x.size <= 20 else None,  # a CDF of one or two values is otherwise invisible
            markersize=3,
        )
    if log:  # same-host RTTs of 0.05 ms beside cross-site ones of 65 ms: both visible
        ax.set_xscale("log")
        xlabel += ", log scale"
    ax.set_xlabel(xlabel)
    ax.set_ylabel("fraction ≤ x")
    ax.set_ylim(0, 1.02)
    ax.set_title(title)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8, loc="lower right")
    return save(fig, path)


def per_repetition(
    frame: pd.DataFrame,
    metric: str,
    scale: float,
    ylabel: str,
    title: str,
    path: Path,
    reference: Mapping[str, float] | None = None,
) -> Path:
    """One line per connection: the metric in every repetition (ExoGENI Figures 12–13)."""
    lines = repetition_lines(frame, metric, scale)
    legend_rows = -(-len(lines) // 3)
    fig, ax = plt.subplots(figsize=(7, 3.6 + 0.22 * legend_rows))  # the legend goes below the axes
    top = 0.0
    for label, x, y in lines:
        ax.plot(x, y, marker="o", markersize=3, label=label)
        top = max(top, float(np.nanmax(y)) if len(y) else 0.0)
    for label, value in (reference or {}).items():
        ax.axhline(value, color="grey", linestyle="--", linewidth=1)
        ax.annotate(label, (ax.get_xlim()[0], value), fontsize=7, color="grey", va="bottom")
    ax.set_xlabel("repetition")
    ax.set_ylabel(ylabel)
    # from 0 (a zoomed axis makes a 1 % wiggle look like a collapse), with room above the highest line
    with_margin(ax, max([top, *(reference or {}).values()]))
    ax.set_title(title)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8, loc="upper center", bbox_to_anchor=(0.5, -0.16), ncol=min(3, max(1, len(lines))))
    ax.xaxis.get_major_locator().set_params(integer=True)
    return save(fig, path)


Line = tuple[str, np.ndarray, np.ndarray]


def repetition_lines(frame: pd.DataFrame, metric: str, scale: float) -> list[Line]:
    """(label, repetitions, values ÷ `scale`) of each line of per_repetition: one per connection (and
    measurement, treatment where there are several), and one per pattern where several patterns
    measured a connection in one repetition — one line through both of a repetition's values drew a
    vertical zig-zag that read as one flow (quickstart: vm1→vm2 by 'connections' and the star)."""
    several = "measurement" in frame and frame["measurement"].nunique() > 1
    keys = ["measurement", "src", "dst"] if several else ["src", "dst"]
    treatments = "treatment" in frame  # a designed campaign: one line per connection and treatment
    keys += ["treatment"] if treatments else []
    per_repetition = frame.groupby([*keys, "repetition"])["pattern"] if "pattern" in frame else None
    patterns = per_repetition is not None and bool(per_repetition.nunique().gt(1).any())
    lines = []
    for key, group in frame.groupby(keys + (["pattern"] if patterns else []), sort=False):
        group = group.sort_values("repetition")
        inner = ([key[0]] if several else []) + ([key[len(keys) - 1]] if treatments else [])
        inner += [key[-1]] if patterns else []
        src, dst = key[keys.index("src")], key[keys.index("dst")]
        label = f"{src}→{dst}" + (f" ({', '.join(map(str, inner))})" if inner else "")
        x = group["repetition"].to_numpy()
        lines.append((label, x, group[metric].to_numpy(dtype=float) / scale))
    return lines


def model_ratio(table: pd.DataFrame, title: str, path: Path) -> Path:
    """Measured mean throughput as a share of the overhead-model maximum, per connection."""
    fig, ax = plt.subplots(figsize=(7, 1.6 + 0.4 * len(table)))  # room for title and axis label
    treatments = "treatment" in table
    labels = [
        f"{r['src']}→{r['dst']} ({r['measurement']}" + (f", {r['treatment']})" if treatments else ")")
        for r in table.to_dict("records")
    ]
    values = table["of_model_max"].to_numpy() * 100
    bars = ax.barh(labels, values, color=BLUE)
    ax.axvline(100, color="black", linewidth=1)
    for bar, value in zip(bars, values, strict=True):
        ax.text(
            bar.get_width() + 0.5,
            bar.get_y() + bar.get_height() / 2,
            f"{value:.1f} %",
            va="center",
            fontsize=8,
        )
    ax.set_xlim(0, max(110, float(np.nanmax(values)) + 10) if len(values) else 110)
    ax.set_xlabel("% of the overhead-model maximum goodput")
    ax.set_title(title)
    ax.invert_yaxis()
    return save(fig, path)


def competition_bars(
    comp: Competition, scale: float, unit: str, path: Path, treatment: str | None = None
) -> Path:
    """Each flow's mean alone and together, as paired bars (and the link's rate)."""
    fig, ax = plt.subplots(figsize=(7, 3.6))
    labels = [f"{f.src}→{f.dst}" for f in comp.flows]
    x = np.arange(len(labels))
    ax.bar(x - 0.2, [f.alone_mean / scale for f in comp.flows], 0.4, label="alone", color=BLUE)
    ax.bar(x + 0.2, [f.together_mean / scale for f in comp.flows], 0.4, label="together", color=MAGENTA)
    if comp.link_rate and comp.metric == "throughput_bps":
        share = comp.sum_together / len(comp.flows) / scale
        ax.axhline(share, color=NEUTRAL, linestyle="--", linewidth=1, label="equal share of the sum together")
    ax.set_xticks(x, labels)
    ax.set_ylim(0, ax.get_ylim()[1] * 1.3)  # room for the legend above the bars
    ax.set_ylabel(unit)
    name = f"{comp.pattern} · {comp.measurement}" + (f"\n{treatment}" if treatment else "")
    ax.set_title(f"{name}: alone vs together (Jain {comp.jain_mean:.3f})", fontsize=10 if treatment else None)
    ax.legend(fontsize=8)
    ax.grid(alpha=0.3, axis="y")
    return save(fig, path)


def timeseries(
    samples: pd.DataFrame,
    labels: Mapping[int, str],
    metric: str,
    scale: float,
    ylabel: str,
    title: str,
    path: Path,
) -> Path:
    """Time series of one metric of several measurements, as steps from each one's start."""
    fig, ax = plt.subplots(figsize=(7, 3.4))
    _steps(ax, samples, labels, metric, scale)
    ax.set_xlabel("time since the flow started (s)")
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.legend(fontsize=8)
    return save(fig, path)


def _steps(ax: plt.Axes, samples: pd.DataFrame, labels: Mapping[int, str], metric: str, scale: float) -> None:
    """One step line per measurement; the y axis from 0 with room above (a flat line at the top of
    the axis would hide in its frame)."""
    top = 0.0
    for mid, label in labels.items():
        s = samples[
            (samples["measurement_id"] == mid) & (samples["metric"] == metric) & samples["stream"].isna()
        ]
        s = s.sort_values("t_ns")
        t, v = closed_steps(
            *thin_series(s["t_ns"].to_numpy() / 1e9, s["value"].to_numpy(dtype=float) / scale)
        )
        ax.step(t, v, where="post", label=label)
        top = max(top, float((s["value"] / scale).max())) if len(s) else top
    ax.set_ylim(0, top * 1.15 if top > 0 else None)
    ax.grid(alpha=0.3)


def timeseries_grid(
    panels: list[tuple[str, Mapping[int, str]]],
    samples: pd.DataFrame,
    metric: str,
    scale: float,
    ylabel: str,
    title: str,
    path: Path,
) -> Path:
    """Small multiples of `timeseries`: one panel per treatment, on a shared y axis."""
    cols = min(2, len(panels))
    rows = -(-len(panels) // cols)
    fig, axes = plt.subplots(rows, cols, figsize=(10, 0.6 + 2.3 * rows), sharey=True, squeeze=False)
    for ax, (label, labels) in zip(axes.flat, panels, strict=False):
        _steps(ax, samples, labels, metric, scale)
        ax.set_title(label, fontsize=9)
        ax.legend(fontsize=7, loc="lower right")
    for ax in list(axes.flat)[len(panels) :]:
        ax.axis("off")
    for ax in axes[-1]:
        ax.set_xlabel("time since the flow started (s)")
    for ax in axes[:, 0]:
        ax.set_ylabel(ylabel)
    fig.suptitle(title, fontsize=11)
    return save(fig, path)


def competition_by_treatment(
    entries: list[tuple[str, Competition, float | None]], scale: float, unit: str, title: str, path: Path
) -> Path:
    """One bar per treatment: the flows' throughput together stacked, and a tick at the overhead-model
    maximum of the link they share (or of each flow's own link, when they share none)."""
    fig, ax = plt.subplots(figsize=(8, 1.2 + 0.45 * len(entries)))
    names = list(dict.fromkeys(f"{f.src}→{f.dst}" for _, comp, _ in entries for f in comp.flows))
    shown: set[str] = set()
    for y, (_, comp, model) in enumerate(entries):
        left = 0.0
        for f in comp.flows:
            name = f"{f.src}→{f.dst}"
            value = f.together_mean / scale
            ax.barh(y, value, left=left, color=FILLS[names.index(name) % len(FILLS)], edgecolor="white",
                    label=None if name in shown else name)  # fmt: skip
            shown.add(name)
            left += value
        if model:
            label = None if "model" in shown else "model max of the shared link"
            ax.plot([model / scale] * 2, [y - 0.45, y + 0.45], color="black", linewidth=2, label=label)
            shown.add("model")
    ax.set_yticks(range(len(entries)), [label for label, _, _ in entries], fontsize=8)
    ax.invert_yaxis()
    ax.set_xlabel(f"throughput together ({unit}), stacked per flow")
    ax.set_title(title, fontsize=10)
    ax.grid(alpha=0.3, axis="x")
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1))
    return save(fig, path)


def _draw_link(ax: Any, link: dict, pos: dict[str, tuple[float, float]]) -> None:
    """One link of the topology figure: an arc between two nodes of a row, else a straight line."""
    a, b = link["endpoints"]
    if a not in pos or b not in pos:
        return
    (x1, y1), (x2, y2) = pos[a], pos[b]
    style = ":" if link.get("overlay") else "-"
    if y1 == y2:  # node to node: an arc over the row (a quadratic Bezier curve)
        t = np.linspace(0, 1, 30)
        cy = y1 + 2 * (0.35 + 0.12 * abs(x2 - x1))
        xs = (1 - t) ** 2 * x1 + 2 * (1 - t) * t * (x1 + x2) / 2 + t**2 * x2
        ys = (1 - t) ** 2 * y1 + 2 * (1 - t) * t * cy + t**2 * y2
        ax.plot(xs, ys, style, color=NEUTRAL, linewidth=1, zorder=1)
        label_at = ((x1 + x2) / 2, float(ys.max()))
    else:
        ax.plot([x1, x2], [y1, y2], style, color=NEUTRAL, linewidth=1, zorder=1)
        if y1 > y2:  # label near the lower (node) end, where lines to one switch are apart
            (x1, y1), (x2, y2) = (x2, y2), (x1, y1)
        label_at = (x1 + 0.3 * (x2 - x1), y1 + 0.3 * (y2 - y1))
    if link.get("rate"):
        ax.text(
            *label_at,
            link["rate"],
            fontsize=7,
            color=BLACK,  # a rate, not a failure: not red
            ha="center",
            va="center",
            bbox={"facecolor": "white", "edgecolor": "none", "pad": 0.5},
            zorder=3,
        )


def topology(
    layout: Mapping, links: list[dict], path: Path, switch_host: Mapping[str, str] | None = None
) -> Path:
    """Sites as columns of host boxes, each host's nodes in a row, switches above (labelled with the
    host that runs them, `switch_host`, where there are several: drawn above the boxes, a switch would
    otherwise read as no host's); links with their rate. Links between nodes of one row are drawn as
    arcs, so no line runs through another node."""
    node_host: dict[str, str] = layout["node_host"]
    host_site: dict[str, str] = layout["host_site"]
    sites = list(dict.fromkeys(host_site.values()))
    pos: dict[str, tuple[float, float]] = {}
    width = sum(
        max(1.6, 0.9 * sum(1 for h in node_host.values() if h == host) + 0.4) + 0.4 for host in host_site
    )
    fig, ax = plt.subplots(figsize=(min(12, max(6, 1.1 * width + 0.6 * len(sites))), 3.6))
    host_x = 0.0
    for site in sites:
        hosts = [h for h, s in host_site.items() if s == site]
        site_start = host_x
        for host in hosts:
            nodes = [n for n, h in node_host.items() if h == host]
            box = max(1.6, 0.9 * len(nodes) + 0.4)
            ax.add_patch(plt.Rectangle((host_x, 0), box, 1.3, fill=False, linestyle="--", color=NEUTRAL))
            if not (host == DEFAULT_HOST and len(host_site) == 1):  # the implicit single host: no label
                ax.text(host_x + box / 2, -0.22, f"host {host}", ha="center", fontsize=8, color=NEUTRAL)
            for i, node in enumerate(nodes):
                pos[node] = (host_x + 0.65 + 0.9 * i, 0.55)
                ax.add_patch(plt.Circle(pos[node], 0.22, color=BLUE, zorder=2))
                ax.text(pos[node][0], 0.12, node, ha="center", fontsize=9)
            host_x += box + 0.4
        if site != DEFAULT_SITE:
            ax.text(
                (site_start + host_x - 0.4) / 2,
                -0.62,
                f"site {site}",
                ha="center",
                fontsize=10,
                weight="bold",
            )
        host_x += 0.6
    switches = list(dict.fromkeys(e for link in links for e in link["endpoints"] if e not in node_host))
    for i, switch in enumerate(switches):
        attached = [
            pos[e] for link in links if switch in link["endpoints"] for e in link["endpoints"] if e in pos
        ]
        x = float(np.mean([p[0] for p in attached])) if attached else float(i)
        pos[switch] = (x + 0.6 * i, 2.3)
        ax.add_patch(plt.Rectangle((pos[switch][0] - 0.35, 2.15), 0.7, 0.3, color=MAGENTA, zorder=2))
        host = (switch_host or {}).get(switch)
        label = f"{switch} (on host {host})" if host and len(host_site) > 1 else switch
        ax.text(pos[switch][0], 2.55, label, ha="center", fontsize=8)
    for link in links:
        _draw_link(ax, link, pos)
    top = max((p[1] for p in pos.values()), default=1.0)
    ax.set_xlim(-0.4, max(host_x, max((p[0] for p in pos.values()), default=0) + 0.6))
    ax.set_ylim(-0.85, max(top, 1.4) + 0.6 + (0.4 if switches else 0))
    ax.set_aspect("equal")
    ax.axis("off")
    ax.set_title("topology (dotted: VXLAN overlay)", fontsize=9)
    return save(fig, path)
