#!/usr/bin/env python3
"""Build + teardown of an N-node star: the local provider against a plain ip/tc shell script.

Both build the same thing: N node namespaces and one host namespace, a veth from every node into
the host namespace enslaved to one Linux bridge, an address on every node, `lo` up, and a tbf
(100 Mbit/s, the layout's burst and limit) on both ends of every link, each with the default
`shaping: network` relay (an IFB, a clsact qdisc and a mirred redirect filter). Both tear down by deleting
their namespaces only (the kernel deletes the links with them). The two methods alternate
(A B, B A, ...) so drifting machine load hits both alike.

The provider's numbers include what a real run pays: preflight (cached kernel probe), recording
every object in a SQLite store before creating it, the registry file, and marking rows removed.

Usage (root):  .venv/bin/python benchmarks/build_teardown/run.py [--nodes 50] [--reps 7]
Writes the summary results.json and build_teardown.png next to this file; every run (raw/results.json,
raw/results.csv) and the generated scripts (raw/star-*.sh) go to raw/, which git ignores.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import platform
import secrets
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1] / "src"))

from vnetbench.layout import Layout, build_layout  # noqa: E402
from vnetbench.providers.local import LocalProvider  # noqa: E402
from vnetbench.spec import parse_spec  # noqa: E402
from vnetbench.store.db import Store  # noqa: E402

RATE = "100mbit"


def star_spec(nodes: int) -> str:
    node_lines = "\n".join(f"    - {{name: n{i}}}" for i in range(1, nodes + 1))
    link_lines = "\n".join(f"    - {{endpoints: [n{i}, sw], rate: {RATE}}}" for i in range(1, nodes + 1))
    return f"""
