"""The telemetry sampler's own CPU cost, as a share of one core (requirement: ≤ 2 % at the default 1 s).

Builds two real topologies with the local provider (root), then runs the sampler exactly as the
runner does (host CPU, /proc/net/{snmp,netstat,dev} and tc qdisc stats of every namespace on the
flow's path) for DURATION seconds at each interval, REPEATS times, cases interleaved so they share
the machine's conditions. Cost = the sampler thread's CPU time (time.thread_time_ns) / wall time.
Also reports the per-reading cost. Writes the summary to results.json, every run to raw/results.json
(git ignores raw/), and prints a summary table.

    sudo .venv/bin/python benchmarks/telemetry/run.py [--duration 10] [--repeats 5]
"""

from __future__ import annotations

import argparse
import json
import os
import secrets
import statistics
import tempfile
import time
from pathlib import Path

from vnetbench.layout import build_layout
from vnetbench.layout.flowpath import flow_path
from vnetbench.palette import BLUE, NEUTRAL
from vnetbench.providers.local import LocalProvider
from vnetbench.spec import parse_spec
from vnetbench.store.db import Store
from vnetbench.telemetry.sampler import Sampler
from vnetbench.telemetry.sources import HostSource, NamespaceSource, ProcessSource

HERE = Path(__file__).parent
CASES = {
    "switch-pair": (
        """
name: bench
topology:
  nodes: [{name: a}, {name: b}]
  switches: [{name: sw}]
  links: [{endpoints: [a, sw], rate: 100mbit}, {endpoints: [sw, b], rate: 100mbit}]
measurements: [{name: u, kind: udp}]
patterns: [{kind: pairs, pairs: [[a, b]], measurements: [u]}]
""",
        ("a", "b"),
    ),
    "vxlan-cross-site": (
        """
name: bench
topology:
  sites: [s1, s2]
  hosts: [{name: h1, site: s1}, {name: h2, site: s2}]
  nodes: [{name: a, host: h1}, {name: b, host: h2}]
  links: [{endpoints: [a, b], rate: 10mbit, overlay: vxlan}]
measurements: [{name: u, kind: udp}]
patterns: [{kind: pairs, pairs: [[a, b]], measurements: [u]}]
""",
        ("a", "b"),
    ),
}
INTERVALS_NS = (1_000_000_000, 200_000_000)


def build(name: str, spec: str, tmp: Path) -> tuple[LocalProvider, object, Store]:
    cid = "bt" + secrets.token_hex(3)
    layout = build_layout(parse_spec(spec).campaign, cid)
    store = Store(tmp / f"{name}.db")
    store.create_campaign(
        id=cid, name=name, status="running", provider="local", spec_text="", spec_sha256="-",
        spec_source="bench", seed=0, environment={}, tool_versions={},
    )  # fmt: skip
    provider = LocalProvider(cid, store.location, tools=())
    build_id = store.start_build(cid, "t", {})
    provider.build(layout, build_id, lambda items: store.record_objects(cid, build_id, items))
    return provider, layout, store


def sample_once(
    provider: LocalProvider, layout: object, pair: tuple[str, str], interval: int, seconds: float
) -> dict:
    path = flow_path(layout, *pair)
    interfaces: dict[str, set[str]] = {ns: set() for ns in path.namespaces}
    shaped = set()
    for hop in path.hops:
        interfaces[hop.ns].add(hop.name)
        if hop.shaper:
            shaped.add(hop.ns)
    sources = [HostSource(), ProcessSource({"pid:self": os.getpid()})]
    sources += [
        NamespaceSource(ns, provider.namespace_fd(ns), names, ns in shaped)
        for ns, names in interfaces.items()
    ]
    try:
        sampler = Sampler(sources, interval)
        sampler.start()
        time.sleep(seconds)
        result = sampler.stop()
    finally:
        for s in sources:
            if hasattr(s, "close"):
                s.close()
    return {
        "namespaces": len(interfaces),
        "interfaces": sum(len(v) for v in interfaces.values()),
        "readings": result.readings,
        "rows": len(result.rows),
        "cpu_ns": result.sampler_cpu_ns,
        "wall_ns": result.duration_ns,
        "core_percent": 100 * result.sampler_cpu_ns / result.duration_ns,
        "per_reading_us": result.sampler_cpu_ns / (result.readings + 1) / 1e3,
        "errors": result.errors,
    }


