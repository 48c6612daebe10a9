#!/usr/bin/env python3
"""Build + teardown of 50, 200 and 1,000 nodes on 10 hosts at 3 sites: the local provider against a
plain ip/tc shell script.

The topology (`sites_spec`): 3 sites, 10 hosts (h1..h10, site s1, s2, s3, s1, ...), the nodes shared
evenly among the hosts, a Linux bridge per host with a 100 mbit link from each of its nodes, and a
100 mbit VXLAN link between the first nodes of consecutive hosts (9 links, carried over the
underlay between the host namespaces). Both methods build the same layout: every namespace with
`lo` up, the bridges, a veth per link end pair with its address and a tbf on both ends, each with
the default `shaping: network` relay (an IFB, a clsact qdisc and a mirred redirect filter), the
VXLAN devices over the underlay. Both tear down by deleting their namespaces only (the kernel
deletes the links with them). The methods alternate (A B, B A, ...) so drifting machine load hits
both alike.

The provider's numbers include what a real run pays: preflight (cached kernel probe), recording
every object in a SQLite store before creating it, the registry file, and marking rows removed.

Usage (root):  .venv/bin/python benchmarks/build_teardown/run.py [--sizes 50,200,1000] [--reps 5]
Writes the summary results.json and build_teardown.png next to this file; every run (raw/runs.json,
raw/runs.csv) and the generated scripts (raw/sites-N-*.sh) go to raw/, which git ignores.
`--redraw` draws build_teardown.png again from results.json, measuring nothing.
"""

from __future__ import annotations

import argparse
import csv
import itertools
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
from vnetbench.layout.objects import Interface  # noqa: E402
from vnetbench.palette import NEUTRAL  # noqa: E402
from vnetbench.providers.local import LocalProvider, netshaping  # noqa: E402
from vnetbench.providers.local.links import VXLAN_PORT  # noqa: E402
from vnetbench.spec import parse_spec  # noqa: E402
from vnetbench.store.db import Store  # noqa: E402

RATE = "100mbit"
HOSTS, SITES = 10, 3
GOAL_MS_PER_NODE = 2.0
GOAL_RATIO = 5.0


