#!/usr/bin/env python3
"""The live dashboard at scale: 10 million samples in the store, SQLite and PostgreSQL side by side.

Fills a store through the store's own API (Store.save_measurements, as the runner writes) with a 10-day
periodic campaign: 240 hourly runs x 12 ordered pairs of 4 nodes x 3 measurements (TCP, UDP, RTT) with
their per-interval samples (TCP: throughput + RTT every 100 ms for 60 s, UDP: throughput + jitter every
100 ms, RTT: 1073 pings) = 10,002,240 samples. Then serves the dashboard with `vnetbench dashboard` (the
defaults a user gets) in its own process and measures, from 20 concurrent clients on loopback, 100
requests of the grid page's API (/api/campaigns/ID) and 100 of one pair's 10-day series; p95 target
<= 300 ms. Each configuration is measured in several rounds on a freshly started server (so every round
starts with an empty answer cache), alternating the backends; a second set of rounds switches the cache
off, so every request runs its queries.

Usage (root, from the repo):  .venv/bin/python benchmarks/dashboard/run.py [--rounds 3] [--samples 10000000]
Writes summary.json and dashboard.png here; raw per-request latencies go to raw/ (not committed).
PostgreSQL: Debian's package (initdb + pg_ctl in a temporary directory, as tests/helpers/postgres.py).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import platform
import pwd
import queue
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import numpy as np

from vnetbench.palette import BLUE, MAGENTA, NEUTRAL

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
TARGET_P95_MS = 300.0
HOUR_NS = 3600 * 10**9
START_UTC_NS = 1_767_225_600 * 10**9  # 2026-01-01 00:00 UTC: the 10 days are fixed, the figure repeatable

SPEC = """\
name: dash-10day
description: 240 hourly runs (10 days) of TCP, UDP and RTT between every ordered pair of four nodes
topology:
  nodes: [{name: n1}, {name: n2}, {name: n3}, {name: n4}]
  switches: [{name: sw}]
  links:
    - {endpoints: [n1, sw], rate: 100mbit}
    - {endpoints: [n2, sw], rate: 100mbit}
    - {endpoints: [n3, sw], rate: 100mbit}
    - {endpoints: [n4, sw], rate: 100mbit}
measurements:
  - {name: tcp, kind: tcp, duration: 60s, interval: 100ms}
  - {name: udp, kind: udp, duration: 60s, interval: 100ms, rate: 50mbit}
  - {name: rtt, kind: rtt, count: 1073, interval: 50ms}
patterns:
  - {name: mesh, kind: mesh, measurements: [tcp, udp, rtt]}