name: star{nodes}
topology:
  nodes:
{node_lines}
  switches: [{{name: sw}}]
  links:
{link_lines}
measurements: [{{name: ping, kind: rtt}}]
patterns: [{{kind: pairs, pairs: [[n1, n2]], measurements: [ping]}}]
"""


def shell_scripts(layout: Layout, prefix: str) -> tuple[str, str, list[str]]:
    """(build script, teardown script, namespace names) doing what the provider does, with ip and tc."""
    rename = {ns: ns.replace(layout.prefix, prefix, 1) for ns in layout.namespaces}
    host = rename[next(iter(layout.host_ns.values()))]
    bridge = layout.bridges[0]
    lines = ["#!/bin/bash", "set -e"]
    lines += [f"ip netns add {ns}" for ns in rename.values()]
    lines += [f"ip -n {ns} link set lo up" for ns in rename.values()]
    lines.append(f"ip -n {host} link add {bridge.name} mtu {bridge.mtu} type bridge")
    lines.append(f"ip -n {host} link set {bridge.name} up")
    for pair in layout.veths:
        node, port = pair.a, pair.b
        node_ns, port_ns = rename[node.ns], rename[port.ns]
        shaper = node.shaper
        assert shaper is not None
        tbf = f"root tbf rate {shaper.rate_bps}bit burst {shaper.burst_bytes} limit {shaper.queue_bytes}"
        lines += [
            f"ip -n {port_ns} link add {port.name} mtu {port.mtu} type veth "
            f"peer name {node.name} mtu {node.mtu} netns {node_ns}",
            f"ip -n {port_ns} link set {port.name} master {bridge.name} up",
            f"ip -n {node_ns} addr add {node.address} dev {node.name}",
            f"ip -n {node_ns} link set {node.name} up",
            f"tc -n {node_ns} qdisc add dev {node.name} {tbf}",
            f"tc -n {port_ns} qdisc add dev {port.name} {tbf}",
        ]
        for ns, iface in ((node_ns, node), (port_ns, port)):
            if iface.shaper and iface.shaper.placement == "network":  # shaping: network (the default)
                relay = f"q{iface.name}"
                lines += [
                    f"ip -n {ns} link add {relay} mtu {iface.mtu} txqueuelen 10000 type ifb",
                    f"ip -n {ns} link set {relay} up",
                    f"tc -n {ns} qdisc add dev {iface.name} clsact",
                    f"tc -n {ns} filter add dev {iface.name} egress protocol all u32 match u32 0 0 "
                    f"action mirred egress redirect dev {relay}",
                ]
    teardown = ["#!/bin/bash", "set -e"] + [f"ip netns delete {ns}" for ns in rename.values()]
    return "\n".join(lines) + "\n", "\n".join(teardown) + "\n", list(rename.values())


def run_script(path: Path) -> float:
    started = time.perf_counter()
    result = subprocess.run(["bash", str(path)], capture_output=True, text=True)
    elapsed = time.perf_counter() - started
    if result.returncode != 0:
        raise RuntimeError(f"{path.name} failed: {result.stderr.strip()[-500:]}")
    return elapsed


def remove_leftover_namespaces(names: list[str]) -> None:
    for name in names:
        if os.path.exists(f"/run/netns/{name}"):
            subprocess.run(["ip", "netns", "delete", name], capture_output=True)


def spread(values: list[float]) -> dict[str, float]:
    q = statistics.quantiles(values, n=4) if len(values) >= 2 else [values[0]] * 3
    return {
        "median": statistics.median(values),
        "min": min(values),
        "max": max(values),
        "q1": q[0],
        "q3": q[2],
    }


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--nodes", type=int, default=50)
    parser.add_argument("--reps", type=int, default=7, help="repetitions of each method (>= 5)")
    parser.add_argument("--pause", type=float, default=1.0, help="seconds between runs (kernel cleanup)")
    parser.add_argument("--out", type=Path, default=HERE)
    args = parser.parse_args()
    if os.geteuid() != 0:
        print("run as root: it creates network namespaces", file=sys.stderr)
        return 2
    raw = args.out / "raw"
    raw.mkdir(parents=True, exist_ok=True)

    tag = secrets.token_hex(3)
    campaign_id = f"bt{tag}"
    spec = star_spec(args.nodes)
    layout = build_layout(parse_spec(spec).campaign, campaign_id)
    build_sh, teardown_sh, script_ns = shell_scripts(layout, f"vnbbench-{tag}")
    build_path, teardown_path = raw / "star-build.sh", raw / "star-teardown.sh"
    build_path.write_text(build_sh)
    teardown_path.write_text(teardown_sh)

    workdir = Path(tempfile.mkdtemp(prefix="vnb-bench-"))
    store = Store(workdir / "bench.db")
    store.create_campaign(
        id=campaign_id,
        name=f"star{args.nodes}",
        status="running",
        provider="local",
        spec_text=spec,
        spec_sha256="-",
        spec_source="benchmarks/build_teardown/run.py",
        seed=0,
        environment={},
        tool_versions={},
    )
    provider = LocalProvider(campaign_id, store.location)
    problems = provider.preflight(layout)
    if problems:
        print("\n".join(problems), file=sys.stderr)
        return 1

    def provider_run() -> tuple[float, float]:
        build_id = store.start_build(campaign_id, "star", {})
        started = time.perf_counter()
        provider.build(layout, build_id, lambda items: store.record_objects(campaign_id, build_id, items))
        built = time.perf_counter()
        store.mark_removed(provider.teardown())
        return built - started, time.perf_counter() - built

    def script_run() -> tuple[float, float]:
        try:
            build = run_script(build_path)
        except BaseException:
            remove_leftover_namespaces(script_ns)
            raise
        return build, run_script(teardown_path)

    methods = {"provider": provider_run, "ip-script": script_run}
    runs = []
    try:
        for rep in range(args.reps):
            order = ["provider", "ip-script"] if rep % 2 == 0 else ["ip-script", "provider"]
            for method in order:
                build_s, teardown_s = methods[method]()
                runs.append(
                    {
                        "method": method,
                        "rep": rep,
                        "build_s": build_s,
                        "teardown_s": teardown_s,
                        "total_s": build_s + teardown_s,
                    }
                )
                print(
                    f"rep {rep} {method:9s} build {build_s * 1e3 / args.nodes:6.2f} ms/node  "
                    f"teardown {teardown_s * 1e3 / args.nodes:6.2f} ms/node",
                    flush=True,
                )
                time.sleep(args.pause)
    finally:
        provider.teardown()
        remove_leftover_namespaces(script_ns)
        store.close()

    summary: dict[str, dict[str, dict[str, float]]] = {}
    for method in methods:
        mine = [r for r in runs if r["method"] == method]
        summary[method] = {
            phase: spread([r[f"{phase}_s"] * 1e3 / args.nodes for r in mine])
            for phase in ("build", "teardown", "total")
        }
    ratio = {
        phase: summary["ip-script"][phase]["median"] / summary["provider"][phase]["median"]
        for phase in ("build", "teardown", "total")
    }
    import pyroute2

    result = {
        "benchmark": "build_teardown",
        "nodes": args.nodes,
        "namespaces": len(layout.namespaces),
        "repetitions": args.reps,
        "unit": "ms per node",
        "kernel": platform.release(),
        "cpus": os.cpu_count(),
        "python": platform.python_version(),
        "pyroute2": pyroute2.__version__,
        "date_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "summary_ms_per_node": summary,
        "ratio_script_over_provider": ratio,
        "runs": runs,
    }
    (raw / "results.json").write_text(json.dumps(result, indent=2) + "\n")
    summary_only = {k: v for k, v in result.items() if k != "runs"}
    (args.out / "results.json").write_text(json.dumps(summary_only, indent=2) + "\n")
    with open(raw / "results.csv", "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=["method", "rep", "build_s", "teardown_s", "total_s"])
        writer.writeheader()
        writer.writerows(runs)
    figure(runs, args.nodes, args.out / "build_teardown.png")

    print()
    print(
        f"{'ms per node':12s} {'provider median [min-max]':>30s} "
        f"{'ip script median [min-max]':>30s} {'ratio':>6s}"
    )
    for phase in ("build", "teardown", "total"):
        p, s = summary["provider"][phase], summary["ip-script"][phase]
        print(
            f"{phase:12s} {p['median']:12.2f} [{p['min']:.2f}-{p['max']:.2f}]{'':6s}"
            f"{s['median']:12.2f} [{s['min']:.2f}-{s['max']:.2f}]{'':6s}{ratio[phase]:6.1f}"
        )
    ok = summary["provider"]["total"]["median"] <= 10 and ratio["total"] > 1
    print(f"goal (<= 10 ms/node total and faster than the script): {'met' if ok else 'NOT met'}")
    return 0 if ok else 1


def figure(runs: list[dict], nodes: int, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    phases = ("build", "teardown", "total")
    fig, axes = plt.subplots(1, 3, figsize=(10, 3.6))
    for ax, phase in zip(axes, phases, strict=True):
        data = [
            [r[f"{phase}_s"] * 1e3 / nodes for r in runs if r["method"] == method]
            for method in ("provider", "ip-script")
        ]
        ax.boxplot(data, widths=0.5, showfliers=False)
        for i, values in enumerate(data, start=1):
            ax.scatter([i] * len(values), values, s=12, alpha=0.6, zorder=3)
        ax.set_xticks([1, 2], ["provider", "ip/tc script"])
        ax.set_title(phase)
        ax.set_ylabel("ms per node")
        ax.set_ylim(bottom=0)
        ax.grid(axis="y", alpha=0.3)
    if max(r["total_s"] for r in runs) * 1e3 / nodes > 10:
        axes[2].axhline(10, color="grey", linestyle="--", linewidth=1)
        axes[2].text(0.55, 10, "goal 10 ms/node", va="bottom", fontsize=8, color="grey")
    reps = sum(1 for r in runs if r["method"] == "provider")
    fig.suptitle(f"{nodes}-node star: build + teardown ({reps} runs each, alternating)")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


if __name__ == "__main__":
    sys.exit(main())
