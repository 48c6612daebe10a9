#!/usr/bin/env python3
"""analyze, report, export and loss on a campaign of 10 million samples, on SQLite and PostgreSQL.

1. Writes the synthetic quickstart campaign (tests/helpers/synthetic.py: the quickstart's 26 planned
   flows, RTT replies and TCP/UDP intervals, summaries computed from them) through the store's own
   API, `Store.save_measurements`, into a SQLite file and into a PostgreSQL database (Debian's
   server, `initdb` + `pg_ctl` in a temporary directory, as tests/helpers/postgres.py runs it).
2. Runs each command as a user does, `vnetbench CMD --db STORE synthetic`, in a child process, and
   takes its wall time, CPU time and peak resident memory (its rusage, read by a small launcher).
   Repetitions alternate the backends' order (A B, B A, ...).
3. With --baseline-src (the `src/` of another checkout, e.g. main before this change), runs the same
   commands with that code on the same SQLite store, side by side.

Usage:  .venv/bin/python benchmarks/scale/run.py [--samples 10000000] [--reps 3] [--baseline-src DIR]
Writes results.json (summary + machine) and scale.png in --out (default: next to this file); every
run goes to OUT/raw/runs.json and the stores to a temporary directory that is removed at the end
(--keep keeps it).
--redraw draws scale.png again from results.json (the figure's colours), measuring nothing.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT))

from tests.helpers.postgres import missing_postgres, running_postgres  # noqa: E402
from tests.helpers.synthetic import write_campaign  # noqa: E402

from vnetbench.store.db import Store  # noqa: E402

CAMPAIGN = "synthetic"
LIMITS_S = {"analyze": 10.0, "report": 30.0, "export-parquet": 20.0}
LIMIT_RSS_BYTES = 2 * 1024**3
TIMEOUT_S = 900


def commands(db: str, out: Path) -> dict[str, list[str]]:
    """What a user runs on the store, by name (output to files under out)."""
    return {
        "analyze": ["analyze", "--db", db, CAMPAIGN],
        "report": ["report", "--db", db, CAMPAIGN, "--out", str(out / "report")],
        "export-parquet": [
            "export",
            "--db",
            db,
            "--format",
            "parquet",
            "--out",
            str(out / "parquet"),
            CAMPAIGN,
        ],
        "export-csv": ["export", "--db", db, "--format", "csv", "--out", str(out / "csv"), CAMPAIGN],
        "loss": ["loss", "--db", db, CAMPAIGN],
    }


# Runs the command and prints its own rusage: started from this small process, the command's peak
# resident memory is its own (a child forked straight from the benchmark, which holds the stores'
# generator, would start with the benchmark's pages counted as its peak).
LAUNCHER = """
import json, os, resource, subprocess, sys, time
started = time.perf_counter()
code = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
elapsed = time.perf_counter() - started
usage = resource.getrusage(resource.RUSAGE_CHILDREN)
sys.stderr.write(code.stderr.decode(errors="replace")[-800:])
print(json.dumps({"returncode": code.returncode, "seconds": elapsed, "peak_rss_bytes": usage.ru_maxrss * 1024,
                  "cpu_seconds": usage.ru_utime + usage.ru_stime}))
