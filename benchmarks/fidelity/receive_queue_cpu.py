"""What the receive-queue fix costs in CPU (docs/fidelity-notes.md section 8): TCP through a
network-shaped Linux bridge port, as the build makes it (TSO off on the port, GRO on at its peer, a
node's own interface, aggregating with GRO's default size 65,536) against the build before
2026-11-27 (the same with a GRO size of 0 at the peer: no aggregation) and against TSO left on
(the fix undone by hand).

Two nodes on one Linux bridge, 1 gbit links (defaults otherwise: `shaping: network`), one iperf3
TCP flow for 8 s per run; the three arms alternate (forward, then reversed) over REPS repetitions.
CPU = the machine's busy time from /proc/stat over the run (user + nice + system + irq + softirq;
steal left out), per Gbit delivered. Nothing else should run.

Usage (root):  .venv/bin/python benchmarks/fidelity/receive_queue_cpu.py [--reps 5]   # ~3 min
Writes receive_queue_cpu.json (runs and medians) and receive_queue_cpu.png next to this file;
`--redraw` only redraws the figure from the json's runs (no root, nothing measured).
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import time
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
from hand_built import hand_built  # this folder's (the script's directory is on sys.path)

from vnetbench.layout import Layout
from vnetbench.layout.objects import Interface
from vnetbench.palette import BLUE
from vnetbench.providers.local import netshaping
from vnetbench.report.cycle import use_palette

use_palette()
HERE = Path(__file__).resolve().parent
SECONDS = 8
PORT = 5201
SPEC = """
name: receive-queue-cpu
topology:
  hosts: [{name: h1}]
  nodes: [{name: a, host: h1}, {name: b, host: h1}]
  switches: [{name: sw, kind: linux-bridge, host: h1}]
  links:
    - {endpoints: [a, sw], rate: 1gbit}
    - {endpoints: [b, sw], rate: 1gbit}
measurements: [{name: t, kind: tcp}]
patterns: [{kind: pairs, pairs: [[a, b]], measurements: [t]}]
"""
# arm -> (TSO on the shaped port, GRO size at its peer)
ARMS = {
    "default (TSO off, GRO aggregating)": ("off", 65536),
    "TSO off, GRO size 0 (until 2026-11-27)": ("off", 0),
    "TSO on (the fix undone)": ("on", 65536),
}


def busy_and_steal_s() -> tuple[float, float]:
    """The machine's busy and steal CPU seconds so far (/proc/stat's first line, USER_HZ = 100)."""
    user, nice, system, _idle, _iowait, irq, softirq, steal = (
        int(x) for x in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:9]
    )
    return (user + nice + system + irq + softirq) / 100, steal / 100


def set_arm(pairs: list[tuple[Interface, Interface]], tso: str, gro_size: int) -> None:
    for end, peer in pairs:
        subprocess.run(["ip", "netns", "exec", end.ns, "ethtool", "-K", end.name, "tso", tso], check=True)
        subprocess.run(
            ["ip", "-n", peer.ns, "link", "set", "dev", peer.name, "gro_max_size", str(gro_size)], check=True
        )


def node_interface(layout: Layout, node: str) -> Interface:
    return next(i for i in layout.interfaces() if i.ns == layout.node_ns[node] and i.address)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument(
        "--redraw", action="store_true", help="only redraw the figure from receive_queue_cpu.json"
    )
    args = ap.parse_args()
    if args.redraw:  # every run is kept in the json: nothing measured
        runs = json.loads((HERE / "receive_queue_cpu.json").read_text())["runs"]
        figure(runs, HERE / "receive_queue_cpu.png")
        return
    runs = []
    with hand_built(SPEC, "receive-queue-cpu", "rq") as (layout, provider):
        server = None
        try:
            pairs = netshaping.own_receive_queue(layout)
            src, dst = node_interface(layout, "a"), node_interface(layout, "b")
            address = str(dst.address).split("/")[0]
            server = provider.spawn("b", ["iperf3", "-s", "-B", address, "-p", str(PORT)])
            if not provider.wait_listening(server, PORT, "tcp", 10.0):
                raise SystemExit("iperf3's server did not listen within 10 s")
            names = list(ARMS)
            for rep in range(args.reps):
                for arm in names if rep % 2 == 0 else names[::-1]:
                    set_arm(pairs, *ARMS[arm])
                    busy0, steal0 = busy_and_steal_s()
                    client = ["iperf3", "-c", address, "-p", str(PORT), "-t", str(SECONDS), "-J"]
                    out = subprocess.run(
                        ["ip", "netns", "exec", src.ns, *client], capture_output=True, text=True, check=True
                    ).stdout
                    busy1, steal1 = busy_and_steal_s()
                    bps = json.loads(out)["end"]["sum_received"]["bits_per_second"]
                    ms_per_gbit = (busy1 - busy0) * 1000 / (bps * SECONDS / 1e9)
                    runs.append({"arm": arm, "rep": rep, "mbit_s": bps / 1e6, "busy_s": busy1 - busy0,
                                 "steal_s": steal1 - steal0, "cpu_ms_per_gbit": ms_per_gbit})  # fmt: skip
                    print(
                        f"rep {rep} {arm:30s} {bps / 1e6:6.1f} Mbit/s  {ms_per_gbit:6.1f} ms CPU per Gbit",
                        flush=True,
                    )
        finally:
            if server is not None:
                server.kill()
    summary = {}
    for arm in ARMS:
        cpu = [float(r["cpu_ms_per_gbit"]) for r in runs if r["arm"] == arm]  # type: ignore[arg-type]
        rate = [float(r["mbit_s"]) for r in runs if r["arm"] == arm]  # type: ignore[arg-type]
        summary[arm] = {"cpu_ms_per_gbit_median": statistics.median(cpu), "min": min(cpu), "max": max(cpu),
                        "mbit_s_median": statistics.median(rate)}  # fmt: skip
    base = summary[names[0]]["cpu_ms_per_gbit_median"]
    for arm in ARMS:
        summary[arm]["ratio_to_default"] = summary[arm]["cpu_ms_per_gbit_median"] / base
    finished = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    result = {"finished": finished, "seconds": SECONDS, "reps": args.reps, "summary": summary, "runs": runs}
    (HERE / "receive_queue_cpu.json").write_text(json.dumps(result, indent=1))
    figure(runs, HERE / "receive_queue_cpu.png")
    print(json.dumps(summary, indent=1))


def figure(runs: list[dict[str, object]], path: Path) -> None:
    fig, ax = plt.subplots(figsize=(7, 3.2))
    for i, arm in enumerate(ARMS):
        values = [float(r["cpu_ms_per_gbit"]) for r in runs if r["arm"] == arm]  # type: ignore[arg-type]
        ax.scatter([i] * len(values), values, color=BLUE, alpha=0.6)
        ax.hlines(statistics.median(values), i - 0.25, i + 0.25, color="black")
    ax.set_xticks(range(len(ARMS)), list(ARMS), fontsize=8)
    ax.set_ylabel("machine CPU, ms per Gbit delivered")
    ax.set_ylim(bottom=0)
    ax.set_title("TCP through a network-shaped bridge port, 1 gbit (line: median)", fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=110)


if __name__ == "__main__":
    main()
