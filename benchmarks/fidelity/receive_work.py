"""Where a switch's work on a node's frames runs, and what that does to one fast sender into an
overloaded shaper (docs/fidelity-notes.md section 9, the known limit).

One node s sends vnb-probe datagrams of 18 bytes (64-byte frames) through a Linux bridge, a
`fabric` link of `pps: 30000` (network shaping, the default) and a second bridge to node r; offered
1.5x, 2x, 3x and 6.7x the fabric's rate (45K, 60K, 90K, 200K packets/s, 3 s each). A network
would pass 30K packets/s and drop the rest at the fabric's shaper (loss 1 - 1/k of the offered).
Three arms, set by hand on the bridge port that receives s's frames (its veth peer), alternating
in order over REPS rounds:

- "in the send (as built)": the build as it is: the port receives in s's own sendmsg, so the
  bridge, the fabric's shaper and the delivery to r all run on s's CPU, in s's time.
- "RPS, all CPUs": Receive Packet Steering over every CPU: the port queues the frame for the CPU
  the flow hashes to and returns.
- "threaded NAPI": the port receives in a NAPI queue of its own (GRO on with size 0 and UDP GRO
  forwarding, so veth uses it for local UDP) polled by a kernel thread the scheduler can place.

Per run: what s sent (of what was offered), what r received, where the rest was dropped (the
fabric's tbf, the port's receive, r's socket, or unexplained), s's system CPU per packet sent.
After each arm's rates: 200 pings s -> r at 5 ms (median and p99 RTT), the price of each arm.

Usage (root):  .venv/bin/python benchmarks/fidelity/receive_work.py [--reps 5]   # ~5 min
Writes receive_work.json (the medians and one compact row per run) and receive_work.png next to
this file; every ping's RTT, for the figure, to raw/receive_work_runs.json (not in git).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import time
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
from hand_built import hand_built  # this folder's (the script's directory is on sys.path)

from vnetbench.drivers.probe import probe_path
from vnetbench.layout import Layout
from vnetbench.palette import NEUTRAL, SERIES
from vnetbench.report.cycle import use_palette

use_palette()
HERE = Path(__file__).resolve().parent
SECONDS = 3
FABRIC_PPS = 30_000
OFFERED = (45_000, 60_000, 90_000, 200_000)
PORT = 9000
PINGS = 200
SPEC = f"""
name: receive-work
topology:
  hosts: [{{name: cn}}]
  nodes: [{{name: s}}, {{name: r}}]
  switches:
    - {{name: sw-in, kind: linux-bridge}}
    - {{name: sw-out, kind: linux-bridge}}
  links:
    - {{name: fabric, endpoints: [sw-in, sw-out], pps: {FABRIC_PPS}}}
    - {{endpoints: [s, sw-in]}}
    - {{endpoints: [sw-out, r], rate: 1gbit}}