schedule: {repetitions: 240, interval: 1h}
"""
CAMPAIGN_ID = "bench10d"
EXPECTED_MAX_BPS = 100e6 * 1448 / 1514  # the overhead model's TCP goodput on a 100 mbit tbf link
# The pair whose series is requested; its TCP throughput drops by a third from day 5 (a change to see).
SERIES = {"measurement": "tcp", "src": "n1", "dst": "n2", "metric": "throughput_bps"}


# ---------------------------------------------------------------- filling the store


def _records(rng: np.random.Generator, step: Any, started_utc_ns: int, scale: float) -> Any:
    from vnetbench.store.records import MeasurementRecord, Sample

    flow = step.flows[0]
    n = max(1, round(600 * scale))
    t = np.arange(n, dtype=np.int64) * 100_000_000
    samples: list[Sample] = []
    degraded = step.repetition > 120 and (flow.src, flow.dst) == ("n1", "n2")
    if step.kind == "tcp":
        level = EXPECTED_MAX_BPS * (0.62 if degraded else 0.97)
        bps = rng.normal(level, 0.01 * level, n)
        rtt = rng.gamma(4.0, 50_000.0, n)
        samples = [Sample(int(a), "throughput_bps", float(b)) for a, b in zip(t, bps, strict=True)]
        samples += [Sample(int(a), "rtt_ns", float(r)) for a, r in zip(t, rtt, strict=True)]
        summary = {"throughput_bps": float(bps.mean()), "mean_rtt_ns": float(rtt.mean())}
        expected = EXPECTED_MAX_BPS
    elif step.kind == "udp":
        bps = rng.normal(49.5e6, 0.2e6, n)
        jitter = rng.gamma(2.0, 20_000.0, n)
        samples = [Sample(int(a), "throughput_bps", float(b)) for a, b in zip(t, bps, strict=True)]
        samples += [Sample(int(a), "jitter_ns", float(j)) for a, j in zip(t, jitter, strict=True)]
        loss = float(rng.choice([0.0, 0.0005, 0.004, 0.02], p=[0.7, 0.2, 0.08, 0.02]))
        summary = {
            "throughput_bps": float(bps.mean()),
            "loss_ratio": loss,
            "jitter_mean_ns": float(jitter.mean()),
        }
        expected = 100e6 * 1470 / 1512
    else:
        count = max(1, round(1073 * scale))
        rtt = rng.gamma(5.0, 16_000.0, count)
        samples = [Sample(i * 50_000_000, "rtt_ns", float(r), seq=i + 1) for i, r in enumerate(rtt)]
        summary = {"rtt_mean_ns": float(rtt.mean()), "rtt_min_ns": float(rtt.min()), "loss_ratio": 0.0}
        expected = None
    return MeasurementRecord(
        campaign_id=CAMPAIGN_ID,
        key=flow.key,
        step_key=step.key,
        seq=step.seq,
        repetition=step.repetition,
        pattern=step.pattern,
        pattern_kind=step.pattern_kind,
        group_kind=step.group_kind,
        group_size=len(step.flows),
        measurement=step.measurement,
        kind=step.kind,
        src=flow.src,
        dst=flow.dst,
        placement="same-host",
        link_rate_bps=100_000_000,
        expected_max_bps=expected,
        tool="iperf3" if step.kind in {"tcp", "udp"} else "ping",
        started_utc_ns=started_utc_ns,
        duration_ns=60 * 10**9,
        summary=summary,
        samples=samples,
    )


def fill(url: str, samples_target: int) -> dict[str, Any]:
    """The whole campaign through Store.save_measurements, one transaction per run's measurement."""
    from vnetbench.plan import make_plan
    from vnetbench.spec.loader import parse_spec
    from vnetbench.store.db import Store

    spec = parse_spec(SPEC, "benchmarks/dashboard/run.py")
    plan = make_plan(spec, CAMPAIGN_ID, 1)
    per_step = {"tcp": 1200, "udp": 1200, "rtt": 1073}
    full = sum(per_step[s.kind] for s in plan.steps)
    scale = samples_target / full  # 1.0 for the default 10 M; smaller for a quick try
    store = Store(url)
    if store.campaign(CAMPAIGN_ID) is not None:  # a kept store (--store-dir) from an earlier run
        store.close()
        return {}
    store.create_campaign(
        id=CAMPAIGN_ID,
        name="dash-10day",
        status="finished",
        provider="local",
        spec_text=SPEC,
        spec_sha256="-",
        spec_source="benchmarks/dashboard/run.py",
        seed=1,
        environment={},
        tool_versions={},
        created_utc_ns=START_UTC_NS,
    )
    rng = np.random.default_rng(16)
    started = time.monotonic()
    batch: list[Any] = []
    written = 0
    for step in plan.steps:
        offset = (step.seq % 36) * 61 * 10**9  # the run's 36 measurements one after the other
        when = START_UTC_NS + (step.repetition - 1) * HOUR_NS + offset
        record = _records(rng, step, when, scale)
        written += len(record.samples)
        batch.append(record)
        if len(batch) == 12:  # the 12 pairs of one measurement in one run
            store.save_measurements(batch)
            batch = []
    if batch:
        store.save_measurements(batch)
    seconds = time.monotonic() - started
    store.close()
    return {"samples": written, "measurements": len(plan.steps), "fill_s": round(seconds, 1)}


