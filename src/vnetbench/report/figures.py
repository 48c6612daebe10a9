"""The report's figures (matplotlib, Agg). Each function writes PNG + SVG and returns the PNG path."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from vnetbench.analysis.descriptive import Competition

PLACEMENT_STYLE = {"same-host": "-", "same-site": "--", "cross-site": ":"}


def save(fig: plt.Figure, path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.tight_layout()
    fig.savefig(path.with_suffix(".png"), dpi=110)
    fig.savefig(path.with_suffix(".svg"))
    plt.close(fig)
    return path.with_suffix(".png")


def cdf(
    series: Mapping[str, np.ndarray | pd.Series],
    xlabel: str,
    title: str,
    path: Path,
    styles: Mapping[str, str] | None = None,
) -> Path:
    fig, ax = plt.subplots(figsize=(7, 4))
    for label, values in series.items():
        x = np.sort(np.asarray(pd.Series(values).dropna(), dtype=float))
        if x.size == 0:
            continue
        y = np.arange(1, x.size + 1) / x.size
        ax.step(x, y, where="post", label=f"{label} (n={x.size})", linestyle=(styles or {}).get(label, "-"))
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
    fig, ax = plt.subplots(figsize=(7, 3.6))
    for (src, dst), group in frame.groupby(["src", "dst"], sort=False):
        group = group.sort_values("repetition")
        ax.plot(group["repetition"], group[metric] / scale, marker="o", markersize=3, label=f"{src}→{dst}")
    for label, value in (reference or {}).items():
        ax.axhline(value, color="grey", linestyle="--", linewidth=1)
        ax.annotate(label, (ax.get_xlim()[0], value), fontsize=7, color="grey", va="bottom")
    ax.set_xlabel("repetition")
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    ax.xaxis.get_major_locator().set_params(integer=True)
    return save(fig, path)


def model_ratio(table: pd.DataFrame, title: str, path: Path) -> Path:
    """Measured mean throughput as a share of the overhead-model maximum, per connection."""
    fig, ax = plt.subplots(figsize=(7, 0.5 + 0.4 * len(table)))
    labels = [f"{r.src}→{r.dst} ({r.measurement})" for r in table.itertuples()]
    values = table["of_model_max"].to_numpy() * 100
    bars = ax.barh(labels, values, color="#4878a8")
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


def competition_bars(comp: Competition, scale: float, unit: str, path: Path) -> Path:
    fig, ax = plt.subplots(figsize=(7, 3.6))
    labels = [f"{f.src}→{f.dst}" for f in comp.flows]
    x = np.arange(len(labels))
    ax.bar(x - 0.2, [f.alone_mean / scale for f in comp.flows], 0.4, label="alone", color="#9ab")
    ax.bar(x + 0.2, [f.together_mean / scale for f in comp.flows], 0.4, label="together", color="#c55")
    if comp.link_rate and comp.metric == "throughput_bps":
        share = comp.sum_together / len(comp.flows) / scale
        ax.axhline(share, color="black", linestyle="--", linewidth=1, label="equal share of the sum together")
    ax.set_xticks(x, labels)
    ax.set_ylabel(unit)
    ax.set_title(f"{comp.pattern} · {comp.measurement}: alone vs together (Jain {comp.jain_mean:.3f})")
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
    fig, ax = plt.subplots(figsize=(7, 3.4))
    for mid, label in labels.items():
        s = samples[
            (samples["measurement_id"] == mid) & (samples["metric"] == metric) & samples["stream"].isna()
        ]
        s = s.sort_values("t_ns")
        ax.step(s["t_ns"] / 1e9, s["value"] / scale, where="post", label=label)
    ax.set_xlabel("time since the flow started (s)")
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    return save(fig, path)


def topology(layout: Mapping, links: list[dict], path: Path) -> Path:
    """Sites as columns, hosts as boxes, nodes inside; links drawn with their rate."""
    node_host: dict[str, str] = layout["node_host"]
    host_site: dict[str, str] = layout["host_site"]
    sites = list(dict.fromkeys(host_site.values()))
    pos: dict[str, tuple[float, float]] = {}
    fig, ax = plt.subplots(figsize=(max(6, 3.2 * len(sites)), 4.2))
    host_x = 0.0
    for site in sites:
        hosts = [h for h, s in host_site.items() if s == site]
        site_start = host_x
        for host in hosts:
            nodes = [n for n, h in node_host.items() if h == host]
            height = max(1, len(nodes))
            ax.add_patch(
                plt.Rectangle((host_x, 0), 1.6, height + 0.6, fill=False, linestyle="--", color="grey")
            )
            ax.text(host_x + 0.8, height + 0.35, f"host {host}", ha="center", fontsize=8, color="grey")
            for i, node in enumerate(nodes):
                pos[node] = (host_x + 0.8, height - 0.5 - i)
                ax.add_patch(plt.Circle(pos[node], 0.22, color="#4878a8"))
                ax.text(pos[node][0], pos[node][1] - 0.38, node, ha="center", fontsize=8)
            host_x += 2.0
        ax.text(
            (site_start + host_x - 0.4) / 2, -0.55, f"site {site}", ha="center", fontsize=10, weight="bold"
        )
        host_x += 0.6
    switches = [e for link in links for e in link["endpoints"] if e not in node_host]
    for i, switch in enumerate(dict.fromkeys(switches)):
        attached = [
            pos[e] for link in links if switch in link["endpoints"] for e in link["endpoints"] if e in pos
        ]
        x = float(np.mean([p[0] for p in attached])) if attached else i
        y = float(max([p[1] for p in attached], default=0)) + 1.2
        pos[switch] = (x + 0.5 * i, y)
        ax.add_patch(plt.Rectangle((pos[switch][0] - 0.3, y - 0.15), 0.6, 0.3, color="#e0a040"))
        ax.text(pos[switch][0], y + 0.22, switch, ha="center", fontsize=8)
    for link in links:
        a, b = link["endpoints"]
        if a in pos and b in pos:
            (x1, y1), (x2, y2) = pos[a], pos[b]
            style = ":" if link.get("overlay") else "-"
            ax.plot([x1, x2], [y1, y2], style, color="#555", linewidth=1, zorder=0)
            if link.get("rate"):
                ax.text(
                    (x1 + x2) / 2,
                    (y1 + y2) / 2,
                    link["rate"],
                    fontsize=7,
                    color="#a33",
                    bbox={"facecolor": "white", "edgecolor": "none", "pad": 0.5},
                )
    ax.set_xlim(-0.4, host_x)
    ax.set_ylim(-0.9, max((p[1] for p in pos.values()), default=1) + 0.8)
    ax.set_aspect("equal")
    ax.axis("off")
    ax.set_title("topology (dotted: VXLAN overlay)", fontsize=9)
    return save(fig, path)