measurements: [{{name: sweep, kind: pps, rates: [{FABRIC_PPS}], sizes: [18], duration: 2s}}]
patterns: [{{kind: pairs, pairs: [[s, r]], measurements: [sweep]}}]
"""
ARMS = ("in the send (as built)", "RPS, all CPUs", "threaded NAPI")


def sh(ns: str, command: str) -> str:
    return subprocess.run(
        ["ip", "netns", "exec", ns, "sh", "-c", command], capture_output=True, text=True, check=True
    ).stdout


def set_arm(ns: str, port: str, arm: str) -> None:
    """Undo every arm, then set this one (in an order the kernel accepts)."""
    queue = f"/sys/class/net/{port}/queues/rx-0"
    sh(ns, f"echo 0 > /sys/class/net/{port}/threaded; echo 0 > {queue}/rps_cpus")
    sh(ns, f"ethtool -K {port} gro off rx-udp-gro-forwarding off")
    if arm == "RPS, all CPUs":
        mask = sum(1 << cpu for cpu in os.sched_getaffinity(0))
        sh(ns, f"echo {mask:x} > {queue}/rps_cpus")
    elif arm == "threaded NAPI":
        sh(ns, f"ethtool -K {port} gro on rx-udp-gro-forwarding on")
        sh(ns, f"ip link set dev {port} gro_max_size 0; echo 1 > /sys/class/net/{port}/threaded")


def counters(layout: Layout) -> dict[str, int]:
    """Frames dropped so far by every tbf in the host namespace, and on their way into the port:
    a veth counts every frame its peer refused (a full backlog under RPS, a full NAPI ring when
    threaded) as a tx drop of the sending end, s's eth0 (the port's rx counter has the backlog's
    drops a second time, so it is not added)."""
    qdiscs = sh(layout.host_ns["cn"], "tc -s qdisc show")
    tbf = sum(int(m) for m in re.findall(r"qdisc tbf .*?\n Sent \d+ bytes \d+ pkt \(dropped (\d+)", qdiscs))
    tx = json.loads(sh(layout.node_ns["s"], "ip -s -j link show dev eth0"))[0]["stats64"]["tx"]
    return {"tbf": tbf, "port": int(tx["dropped"])}


def one_run(layout: Layout, port: str, address: str, pps: int) -> dict[str, float]:
    s_ns, r_ns = layout.node_ns["s"], layout.node_ns["r"]
    probe = probe_path()
    before = counters(layout)
    recv = subprocess.Popen(
        ["ip", "netns", "exec", r_ns, probe, "recv", "--bind", f"{address}:{PORT}", "--json",
         "--duration", str(SECONDS + 3), "--expect-streams", "1"],
        stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    time.sleep(0.3)  # the receiver binds within milliseconds; a datagram before it would count as lost
    sent_doc = json.loads(
        subprocess.run(
            ["ip", "netns", "exec", s_ns, probe, "send", "--dst", f"{address}:{PORT}", "--json",
             "--pps", str(pps), "--duration", str(SECONDS)],
            capture_output=True, text=True, check=True,
        ).stdout
    )  # fmt: skip
    recv_doc = json.loads(recv.communicate(timeout=30)[0])
    after = counters(layout)
    sent = int(sent_doc["sent_packets"])
    received = int(recv_doc["streams"][0]["received_packets"])
    socket_drops = int(recv_doc.get("kernel_drops_packets") or 0)
    tbf, port_drops = after["tbf"] - before["tbf"], after["port"] - before["port"]
    return {
        "offered_pps": pps,
        "sent_of_offered": sent / (pps * SECONDS),
        "received_pps": received / SECONDS,
        "loss_of_sent": 1 - received / sent,
        "dropped_at_shaper_of_sent": tbf / sent,
        "dropped_at_port_of_sent": port_drops / sent,
        "dropped_at_socket_of_sent": socket_drops / sent,
        "unexplained_of_sent": (sent - received - tbf - port_drops - socket_drops) / sent,
        "sender_sys_us_per_packet": int(sent_doc["cpu_system_ns"]) / 1000 / sent,
    }


def rtt_ms(layout: Layout, address: str) -> list[float]:
    out = sh(layout.node_ns["s"], f"ping -n -c {PINGS} -i 0.005 {address}")
    return [float(x) for x in re.findall(r"time=([\d.]+) ms", out)]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--redraw", action="store_true", help="only redraw the figure from receive_work.json")
    args = ap.parse_args()
    if args.redraw:
        redraw()
        return
    runs: list[dict[str, object]] = []
    started = time.time()
    with hand_built(SPEC, "receive-work", "rw") as (layout, _provider):
        s_ns, r_ns = layout.node_ns["s"], layout.node_ns["r"]
        port = next((p.a if p.b.ns == s_ns else p.b).name for p in layout.veths if s_ns in (p.a.ns, p.b.ns))
        address = next(
            str(i.address).split("/")[0] for i in layout.interfaces() if i.ns == r_ns and i.address
        )
        host = layout.host_ns["cn"]
        sh(s_ns, f"ping -n -c 3 -i 0.2 {address}")  # neighbours resolved before anything is measured
        for rep in range(args.reps):
            for arm in ARMS if rep % 2 == 0 else ARMS[::-1]:
                set_arm(host, port, arm)
                for pps in OFFERED:
                    run = {"arm": arm, "rep": rep, **one_run(layout, port, address, pps)}
                    runs.append(run)
                    print(
                        f"rep {rep} {arm:24s} {pps:>7d}/s: sent {run['sent_of_offered']:.0%} of offered, "
                        f"received {run['received_pps']:,.0f}/s, loss {run['loss_of_sent']:.1%} of sent "
                        f"(shaper {run['dropped_at_shaper_of_sent']:.1%}, "
                        f"port {run['dropped_at_port_of_sent']:.1%}, "
                        f"socket {run['dropped_at_socket_of_sent']:.1%}), "
                        f"{run['sender_sys_us_per_packet']:.1f} us sys/packet",
                        flush=True,
                    )
                rtts = rtt_ms(layout, address)
                runs.append({"arm": arm, "rep": rep, "rtt_ms": rtts})
                q = statistics.quantiles(rtts, n=100)
                print(f"rep {rep} {arm:24s} RTT median {statistics.median(rtts):.3f} ms, p99 {q[98]:.3f} ms")
    summary = summarise(runs)
    load = os.getloadavg()
    result = {
        "finished": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "minutes": round((time.time() - started) / 60, 1),
        "load_average_at_end": [round(x, 2) for x in load],
        "cpus": len(os.sched_getaffinity(0)),
        "fabric_pps": FABRIC_PPS,
        "seconds_per_point": SECONDS,
        "reps": args.reps,
        "summary": summary,
        "runs": runs,
    }
    (HERE / "raw").mkdir(exist_ok=True)
    (HERE / "raw" / "receive_work_runs.json").write_text(json.dumps(runs))
    result["runs"] = [compact(r) for r in runs]
    (HERE / "receive_work.json").write_text(json.dumps(result, indent=1))
    figure(runs, HERE / "receive_work.png")
    print(json.dumps(summary, indent=1))


def summarise(runs: list[dict[str, object]]) -> dict[str, object]:
    """Per arm: per offered rate the median (min, max) of each measure; the RTT median and p99 over
    every ping of the arm."""
    out: dict[str, object] = {}
    for arm in ARMS:
        per_rate: dict[str, object] = {}
        for pps in OFFERED:
            mine = [r for r in runs if r["arm"] == arm and r.get("offered_pps") == pps]
            per_rate[str(pps)] = {
                key: [statistics.median(v), min(v), max(v)]
                for key in ("sent_of_offered", "received_pps", "loss_of_sent", "dropped_at_shaper_of_sent",
                            "dropped_at_port_of_sent", "dropped_at_socket_of_sent", "unexplained_of_sent",
                            "sender_sys_us_per_packet")
                for v in [[float(r[key]) for r in mine]]  # type: ignore[arg-type]
            }  # fmt: skip
        rtts = [x for r in runs if r["arm"] == arm and "rtt_ms" in r for x in r["rtt_ms"]]  # type: ignore[union-attr]
        per_rate["rtt_ms_median"] = statistics.median(rtts)
        per_rate["rtt_ms_p99"] = statistics.quantiles(rtts, n=100)[98]
        out[arm] = per_rate
    return out


def figure(runs: list[dict[str, object]], path: Path) -> None:
    fig, (sent_ax, loss_ax, rtt_ax) = plt.subplots(1, 3, figsize=(12, 3.6))
    colours = dict(zip(ARMS, SERIES, strict=False))  # each arm also its own marker, named in the legend
    markers = dict(zip(ARMS, "os^", strict=True))
    for arm in ARMS:
        mine = [r for r in runs if r["arm"] == arm and "offered_pps" in r]
        offered = [float(r["offered_pps"]) / FABRIC_PPS for r in mine]  # type: ignore[arg-type]
        sent_k = [k * float(r["sent_of_offered"]) for k, r in zip(offered, mine, strict=True)]  # type: ignore[arg-type]
        sent_ax.scatter(offered, [100 * k / o for k, o in zip(sent_k, offered, strict=True)],
                        color=colours[arm], marker=markers[arm], alpha=0.6, label=arm, s=18)  # fmt: skip
        loss_ax.scatter(sent_k, [100 * float(r["loss_of_sent"]) for r in mine],  # type: ignore[arg-type]
                        color=colours[arm], marker=markers[arm], alpha=0.6, label=arm, s=18)  # fmt: skip
        rtts = sorted(x for r in runs if r["arm"] == arm and "rtt_ms" in r for x in r["rtt_ms"])  # type: ignore[union-attr]
        rtt_ax.plot([1000 * x for x in rtts], [100 * (i + 1) / len(rtts) for i in range(len(rtts))],
                    color=colours[arm], label=arm)  # fmt: skip
    sent_ax.set_xlabel("offered / fabric rate")
    sent_ax.set_ylabel("sent, % of offered")
    sent_ax.set_ylim(0, 105)
    sent_ax.set_title("what the sender managed to send", fontsize=9)
    sent_ax.legend(fontsize=7)
    ks = [1 + x / 20 for x in range(0, 121)]
    loss_ax.plot(
        ks, [100 * (1 - 1 / k) for k in ks], color=NEUTRAL, lw=1, ls="--", label="a network: 1 - 1/k"
    )
    loss_ax.set_xlabel("sent / fabric rate (k)")
    loss_ax.set_ylabel("lost, % of sent")
    loss_ax.set_title("what the network dropped of what was sent", fontsize=9)
    loss_ax.legend(fontsize=7)
    rtt_ax.set_xscale("log")
    rtt_ax.set_xlabel("RTT s -> r, idle path, µs (log)")
    rtt_ax.set_ylabel("% of pings at or below")
    rtt_ax.set_title(f"the price: {PINGS} pings per arm and round", fontsize=9)
    rtt_ax.legend(fontsize=7)
    fig.suptitle(
        f"One vnb-probe sender, 64-byte frames, into a {FABRIC_PPS // 1000}K packets/s fabric between "
        "two Linux bridges (2 vCPU)",
        fontsize=9,
    )
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def compact(run: dict[str, object]) -> dict[str, object]:
    """A run as kept in git: a ping round's RTTs as their median and p99."""
    if "rtt_ms" not in run:
        return run
    rtts: list[float] = run["rtt_ms"]  # type: ignore[assignment]
    return {"arm": run["arm"], "rep": run["rep"], "rtt_ms_median": statistics.median(rtts),
            "rtt_ms_p99": statistics.quantiles(rtts, n=100)[98]}  # fmt: skip


def redraw() -> None:
    """Redraw the figure from the last run's raw/receive_work_runs.json (no measuring)."""
    figure(json.loads((HERE / "raw" / "receive_work_runs.json").read_text()), HERE / "receive_work.png")


if __name__ == "__main__":
    main()
