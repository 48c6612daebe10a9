"""GENI's long-tailed Utah–Georgia Tech latency, emulated with an empirical `delay_cdf`: the measured
ping RTTs of a geni-categories run against the RTT the configured one-way CDF implies.

    sudo .venv/bin/vnetbench scenarios run geni-categories --db out/geni.db --report out/geni \\
        --set measurements.rtt.count=200          # 1000 cross-site pings instead of 50
    # the same path with its delay nodes but zero delay: what the path itself adds (600 pings)
    sudo .venv/bin/vnetbench scenarios run geni-categories --db out/geni-base.db --no-report \\
        --set 'topology.links.cross-aggregate.delay_cdf=[[0, 0], [1, 0]]' \\
        --set 'patterns.links.pairs=[[vm0, vm3]]' --set 'patterns.links.measurements=[rtt]' \\
        --set measurements.rtt.count=200 --set schedule.repetitions=3
    .venv/bin/python benchmarks/delay/geni_tail.py out/geni.db out/geni-base.db

Each way the delay node draws from the link's `delay_cdf`; a ping's RTT is the sum of two
independent draws plus what the path adds (the zero-delay run's RTTs: the VXLAN path, both delay
nodes' forwarding, ping's own). The configured RTT distribution is that sum, computed by
convolution on a 5 µs grid. ping prints 0.1 ms resolution from 10 ms and whole ms from 100 ms, so
the KS statistic compares the measured RTTs with the configured distribution rounded the same way
(a KS test against a discrete distribution is conservative: its p-value is if anything too large).
Writes docs/scenarios/img/geni-categories-rtt-cdf.png and benchmarks/delay/geni_tail.json.
"""

from __future__ import annotations

import json
import sqlite3
import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np
from scipy import signal, stats

from vnetbench.palette import BLUE, NEUTRAL
from vnetbench.report.cycle import use_palette
from vnetbench.spec import delaycdf, parse_spec

use_palette()

ROOT = Path(__file__).resolve().parents[2]
FIGURE = ROOT / "docs" / "scenarios" / "img" / "geni-categories-rtt-cdf.png"
RESULT = Path(__file__).with_name("geni_tail.json")
GRID_NS = 5_000


