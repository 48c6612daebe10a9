"""Why lateness p99 at 10K pps misses 50 µs here: the send lateness of `vnb-probe send --pps 10000`
(18-byte payloads, 5 s; its defaults otherwise) against the hypervisor's steal time during the run,
with the sender at its default scheduling and at SCHED_FIFO 1 (`chrt -f 1`; the receiver stays at
its default), the two alternating within every repetition.

Steal is /proc/stat's machine-wide steal (both vCPUs) over the run; a guest cannot run while the
hypervisor holds its vCPU, whatever its scheduling class. The same veth pair as run.py
($VNB_BENCH_PREFIX + S/R, default vnbpdS/vnbpdR; created and deleted here, refused if present).

Usage (root):  .venv/bin/python benchmarks/probe/lateness_steal.py [--reps 8] [--out DIR] [--redraw]  # ~2 min
Writes DIR/lateness_steal.json (every run, Spearman's rho of p99 against steal per arm and in all)
and DIR/lateness_steal.png; DIR defaults to results-lateness-steal/ next to this file.
"""

from __future__ import annotations

import argparse
import json
import os
import stat
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import run as probe_run  # benchmarks/probe/run.py: the veth pair and one vnb-probe run
from scipy.stats import spearmanr

from vnetbench.palette import NEUTRAL
from vnetbench.report.cycle import use_palette

use_palette()  # the two arms in the palette's blue and black, the goal grey dashed and named
HERE = Path(__file__).resolve().parent
PPS = 10_000
SECONDS = 5


def steal_ms() -> int:
    """Steal time of all CPUs so far, ms (/proc/stat's first line, USER_HZ = 100)."""
    return int(Path("/proc/stat").read_text().split("\n", 1)[0].split()[8]) * 10


def fifo_wrapper(raw: Path) -> str:
    """A vnb-probe that runs `send` at SCHED_FIFO 1 and anything else as it is."""
    path = raw / "vnb-probe-fifo-sender"
    path.write_text(
        "#!/bin/sh\n"
        f'if [ "$1" = send ]; then exec chrt -f 1 {probe_run.PROBE} "$@"; fi\n'
        f'exec {probe_run.PROBE} "$@"\n'
    )
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return str(path)


def draw(runs: list[dict[str, Any]], arms: list[str], png: Path) -> None:
    fig, ax = plt.subplots(figsize=(6, 3.6))
    for arm, marker in zip(arms, "os", strict=True):
        sel = [r for r in runs if r["arm"] == arm]
        ax.scatter(
            [r["steal_ms"] for r in sel],
            [r["lateness_p99_us"] for r in sel],
            marker=marker,
            label=arm,
            alpha=0.8,
        )
    ax.axhline(50, color=NEUTRAL, linestyle="--", linewidth=1)
    ax.text(
        0.99,
        50,
        "goal 50 µs ",
        color=NEUTRAL,
        fontsize=8,
        ha="right",
        va="bottom",
        transform=ax.get_yaxis_transform(),
    )
    ax.set_xlabel(f"hypervisor steal during the {SECONDS} s run (ms, both vCPUs)")
    ax.set_ylabel("send lateness p99 (µs)")
    ax.set_title(f"vnb-probe --pps {PPS}: lateness p99 vs steal (one point per run)", fontsize=10)
    ax.set_ylim(bottom=0)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(png, dpi=110)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--reps", type=int, default=8)
    ap.add_argument("--out", type=Path, default=HERE / "results-lateness-steal")
    ap.add_argument("--redraw", action="store_true", help="only redraw the figure from DIR's json")
    args = ap.parse_args()
    if args.redraw:
        runs = json.loads((args.out / "lateness_steal.json").read_text())["runs"]
        draw(runs, list(dict.fromkeys(r["arm"] for r in runs)), args.out / "lateness_steal.png")
        return
    raw = Path(tempfile.mkdtemp(prefix="vnb-lateness-"))
    arms = {"default": probe_run.PROBE, "SCHED_FIFO sender": fifo_wrapper(raw)}
    runs = []
    probe_run.make_pair()
    try:
        for rep in range(args.reps):
            for arm in list(arms) if rep % 2 == 0 else list(arms)[::-1]:
                default_probe = probe_run.PROBE
                probe_run.PROBE = arms[arm]
                before = steal_ms()
                try:
                    r = probe_run.vnb_run(
                        raw, f"{rep}-{arm.split()[0]}", SECONDS, ["--pps", str(PPS)], 18, []
                    )
                finally:
                    probe_run.PROBE = default_probe
                run = {
                    "rep": rep,
                    "arm": arm,
                    "steal_ms": steal_ms() - before,
                    "load1": r["load1"],
                    "missed_slots": r["missed_slots_packets"],
                } | {f"lateness_{q}_us": r[f"lateness_{q}_ns"] / 1e3 for q in ("p50", "p99", "max")}
                runs.append(run)
                late = "  ".join(f"{q} {run[f'lateness_{q}_us']:7.1f} us" for q in ("p50", "p99", "max"))
                print(f"rep {rep} {arm:17s} {late}  steal {run['steal_ms']:4d} ms", flush=True)
    finally:
        probe_run.cleanup()
    summary: dict[str, object] = {
        "finished_utc": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "pps": PPS,
        "seconds": SECONDS,
        "reps": args.reps,
        "cpus": os.cpu_count(),
    }
    for name, sel in [(a, [r for r in runs if r["arm"] == a]) for a in arms] + [("all", runs)]:
        p99 = [r["lateness_p99_us"] for r in sel]
        rho = spearmanr(p99, [r["steal_ms"] for r in sel])
        summary[name] = {
            "p99_us_median": statistics.median(p99),
            "p99_us_min": min(p99),
            "p99_us_max": max(p99),
            "runs_p99_at_most_50us": sum(v <= 50 for v in p99),
            "spearman_rho_p99_steal": float(rho.statistic),
            "spearman_p": float(rho.pvalue),
        }
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "lateness_steal.json").write_text(json.dumps({"summary": summary, "runs": runs}, indent=1))
    draw(runs, list(arms), args.out / "lateness_steal.png")
    print(json.dumps(summary, indent=1))


if __name__ == "__main__":
    main()