def store_a_new_row(url: str) -> None:
    """A new failed attempt of the last UDP n4 -> n3 measurement, as a running campaign adds rows: the
    dashboard's answers for the campaign are computed again (its newest row changed), while the grid's
    values and the benchmarked pair's series stay as they are."""
    from vnetbench.store.db import Store
    from vnetbench.store.records import MeasurementRecord

    store = Store(url)
    key = "r240/mesh/udp/n4>n3"
    attempt = store.attempts(CAMPAIGN_ID).get(key, 0) + 1
    store.save_measurements(
        [
            MeasurementRecord(
                campaign_id=CAMPAIGN_ID,
                key=key,
                step_key=key,
                seq=8639,
                repetition=240,
                pattern="mesh",
                pattern_kind="mesh",
                group_kind="single",
                group_size=1,
                measurement="udp",
                kind="udp",
                src="n4",
                dst="n3",
                placement="same-host",
                status="failed",
                reason="benchmark: a new row, so that the dashboard computes its answers again",
                attempt=attempt,
                started_utc_ns=START_UTC_NS + 240 * HOUR_NS + attempt * 10**9,
            )
        ]
    )
    store.close()


# ---------------------------------------------------------------- PostgreSQL from Debian's package


@contextlib.contextmanager
def postgres(keep: Path | None) -> Iterator[str]:
    """A server from Debian's package on 127.0.0.1 (initdb + pg_ctl as the postgres user); yields a
    SQLAlchemy URL. Temporary, by the monitor's test helper where it is; kept in `keep` when given."""
    running: Any = _running_postgres
    if keep is None:
        with contextlib.suppress(ImportError):
            from tests.helpers.postgres import running_postgres as running
    with running() if keep is None else running(keep) as server:
        yield server.create_database() if keep is None else server.database("vnb_bench")


class _Server:
    def __init__(self, bindir: Path, root: Path) -> None:
        self.bindir, self.root, self.port = bindir, root, _free_port()

    def run(self, *argv: str) -> None:
        owner = pwd.getpwnam("postgres")
        subprocess.run(
            argv, check=True, capture_output=True, cwd=self.root, user=owner.pw_uid, group=owner.pw_gid
        )

    def database(self, name: str) -> str:
        """The URL of database `name`, created when missing."""
        import psycopg

        with psycopg.connect(f"host=127.0.0.1 port={self.port} user=vnetbench dbname=postgres") as conn:
            conn.autocommit = True
            if conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", (name,)).fetchone() is None:
                conn.execute(f'CREATE DATABASE "{name}"')
        return f"postgresql+psycopg://vnetbench@127.0.0.1:{self.port}/{name}"

    def create_database(self) -> str:
        return self.database("vnb_bench")


@contextlib.contextmanager
def _running_postgres(keep: Path | None = None) -> Iterator[_Server]:
    bindirs = sorted(
        Path("/usr/lib/postgresql").glob("*/bin/pg_ctl"), key=lambda p: int(p.parent.parent.name)
    )
    if not bindirs:
        raise SystemExit("PostgreSQL is not installed: apt-get install postgresql")
    root = keep if keep is not None else Path(tempfile.mkdtemp(prefix="vnb-bench-pg-"))
    root.mkdir(parents=True, exist_ok=True)
    owner = pwd.getpwnam("postgres")
    os.chown(root, owner.pw_uid, owner.pw_gid)
    server = _Server(bindirs[-1].parent, root)
    data = str(root / "data")
    try:
        if not (root / "data" / "PG_VERSION").exists():
            server.run(
                str(server.bindir / "initdb"), "-D", data, "-U", "vnetbench", "--auth=trust", "--no-sync"
            )
        options = f"-c listen_addresses=127.0.0.1 -p {server.port} -k {root} -c max_connections=200"
        server.run(
            str(server.bindir / "pg_ctl"), "-D", data, "-l", str(root / "log"), "-o", options, "-w", "start"
        )
        yield server
    finally:
        with contextlib.suppress(Exception):
            server.run(str(server.bindir / "pg_ctl"), "-D", data, "-m", "fast", "-w", "stop")
        if keep is None:
            shutil.rmtree(root, ignore_errors=True)