def configured_rtt(points: delaycdf.Points, base_ns: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(RTT grid in ns, CDF on it) of one draw each way + one of the path's own RTTs."""
    edges = np.arange(0, points[-1][1] + 2 * GRID_NS, GRID_NS, dtype=float)
    one_way = np.diff([delaycdf.cdf(points, e) for e in edges])  # probability per 5 µs bin
    path = np.bincount(np.round(base_ns / GRID_NS).astype(int)) / len(base_ns)
    pmf = np.clip(signal.fftconvolve(signal.fftconvolve(one_way, one_way), path), 0, None)
    rtt = np.arange(len(pmf)) * GRID_NS + GRID_NS  # upper edge of each bin
    return rtt, np.cumsum(pmf) / pmf.sum()


def ping_ks(rtts: np.ndarray, grid: np.ndarray, cdf: np.ndarray) -> tuple[float, float]:
    """KS D and p of ping's printed RTTs against the configured distribution printed the same way."""
    printed = np.concatenate([np.arange(10e6, 100e6, 0.1e6), np.arange(100e6, 1000e6, 1e6)])
    half = np.where(printed < 100e6, 0.05e6, 0.5e6)
    model = np.interp(printed + half, grid, cdf)  # P(printed value <= v)
    ecdf = np.searchsorted(np.sort(rtts), printed + 1, side="right") / len(rtts)
    d = float(np.max(np.abs(ecdf - model)))
    return d, float(stats.kstwo.sf(d, len(rtts)))


def rtts_of(db: Path) -> tuple[np.ndarray, str, str]:
    con = sqlite3.connect(db)
    cid, spec_text = con.execute(
        "select id, spec_text from campaigns where name = 'geni-categories' order by rowid desc limit 1"
    ).fetchone()
    rows = con.execute(
        "select s.value from samples s join measurements m on m.id = s.measurement_id "
        "where m.campaign_id = ? and m.placement = 'cross-site' and m.kind = 'rtt' and s.metric = 'rtt_ns'",
        (cid,),
    ).fetchall()
    return np.array([r[0] for r in rows], dtype=float), cid, spec_text


def main(db: Path, base_db: Path) -> None:
    rtts, cid, spec_text = rtts_of(db)
    base, base_cid, _ = rtts_of(base_db)
    campaign = parse_spec(spec_text, "geni-categories.yaml").campaign
    (link,) = [link for link in campaign.topology.links if link.label == "cross-aggregate"]
    points = link.delay_cdf
    grid, cdf = configured_rtt(points, base)
    at = lambda d: float(np.interp(d, grid, cdf))  # noqa: E731
    ks_d, ks_p = ping_ks(rtts, grid, cdf)
    q = lambda p: float(np.interp(p, cdf, grid))  # noqa: E731
    body = float(np.mean((rtts >= 49.5e6) & (rtts <= 52.5e6)))
    result = {
        "campaign": cid,
        "pings": len(rtts),
        "path_without_delay": {
            "campaign": base_cid,
            "pings": len(base),
            "median_ms": float(np.median(base)) / 1e6,
            "p99_ms": float(np.percentile(base, 99)) / 1e6,
        },
        "delay_cdf_one_way": [[p, d] for p, d in points],
        "within_49_5_52_5ms": {"measured": body, "configured": at(52.5e6) - at(49.5e6)},
        "quantiles_ms": {
            name: {"measured": float(np.percentile(rtts, 100 * p)) / 1e6, "configured": q(p) / 1e6}
            for name, p in (
                ("p10", 0.1),
                ("median", 0.5),
                ("p75", 0.75),
                ("p90", 0.9),
                ("p95", 0.95),
                ("p99", 0.99),
            )
        },
        "mean_ms": {
            "measured": float(rtts.mean()) / 1e6,
            "configured": float(np.sum(np.diff(cdf, prepend=0) * grid)) / 1e6,
        },
        "max_ms": float(rtts.max()) / 1e6,
        "above_100ms": {"measured": float(np.mean(rtts > 100e6)), "configured": 1 - at(100e6)},
        "ks_against_configured_as_ping_prints_it": {"D": ks_d, "p": ks_p},
    }
    RESULT.write_text(json.dumps(result, indent=1) + "\n")
    print(json.dumps(result, indent=1))

    xs = np.sort(rtts)
    ys = np.arange(1, len(xs) + 1) / len(xs)
    fig, (body_ax, tail_ax) = plt.subplots(1, 2, figsize=(11, 4.2))
    for ax in (body_ax, tail_ax):
        ax.axvspan(49.5, 52.5, color=NEUTRAL, alpha=0.15, label="GENI: > 75 % within 49.5–52.5 ms")
    # measured in the palette's blue; what it is compared with (configured, GENI's figures) grey, named
    body_ax.step(xs / 1e6, ys, where="post", color=BLUE, label=f"measured ping RTT ({len(xs)} pings)")
    body_ax.plot(
        grid / 1e6,
        cdf,
        color=NEUTRAL,
        ls="--",
        lw=1.2,
        label="configured: two one-way draws + the path's own RTT",
    )
    body_ax.set(xlim=(48.5, 62), ylim=(0, 1), xlabel="RTT (ms)", ylabel="CDF", title="the body")
    body_ax.axhline(0.75, color=NEUTRAL, lw=0.6, ls=":", label="75 %")
    body_ax.legend(loc="lower right", fontsize=8)
    tail_ax.step(xs / 1e6, 1 - ys + 1 / len(xs), where="post", color=BLUE, label="measured")
    tail_ax.plot(grid / 1e6, np.clip(1 - cdf, 1e-6, None), color=NEUTRAL, ls="--", lw=1.2, label="configured")
    tail_ax.set(
        xscale="log",
        yscale="log",
        xlim=(45, 800),
        ylim=(1e-4, 1.05),
        xlabel="RTT (ms)",
        ylabel="P(RTT > x)",
        title="the tail (GENI: 'between 50 ms to 400 ms')",
    )
    tail_ax.set_xticks([50, 100, 200, 400, 800], ["50", "100", "200", "400", "800"])
    tail_ax.minorticks_off()
    tail_ax.axvline(400, color=NEUTRAL, lw=0.8, ls=":", label="400 ms (GENI's upper end)")
    tail_ax.legend(loc="lower left", fontsize=8)
    fig.suptitle(
        f"geni-categories cross-site link, delay_cdf (campaign {cid}): "
        f"{body:.0%} within 49.5–52.5 ms, KS D = {ks_d:.3f}, p = {ks_p:.2f}",
        fontsize=10,
    )
    fig.tight_layout()
    fig.savefig(FIGURE, dpi=110)
    print(f"wrote {FIGURE}")


if __name__ == "__main__":
    main(
        Path(sys.argv[1] if len(sys.argv) > 1 else "out/geni.db"),
        Path(sys.argv[2] if len(sys.argv) > 2 else "out/geni-base.db"),
    )