def sites_spec(nodes: int, hosts: int = HOSTS, sites: int = SITES) -> str:
    """N nodes on `hosts` hosts at `sites` sites: a bridge per host, VXLAN links between hosts."""
    per = -(-nodes // hosts)
    used = -(-nodes // per)  # hosts that get nodes
    lines = [f"name: sites{nodes}", "topology:", f"  sites: [{', '.join(f's{i + 1}' for i in range(sites))}]"]
    lines += ["  hosts:"] + [f"    - {{name: h{h + 1}, site: s{h % sites + 1}}}" for h in range(used)]
    lines += ["  nodes:"] + [f"    - {{name: n{i + 1}, host: h{i // per + 1}}}" for i in range(nodes)]
    lines += ["  switches:"]
    lines += [f"    - {{name: sw{h + 1}, kind: linux-bridge, host: h{h + 1}}}" for h in range(used)]
    lines += ["  links:"]
    lines += [f"    - {{endpoints: [n{i + 1}, sw{i // per + 1}], rate: {RATE}}}" for i in range(nodes)]
    firsts = [h * per + 1 for h in range(used)]
    lines += [
        f"    - {{name: x{h + 1}, endpoints: [n{a}, n{b}], rate: {RATE}, overlay: vxlan}}"
        for h, (a, b) in enumerate(itertools.pairwise(firsts))
    ]
    lines += [
        "measurements: [{name: rtt, kind: rtt, count: 5, interval: 200ms}]",
        f"patterns: [{{name: p, kind: pairs, pairs: [[n1, n2], [n1, n{per + 1}]], measurements: [rtt]}}]",
    ]
    return "\n".join(lines) + "\n"


def _shaper(iface: Interface) -> str | None:
    s = iface.shaper
    if s is None:
        return None
    if s.kind == "tbf":
        return f"root tbf rate {s.rate_bps}bit burst {s.burst_bytes} limit {s.queue_bytes}"
    raise ValueError(f"the script knows tbf only, not {s.kind}")


def _end(iface: Interface, ns: str) -> list[str]:
    out = [f"ip -n {ns} link set {iface.name} master {iface.master}"] if iface.master else []
    out += [f"ip -n {ns} addr add {iface.address} dev {iface.name}"] if iface.address else []
    out.append(f"ip -n {ns} link set {iface.name} up")
    if (tbf := _shaper(iface)) is not None:
        out.append(f"tc -n {ns} qdisc add dev {iface.name} {tbf}")
    if iface.shaper and iface.shaper.placement == "network":  # shaping: network (the default)
        relay = f"q{iface.name}"
        out += [
            f"ip -n {ns} link add {relay} mtu {iface.mtu} txqueuelen 10000 type ifb",
            f"tc -n {ns} qdisc add dev {relay} root handle 1: pfifo limit 10000",
            f"ip -n {ns} link set {relay} up",
            f"tc -n {ns} qdisc add dev {iface.name} clsact",
            f"tc -n {ns} filter add dev {iface.name} egress protocol all u32 match u32 0 0 "
            f"action mirred egress redirect dev {relay}",
        ]
    return out


def shell_scripts(layout: Layout, prefix: str) -> tuple[str, str, list[str]]:
    """(build script, teardown script, namespace names) doing what the provider does, with ip and tc."""
    rename = {ns: ns.replace(layout.prefix, prefix, 1) for ns in layout.namespaces}
    lines = ["#!/bin/bash", "set -e"]
    lines += [f"ip netns add {ns}" for ns in rename.values()]
    lines += [f"ip -n {ns} link set lo up" for ns in rename.values()]
    for br in layout.bridges:
        lines += [f"ip -n {rename[br.ns]} link add {br.name} mtu {br.mtu} type bridge"]
        lines += [f"ip -n {rename[br.ns]} link set {br.name} up"]
    for pair in layout.veths:
        a, b = pair.a, pair.b
        lines.append(
            f"ip -n {rename[a.ns]} link add {a.name} mtu {a.mtu} type veth "
            f"peer name {b.name} mtu {b.mtu} netns {rename[b.ns]}"
        )
        lines += _end(a, rename[a.ns]) + _end(b, rename[b.ns])
    for vx in layout.vxlans:
        ns, iface = rename[vx.iface.ns], vx.iface
        lines.append(
            f"ip -n {ns} link add {iface.name} mtu {iface.mtu} type vxlan id {vx.vni} local {vx.local} "
            f"remote {vx.remote} dev {vx.underlay_dev} dstport {VXLAN_PORT}"
        )
        lines += _end(iface, ns)
    for end, peer in netshaping.own_receive_queue(layout):  # the shaper's output in the peer's own queue
        lines.append(f"ip netns exec {rename[end.ns]} ethtool -K {end.name} tso off")
        lines.append(f"ip netns exec {rename[peer.ns]} ethtool -K {peer.name} gro on")
        if not netshaping.aggregates(layout, peer):  # a peer that forwards: frames go on as they came
            lines.append(f"ip -n {rename[peer.ns]} link set {peer.name} gro_max_size 0")
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


def settle_seconds(nodes: int) -> float:
    """How long the kernel takes to destroy a run's namespaces after teardown returns.

    Measured by tracing the kernel's cleanup_net work (workqueue events), a provider build torn
    down on a quiet 2-vCPU guest: 0.95 s from the first to the last clean-up for 50 nodes (61
    namespaces), 3.8 s for 1,000 (1,011). A build started within it waits on the clean-up's locks
    (a 50-node build straight after another's teardown: 16-17 ms/node against 2.3-3.6), so each run
    starts after this long, whichever method ran before it.
    """
    namespaces = nodes + HOSTS + 1
    return 1.0 + 0.003 * namespaces


def bench_size(nodes: int, reps: int, pause: float, raw: Path, store: Store) -> list[dict]:
    """Alternating runs of both methods on one size; each run's seconds."""
    tag = secrets.token_hex(3)
    campaign_id = f"bt{tag}"
    spec = sites_spec(nodes)
    layout = build_layout(parse_spec(spec).campaign, campaign_id)
    build_sh, teardown_sh, script_ns = shell_scripts(layout, f"vnbbench-{tag}")
    build_path, teardown_path = raw / f"sites-{nodes}-build.sh", raw / f"sites-{nodes}-teardown.sh"
    build_path.write_text(build_sh)
    teardown_path.write_text(teardown_sh)
    store.create_campaign(
        id=campaign_id,
        name=f"sites{nodes}",
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
        raise RuntimeError("\n".join(problems))

    def provider_run() -> tuple[float, float]:
        build_id = store.start_build(campaign_id, "sites", {})
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
        for rep in range(reps):
            order = ["provider", "ip-script"] if rep % 2 == 0 else ["ip-script", "provider"]
            for method in order:
                build_s, teardown_s = methods[method]()
                run = {"nodes": nodes, "namespaces": len(layout.namespaces), "method": method, "rep": rep}
                runs.append(
                    run | {"build_s": build_s, "teardown_s": teardown_s, "total_s": build_s + teardown_s}
                )
                print(
                    f"{nodes:5d} nodes rep {rep} {method:9s} build {build_s * 1e3 / nodes:6.2f} ms/node  "
                    f"teardown {teardown_s * 1e3 / nodes:6.2f} ms/node",
                    flush=True,
                )
                time.sleep(pause)
    finally:
        provider.teardown()
        remove_leftover_namespaces(script_ns)
    return runs


def summarise(runs: list[dict], sizes: list[int]) -> dict[str, dict]:
    out: dict[str, dict] = {}
    for nodes in sizes:
        mine = [r for r in runs if r["nodes"] == nodes]
        by = {
            method: {
                phase: spread([r[f"{phase}_s"] * 1e3 / nodes for r in mine if r["method"] == method])
                for phase in ("build", "teardown", "total")
            }
            for method in ("provider", "ip-script")
        }
        ratio = {
            phase: by["ip-script"][phase]["median"] / by["provider"][phase]["median"]
            for phase in ("build", "teardown", "total")
        }
        out[str(nodes)] = {
            "namespaces": mine[0]["namespaces"],
            "ms_per_node": by,
            "ratio_script_over_provider": ratio,
            "goal_met": by["provider"]["total"]["median"] <= GOAL_MS_PER_NODE
            and ratio["total"] >= GOAL_RATIO,
        }
    return out


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--sizes", default="50,200,1000", help="node counts, comma-separated")
    parser.add_argument("--reps", type=int, default=5, help="repetitions of each method per size (>= 5)")
    parser.add_argument(
        "--pause",
        type=float,
        default=None,
        help="seconds between runs, for the kernel to destroy the last run's namespaces "
        "(default: 1 s + 3 ms per namespace, see settle_seconds)",
    )
    parser.add_argument("--out", type=Path, default=HERE)
    parser.add_argument(
        "--redraw", action="store_true", help="draw build_teardown.png from OUT/results.json; measure nothing"
    )
    args = parser.parse_args()
    if args.redraw:
        saved = json.loads((args.out / "results.json").read_text())
        figure(saved["summary"], saved["sizes"], saved["repetitions"], args.out / "build_teardown.png")
        return 0
    if os.geteuid() != 0:
        print("run as root: it creates network namespaces", file=sys.stderr)
        return 2
    sizes = [int(s) for s in args.sizes.split(",") if s]
    raw = args.out / "raw"
    raw.mkdir(parents=True, exist_ok=True)
    workdir = Path(tempfile.mkdtemp(prefix="vnb-bench-"))
    store = Store(workdir / "bench.db")
    runs: list[dict] = []
    try:
        for nodes in sizes:
            pause = args.pause if args.pause is not None else settle_seconds(nodes)
            runs += bench_size(nodes, args.reps, pause, raw, store)
    finally:
        store.close()
    summary = summarise(runs, sizes)
    import pyroute2

    result = {
        "benchmark": "build_teardown",
        "topology": f"{HOSTS} hosts at {SITES} sites, a bridge per host, {RATE} links, VXLAN between hosts",
        "sizes": sizes,
        "repetitions": args.reps,
        "pause_seconds": {str(n): args.pause if args.pause is not None else settle_seconds(n) for n in sizes},
        "unit": "ms per node",
        "kernel": platform.release(),
        "cpus": os.cpu_count(),
        "load_average_at_end": os.getloadavg(),
        "python": platform.python_version(),
        "pyroute2": pyroute2.__version__,
        "date_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "summary": summary,
    }
    (args.out / "results.json").write_text(json.dumps(result, indent=2) + "\n")
    (raw / "runs.json").write_text(json.dumps(runs, indent=1) + "\n")
    with open(raw / "runs.csv", "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(runs[0]))
        writer.writeheader()
        writer.writerows(runs)
    figure(summary, sizes, args.reps, args.out / "build_teardown.png")
    print(
        f"\n{'nodes':>6} {'provider ms/node median [min-max]':>36} {'script ms/node':>16} {'ratio':>6}  goal"
    )
    for nodes in sizes:
        s = summary[str(nodes)]
        p, q = s["ms_per_node"]["provider"]["total"], s["ms_per_node"]["ip-script"]["total"]
        print(
            f"{nodes:6d} {p['median']:14.2f} [{p['min']:.2f}-{p['max']:.2f}]{'':9s}{q['median']:12.2f}"
            f"{s['ratio_script_over_provider']['total']:9.1f}  {'met' if s['goal_met'] else 'NOT met'}"
        )
    return 0


def figure(summary: dict[str, dict], sizes: list[int], reps: int, path: Path) -> None:
    """Per phase, each method's ms per node against the size: median [min–max] of its runs (the
    summary's, so --redraw draws the same figure from results.json)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from vnetbench.report.cycle import use_palette

    use_palette()  # the methods in the palette's blue and black, the goal grey dashed and named
    fig, axes = plt.subplots(1, 3, figsize=(11, 3.8))
    for ax, phase in zip(axes, ("build", "teardown", "total"), strict=True):
        for method, label in (("provider", "provider"), ("ip-script", "ip/tc script")):
            per = [summary[str(n)]["ms_per_node"][method][phase] for n in sizes]
            med = [p["median"] for p in per]
            err = [[p["median"] - p["min"] for p in per], [p["max"] - p["median"] for p in per]]
            ax.errorbar(sizes, med, yerr=err, marker="o", capsize=3, label=label)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xticks(sizes, [str(n) for n in sizes])
        ax.set_xlabel("nodes (10 hosts, 3 sites)")
        ax.set_ylabel("ms per node, median [min–max]")
        ax.set_title(phase)
        ax.grid(alpha=0.3, which="both")
    axes[2].axhline(GOAL_MS_PER_NODE, color=NEUTRAL, ls="--", lw=1)
    axes[2].text(
        sizes[0],
        GOAL_MS_PER_NODE,
        f"goal {GOAL_MS_PER_NODE:g} ms/node",
        va="bottom",
        fontsize=8,
        color=NEUTRAL,
    )
    axes[0].legend(fontsize=8)
    fig.suptitle(f"build + teardown per node ({reps} runs each per size, methods alternating)")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


if __name__ == "__main__":
    sys.exit(main())