def plot(results: dict) -> Path:
    """Median share of a core per case and interval, with the min-max range of the repeats."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from vnetbench.report.cycle import use_palette

    use_palette()

    summary = results["summary"]
    fig, ax = plt.subplots(figsize=(6.5, 3.4))
    labels = [f"{s['case']}\n{s['interval_s']:g} s" for s in summary]
    med = [s["median_core_percent"] for s in summary]
    err = [
        [m - s["min_core_percent"] for m, s in zip(med, summary, strict=True)],
        [s["max_core_percent"] - m for m, s in zip(med, summary, strict=True)],
    ]
    ax.bar(range(len(summary)), med, yerr=err, capsize=4, color=BLUE)
    ax.axhline(2.0, color=NEUTRAL, linestyle="--", label="budget: 2 % of a core at 1 s")
    ax.set_xticks(range(len(summary)), labels, fontsize=8)
    ax.set_ylabel("sampler CPU (% of one core)")
    ax.set_title(f"Sampler cost: median, min-max of {results['repeats']} runs of {results['duration_s']:g} s")
    ax.legend(fontsize=8)
    fig.tight_layout()
    out = HERE / "sampler_cost.png"
    fig.savefig(out, dpi=110)
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--duration", type=float, default=10.0)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--plot-only", action="store_true", help="redraw the figure from results.json")
    args = ap.parse_args()
    if args.plot_only:
        print(plot(json.loads((HERE / "results.json").read_text())))
        return
    built = {}
    runs: list[dict] = []
    with tempfile.TemporaryDirectory() as tmp:
        try:
            for name, (spec, _) in CASES.items():
                built[name] = build(name, spec, Path(tmp))
            for rep in range(args.repeats):
                for interval in INTERVALS_NS:
                    for name, (_, pair) in CASES.items():
                        provider, layout, _store = built[name]
                        r = sample_once(provider, layout, pair, interval, args.duration)
                        runs.append({"case": name, "interval_ns": interval, "repeat": rep, **r})
                        print(f"{name:18s} {interval / 1e9:4.1f} s  {r['core_percent']:.3f} % of a core  "
                              f"{r['per_reading_us']:.0f} µs/reading", flush=True)  # fmt: skip
        finally:
            for provider, _, store in built.values():
                store.mark_removed(provider.teardown())
                store.close()
    summary = []
    for interval in INTERVALS_NS:
        for name in CASES:
            sel = [r for r in runs if r["case"] == name and r["interval_ns"] == interval]
            pct = [r["core_percent"] for r in sel]
            per = [r["per_reading_us"] for r in sel]
            summary.append(
                {
                    "case": name,
                    "interval_s": interval / 1e9,
                    "namespaces": sel[0]["namespaces"],
                    "interfaces": sel[0]["interfaces"],
                    "n": len(sel),
                    "median_core_percent": statistics.median(pct),
                    "min_core_percent": min(pct),
                    "max_core_percent": max(pct),
                    "median_us_per_reading": statistics.median(per),
                }
            )
    out = {
        "duration_s": args.duration,
        "repeats": args.repeats,
        "cpus": os.cpu_count(),
        "kernel": os.uname().release,
        "summary": summary,
        "runs": runs,
    }
    (HERE / "raw").mkdir(exist_ok=True)  # every run: regenerated, not kept in git
    (HERE / "raw" / "results.json").write_text(json.dumps(out, indent=1))
    (HERE / "results.json").write_text(json.dumps({k: v for k, v in out.items() if k != "runs"}, indent=1))
    plot(out)
    print("\ncase                interval  ns  ifs  median %core  [min, max]   µs/reading")
    for s in summary:
        print(f"{s['case']:18s} {s['interval_s']:6.1f} s {s['namespaces']:3d} {s['interfaces']:4d}  "
              f"{s['median_core_percent']:10.3f}   [{s['min_core_percent']:.3f}, {s['max_core_percent']:.3f}]"
              f"  {s['median_us_per_reading']:8.0f}")  # fmt: skip


if __name__ == "__main__":
    main()