# ---------------------------------------------------------------- serving and measuring


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextlib.contextmanager
def dashboard(url: str, cache: bool) -> Iterator[str]:
    """`vnetbench dashboard` in its own process (cache off: the same app with its answer cache disabled)."""
    port = _free_port()
    if cache:
        argv = [str(Path(sys.executable).parent / "vnetbench"), "dashboard", "--db", url, "--port", str(port)]
    else:
        argv = [sys.executable, __file__, "serve-uncached", url, str(port)]
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 120
        while True:
            if proc.poll() is not None:
                raise SystemExit(f"the dashboard exited ({proc.returncode}): {proc.stderr.read()}")
            with contextlib.suppress(httpx.HTTPError):
                if httpx.get(f"{base}/static/dashboard.css", timeout=2).status_code == 200:
                    break
            if time.monotonic() > deadline:
                raise SystemExit("the dashboard did not answer within 120 s")
            time.sleep(0.2)
        yield base
    finally:
        proc.terminate()
        proc.wait(30)


def serve_uncached(url: str, port: int) -> None:
    import uvicorn

    from vnetbench.dashboard import create_app

    app = create_app(url)
    app.state.dashboard.cache.enabled = False
    uvicorn.run(app, host="127.0.0.1", port=port, log_level="warning")


def load(base: str, path: str, params: dict[str, str], requests: int, clients: int) -> list[float]:
    """`requests` GETs from `clients` threads started together, each with its own keep-alive connection;
    returns every request's latency in ms (and checks every answer)."""
    todo: queue.Queue[int] = queue.Queue()
    for i in range(requests):
        todo.put(i)
    latencies: list[float] = []
    failures: list[str] = []
    lock = threading.Lock()
    start = threading.Barrier(clients)

    def client() -> None:
        with httpx.Client(base_url=base, timeout=120) as http:
            start.wait()
            while True:
                try:
                    todo.get_nowait()
                except queue.Empty:
                    return
                t0 = time.perf_counter()
                answer = http.get(path, params=params)
                ms = (time.perf_counter() - t0) * 1e3
                with lock:
                    latencies.append(ms)
                    if answer.status_code != 200:
                        failures.append(f"{answer.status_code} {answer.text[:200]}")

    threads = [threading.Thread(target=client) for _ in range(clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if failures:
        raise SystemExit(f"{path}: {len(failures)} failed requests, e.g. {failures[0]}")
    return latencies


def time_analyze(url: str) -> dict[str, Any]:
    """`vnetbench analyze` of the campaign, once (issue 16 asks <= 10 s; reported, not this one's target)."""
    argv = [str(Path(sys.executable).parent / "vnetbench"), "analyze", CAMPAIGN_ID, "--db", url, "--json"]
    t0 = time.monotonic()
    done = subprocess.run(argv, capture_output=True, text=True, timeout=1800)
    return {"seconds": round(time.monotonic() - t0, 1), "exit": done.returncode, "stderr": done.stderr[-300:]}


def p95(values: list[float]) -> float:
    return float(np.percentile(values, 95))


def check_answers(base: str) -> dict[str, Any]:
    """What the two endpoints return at this scale (so a fast wrong answer cannot pass)."""
    grid = httpx.get(f"{base}/api/campaigns/{CAMPAIGN_ID}", timeout=300).json()
    series = httpx.get(f"{base}/api/campaigns/{CAMPAIGN_ID}/series", params=SERIES, timeout=300).json()
    cells = sum(len(g["cells"]) for g in grid["grids"])
    assert grid["campaign"]["steps_done"] == grid["campaign"]["steps_total"] == 8640, grid["campaign"]
    assert len(series["points"]) == 240, len(series["points"])
    return {"grid_cells": cells, "grids": len(grid["grids"]), "series_points": len(series["points"])}


ENDPOINTS = {
    "grid": (f"/api/campaigns/{CAMPAIGN_ID}", {}),
    "series": (f"/api/campaigns/{CAMPAIGN_ID}/series", SERIES),
}


def main() -> int:
    if len(sys.argv) == 4 and sys.argv[1] == "serve-uncached":
        serve_uncached(sys.argv[2], int(sys.argv[3]))
        return 0
    if sys.argv[1:] == ["figure"]:  # redraw from summary.json
        figure(json.loads((HERE / "summary.json").read_text()))
        return 0
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=10_000_000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--requests", type=int, default=100)
    parser.add_argument("--clients", type=int, default=20)
    parser.add_argument("--backends", default="sqlite,postgresql")
    parser.add_argument(
        "--analyze", action="store_true", help="also time `vnetbench analyze` once per backend"
    )
    parser.add_argument(
        "--store-dir", type=Path, help="keep the filled stores here and reuse them on the next run"
    )
    args = parser.parse_args()
    sys.path.insert(0, str(REPO))  # tests.helpers.postgres, when it is there
    raw_dir = HERE / "raw"
    raw_dir.mkdir(exist_ok=True)
    keep = args.store_dir.resolve() if args.store_dir else None
    work = keep or Path(tempfile.mkdtemp(prefix="vnb-bench-dash-"))
    work.mkdir(parents=True, exist_ok=True)
    fills = work / "fill.json"  # a kept store's fill numbers, from the run that filled it
    backends = args.backends.split(",")
    results: dict[str, Any] = {"stores": json.loads(fills.read_text()) if fills.exists() else {}, "runs": []}
    with contextlib.ExitStack() as stack:
        urls = {}
        for backend in backends:
            if backend == "sqlite":
                url = str(work / "store.db")
            else:
                url = stack.enter_context(postgres(work / "pg" if keep else None))
            print(f"filling {backend} ...", flush=True)
            filled = fill(url, args.samples)
            results["stores"][backend] = filled or results["stores"].get(backend, {"reused": True})
            print(f"  {results['stores'][backend]}", flush=True)
            urls[backend] = url
        if keep:
            fills.write_text(json.dumps(results["stores"]))
        if args.analyze:
            results["analyze"] = {b: time_analyze(u) for b, u in urls.items()}
            print(f"  analyze: {results['analyze']}", flush=True)
        for cache in (True, False):
            for rnd in range(args.rounds):
                order = backends if rnd % 2 == 0 else backends[::-1]  # alternate who goes first
                for backend in order:
                    with dashboard(urls[backend], cache) as base:
                        # the first answer of a fresh server: reads the spec and makes the plan (steps_total)
                        for name, (path, params) in ENDPOINTS.items():
                            t0 = time.perf_counter()
                            httpx.get(base + path, params=params, timeout=600).raise_for_status()
                            first_ms = round((time.perf_counter() - t0) * 1e3, 1)
                            results["runs"].append(
                                {
                                    "backend": backend,
                                    "cache": cache,
                                    "round": rnd,
                                    "endpoint": name,
                                    "first_ms": first_ms,
                                }
                            )
                        if rnd == 0 and cache:
                            results.setdefault("answers", {})[backend] = check_answers(base)
                        for name, (path, params) in ENDPOINTS.items():
                            store_a_new_row(urls[backend])  # as a running campaign does: answers are stale
                            ms = load(base, path, params, args.requests, args.clients)
                            run = {
                                "backend": backend,
                                "cache": cache,
                                "round": rnd,
                                "endpoint": name,
                                "p50_ms": round(statistics.median(ms), 1),
                                "p95_ms": round(p95(ms), 1),
                                "max_ms": round(max(ms), 1),
                                "load1": round(os.getloadavg()[0], 2),
                            }
                            results["runs"].append(run)
                            raw = raw_dir / f"{backend}-{'cache' if cache else 'nocache'}-{rnd}-{name}.json"
                            raw.write_text(json.dumps(ms))
                            print(f"  {run}", flush=True)
    if keep is None:
        shutil.rmtree(work, ignore_errors=True)
    summary = summarize(results, args)
    (HERE / "summary.json").write_text(json.dumps(summary, indent=1) + "\n")
    figure(summary)
    print(table(summary))
    return 0


def summarize(results: dict[str, Any], args: argparse.Namespace) -> dict[str, Any]:
    rows = []
    backends = list(dict.fromkeys(r["backend"] for r in results["runs"]))
    for cache in (True, False):
        for endpoint in ENDPOINTS:
            for backend in backends:
                runs = [
                    r
                    for r in results["runs"]
                    if r["cache"] == cache and r["endpoint"] == endpoint and r["backend"] == backend
                ]
                bursts = [r for r in runs if "p95_ms" in r]
                firsts = [r["first_ms"] for r in runs if "first_ms" in r]
                p95s = [r["p95_ms"] for r in bursts]
                rows.append(
                    {
                        "cache": cache,
                        "endpoint": endpoint,
                        "backend": backend,
                        "p95_ms_median": round(statistics.median(p95s), 1),
                        "p95_ms_min": min(p95s),
                        "p95_ms_max": max(p95s),
                        "p50_ms_median": round(statistics.median(r["p50_ms"] for r in bursts), 1),
                        "first_ms_median": round(statistics.median(firsts), 1),
                        "first_ms_min": min(firsts),
                        "first_ms_max": max(firsts),
                    }
                )
    return {
        "question": "grid API and one pair's 10-day series, 10 M samples: p95 of 100 requests, 20 clients",
        "target_p95_ms": TARGET_P95_MS,
        "settings": {"requests": args.requests, "clients": args.clients, "rounds": args.rounds},
        "stores": {b: results["stores"].get(b) for b in backends},
        "answers": results.get("answers", {}),
        "analyze": results.get("analyze", {}),
        "rows": rows,
        "machine": {
            "cpus": os.cpu_count(),
            "python": platform.python_version(),
            "kernel": platform.release(),
            "load1_during": [r["load1"] for r in results["runs"] if "load1" in r],
        },
    }


def table(summary: dict[str, Any]) -> str:
    lines = [
        "| answer cache | request | measure | SQLite median [min–max] | PostgreSQL median [min–max] |",
        "|---|---|---|---|---|",
    ]
    by = {(r["cache"], r["endpoint"], r["backend"]): r for r in summary["rows"]}
    for cache in (True, False):
        for endpoint in ENDPOINTS:
            for measure, label in (("p95", "p95 of 100, 20 clients, ms"), ("first", "first answer, ms")):
                cells = []
                for backend in ("sqlite", "postgresql"):
                    r = by.get((cache, endpoint, backend))
                    if r is None:
                        cells.append("–")
                        continue
                    median, low, high = (r[f"{measure}_ms_{k}"] for k in ("median", "min", "max"))
                    cells.append(f"{median} [{low}–{high}]")
                mode = "on (default)" if cache else "off"
                lines.append(f"| {mode} | {endpoint} | {label} | {cells[0]} | {cells[1]} |")
    return "\n".join(lines)


def figure(summary: dict[str, Any]) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from vnetbench.report.cycle import use_palette

    use_palette()

    fig, axes = plt.subplots(1, 2, figsize=(11, 4.2))
    backends = list(summary["stores"])
    colours = {"sqlite": BLUE, "postgresql": MAGENTA}
    for ax, cache in zip(axes, (True, False), strict=True):
        rows = [r for r in summary["rows"] if r["cache"] == cache]
        for i, endpoint in enumerate(ENDPOINTS):
            for j, backend in enumerate(backends):
                r = next(x for x in rows if x["endpoint"] == endpoint and x["backend"] == backend)
                x = i + (j - (len(backends) - 1) / 2) * 0.35
                err = [[r["p95_ms_median"] - r["p95_ms_min"]], [r["p95_ms_max"] - r["p95_ms_median"]]]
                ax.bar(
                    x,
                    r["p95_ms_median"],
                    0.33,
                    color=colours.get(backend),
                    yerr=err,
                    capsize=4,
                    label=backend if i == 0 else None,
                )
                ax.text(x, r["p95_ms_max"], f"{r['p95_ms_median']:.0f}", ha="center", va="bottom", fontsize=8)
        ax.axhline(TARGET_P95_MS, color=NEUTRAL, linestyle="--", linewidth=1, label="target 300 ms")
        ax.set_xticks(range(len(ENDPOINTS)), ["grid (/api/campaigns/ID)", "one pair's 10-day series"])
        ax.set_title("answer cache on (default)" if cache else "answer cache off (every request queries)")
        ax.set_ylabel("p95 latency, ms (median of rounds; bars: min–max)")
        ax.legend(fontsize=8)
    s = summary["settings"]
    fig.suptitle(
        f"Dashboard with 10 M samples: p95 of {s['requests']} requests, {s['clients']} concurrent clients "
        f"({s['rounds']} rounds, fresh server each)",
        fontsize=10,
    )
    fig.tight_layout()
    fig.savefig(HERE / "dashboard.png", dpi=110)


if __name__ == "__main__":
    sys.exit(main())