"""


def measure(argv: list[str], env: dict[str, str]) -> dict[str, float | int]:
    """Wall time, peak resident memory and CPU time of one command run as a user runs it."""
    proc = subprocess.run(
        [sys.executable, "-c", LAUNCHER, *argv], env=env, capture_output=True, text=True, timeout=TIMEOUT_S
    )
    if proc.returncode != 0 or not proc.stdout.strip():
        raise RuntimeError(f"{' '.join(argv)}: launcher failed: {proc.stderr[-800:]}")
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    if result.pop("returncode") != 0:
        raise RuntimeError(f"{' '.join(argv)} failed: {proc.stderr[-800:]}")
    return result


def python_env(src: Path) -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(src), "PYTHONDONTWRITEBYTECODE": "1"}


@contextlib.contextmanager
def stores(workdir: Path, samples: int, backends: list[str]) -> Iterator[dict[str, str]]:
    """{backend: --db value}, each holding the synthetic campaign; PostgreSQL stopped at the end."""
    out: dict[str, str] = {}
    with contextlib.ExitStack() as stack:
        for backend in backends:
            if backend == "sqlite":
                out[backend] = str(workdir / "scale.db")
            else:
                server = stack.enter_context(running_postgres())
                out[backend] = server.create_database()
            started = time.perf_counter()
            store = Store(out[backend])
            write_campaign(store, samples, CAMPAIGN)
            store.close()
            print(f"{backend}: wrote {samples} samples in {time.perf_counter() - started:.0f} s", flush=True)
        yield out


def spread(values: list[float]) -> dict[str, float]:
    return {"median": statistics.median(values), "min": min(values), "max": max(values)}


def summarise(runs: list[dict]) -> dict[str, dict[str, dict]]:
    """code/backend -> command -> seconds and peak memory (median, min, max) and the goals met."""
    out: dict[str, dict[str, dict]] = {}
    for run in runs:
        key = f"{run['code']}/{run['backend']}"
        out.setdefault(key, {}).setdefault(run["command"], []).append(run)
    summary: dict[str, dict[str, dict]] = {}
    for key, by_command in out.items():
        summary[key] = {}
        for command, rs in by_command.items():
            seconds = spread([r["seconds"] for r in rs])
            rss = spread([r["peak_rss_bytes"] / 2**20 for r in rs])
            limit = LIMITS_S.get(command)
            summary[key][command] = {
                "runs": len(rs),
                "seconds": seconds,
                "peak_rss_mib": rss,
                "cpu_seconds_median": statistics.median(r["cpu_seconds"] for r in rs),
                "time_goal_s": limit,
                "time_goal_met": None if limit is None else seconds["median"] <= limit,
                "memory_goal_met": rss["max"] * 2**20 <= LIMIT_RSS_BYTES,
            }
    return summary


def figure(summary: dict[str, dict[str, dict]], samples: int, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    from vnetbench.palette import BLACK, NEUTRAL, SERIES
    from vnetbench.report.cycle import use_palette

    use_palette()

    fills = [c for c in SERIES if c != BLACK]  # bars under black error bars; goals grey dashed, named
    keys = list(summary)
    names = list(next(iter(summary.values())))
    fig, axes = plt.subplots(1, 2, figsize=(11, 3.8))
    width = 0.8 / len(keys)
    x = np.arange(len(names))
    for i, key in enumerate(keys):
        for ax, field, scale in ((axes[0], "seconds", 1.0), (axes[1], "peak_rss_mib", 1 / 1024)):
            med = [summary[key].get(n, {}).get(field, {}).get("median", np.nan) * scale for n in names]
            lo = [summary[key].get(n, {}).get(field, {}).get("min", np.nan) * scale for n in names]
            hi = [summary[key].get(n, {}).get(field, {}).get("max", np.nan) * scale for n in names]
            err = [np.subtract(med, lo), np.subtract(hi, med)]
            offset = x + (i - (len(keys) - 1) / 2) * width
            ax.bar(offset, med, width, yerr=err, capsize=2, label=key, color=fills[i % len(fills)])
    goals = [j for j, name in enumerate(names) if name in LIMITS_S]
    for j in goals:
        label = "goal" if j == goals[0] else None
        axes[0].hlines(
            LIMITS_S[names[j]], j - 0.45, j + 0.45, colors=NEUTRAL, linestyles="--", lw=1, label=label
        )
    axes[1].axhline(LIMIT_RSS_BYTES / 2**30, color=NEUTRAL, ls="--", lw=1, label="goal")
    axes[0].set_ylabel("wall time (s), median [min–max]")
    axes[1].set_ylabel("peak memory (GiB)")
    for ax in axes:
        ax.set_xticks(x, names, rotation=20)
        ax.grid(alpha=0.3, axis="y")
    axes[0].set_title("time (dashed: goal)")
    axes[1].set_title("peak resident memory")
    axes[0].legend(fontsize=8)
    axes[1].legend(fontsize=8)
    fig.suptitle(f"a campaign of {samples:,} samples".replace(",", " "))
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--samples", type=int, default=10_000_000)
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--backends", default="sqlite,postgresql")
    parser.add_argument("--baseline-src", type=Path, help="src/ of another checkout, run on the SQLite store")
    parser.add_argument("--baseline-reps", type=int, default=1)
    parser.add_argument("--keep", action="store_true", help="keep the stores and outputs")
    parser.add_argument("--out", type=Path, default=HERE)
    parser.add_argument(
        "--redraw", action="store_true", help="draw scale.png from results.json; measure nothing"
    )
    args = parser.parse_args()
    if args.redraw:
        saved = json.loads((args.out / "results.json").read_text())
        figure(saved["summary"], saved["samples"], args.out / "scale.png")
        return 0
    backends = [b for b in args.backends.split(",") if b]
    if "postgresql" in backends and (reason := missing_postgres()):
        print(f"PostgreSQL: {reason}", file=sys.stderr)
        return 2
    workdir = Path(tempfile.mkdtemp(prefix="vnb-scale-"))
    if os.geteuid() == 0:
        os.chmod(workdir, 0o755)  # the PostgreSQL server runs as postgres
    raw = args.out / "raw"
    raw.mkdir(parents=True, exist_ok=True)
    exe = [sys.executable, "-m", "vnetbench.cli"]
    runs: list[dict] = []
    try:
        with stores(workdir, args.samples, backends) as dbs:
            for rep in range(args.reps):
                order = backends if rep % 2 == 0 else backends[::-1]
                for backend in order:
                    for name, argv in commands(dbs[backend], workdir / f"out-{backend}").items():
                        result = measure(exe + argv, python_env(ROOT / "src"))
                        runs.append(
                            {"code": "this", "backend": backend, "command": name, "rep": rep + 1, **result}
                        )
                        print(
                            f"rep {rep + 1} {backend:10} {name:15} {result['seconds']:7.1f} s "
                            f"{result['peak_rss_bytes'] / 2**20:7.0f} MiB",
                            flush=True,
                        )
            if args.baseline_src and "sqlite" in dbs:
                for rep in range(args.baseline_reps):
                    for name, argv in commands(dbs["sqlite"], workdir / "out-baseline").items():
                        try:
                            result = measure(exe + argv, python_env(args.baseline_src))
                        except RuntimeError as err:
                            print(f"baseline {name}: {err}", file=sys.stderr)
                            continue
                        runs.append(
                            {
                                "code": "baseline",
                                "backend": "sqlite",
                                "command": name,
                                "rep": rep + 1,
                                **result,
                            }
                        )
                        print(
                            f"baseline {name:15} {result['seconds']:7.1f} s "
                            f"{result['peak_rss_bytes'] / 2**20:7.0f} MiB",
                            flush=True,
                        )
    finally:
        if not args.keep:
            shutil.rmtree(workdir, ignore_errors=True)
    (raw / "runs.json").write_text(json.dumps(runs, indent=1))
    summary = summarise(runs)
    results = {
        "benchmark": "scale",
        "samples": args.samples,
        "campaign": "the quickstart's 26 flows (tests/helpers/synthetic.py)",
        "repetitions": args.reps,
        "baseline_src": str(args.baseline_src) if args.baseline_src else None,
        "kernel": platform.release(),
        "cpus": os.cpu_count(),
        "python": platform.python_version(),
        "date_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "summary": summary,
    }
    (args.out / "results.json").write_text(json.dumps(results, indent=1))
    figure(summary, args.samples, args.out / "scale.png")
    print(json.dumps(summary, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
