"""TCP over a lossy link: the delay node's emulated loss against the kernel's own random drop.

A link with `loss:` gets a userspace delay node (docs/delay-nodes.md: this kernel has no netem) that
drops each frame with that probability. Is what TCP makes of it the kernel's TCP reacting to i.i.d.
loss, or an artefact of the node (drops in bursts, a frame dropped whole as a GSO super-frame, ACKs
treated differently)? Each configuration is run twice on the same kind of link, alternating:

- **delay node**: `{endpoints: [a, b], rate: 50mbit, delay: D, loss: P}` — what a user writes;
- **kernel drop**: the same link with `loss` left out, and nftables rules that drop each arriving
  segment of the iperf3 connections with probability P (`numgen random mod 1000 < P·1000`,
  prerouting, before anything else sees it) in b's namespace (data) and in a's (ACKs), as the
  node drops in both directions: the kernel's own random loss, as netem would do it.

One iperf3 client in a to the server in b, 8 s with the first 1 s omitted; goodput is the
receiver's bytes over the measured window. Twice over: with `-C cubic` (loss-based: it backs off
at every loss event, so it shows any difference in how losses fall) and with no `-C`, the
machine's default (net.ipv4.tcp_congestion_control, what a campaign without `congestion:` gets;
bbr on the machine of the README's run, which does not treat random loss as congestion).
Mathis et al.'s estimate for a loss-based TCP (MSS / RTT · 1.22 / √p) is drawn for scale.

Usage (root; needs `nft`: `apt-get install nftables`):
    .venv/bin/python benchmarks/fidelity/tcp_loss.py [--reps 3]      # ~10 min
Writes tcp_loss.json (summary) and tcp_loss.png here, every run to raw/tcp_loss_runs.json.
"""

from __future__ import annotations

import argparse
import itertools
import json
import math
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt

sys.path.insert(0, str(Path(__file__).resolve().parent))
from hand_built import hand_built

from vnetbench.palette import BLUE, MAGENTA, NEUTRAL
from vnetbench.report.cycle import use_palette

use_palette()
HERE = Path(__file__).resolve().parent
RATE_MBIT = 50
CONFIGS = [(0.01, 5), (0.03, 5), (0.01, 20), (0.03, 20)]  # (loss, one-way delay ms)
METHODS = ("delay node", "kernel drop")
CONGESTION = ("cubic", None)  # None: the machine's default
MSS_BITS = 1448 * 8
SECONDS, OMIT = 8, 1


def spec(loss: float, delay_ms: int, method: str) -> str:
    lossy = f", loss: {loss}" if method == "delay node" else ""
    return f"""name: tcp-loss
topology:
  nodes: [{{name: a}}, {{name: b}}]
  links:
    - {{endpoints: [a, b], rate: {RATE_MBIT}mbit, delay: {delay_ms}ms{lossy}}}
measurements: [{{name: rtt, kind: rtt, count: 2}}]
patterns: [{{name: p, kind: pairs, pairs: [[a, b]], measurements: [rtt]}}]
"""


def drop_rule(ns: str, loss: float, port_match: str) -> None:
    """Drop each arriving TCP segment that matches with probability `loss`, in namespace ns."""
    rules = (
        "add table inet vnbbench; "
        "add chain inet vnbbench lossy { type filter hook prerouting priority -300; }; "
        f"add rule inet vnbbench lossy tcp {port_match} numgen random mod 1000 < {round(loss * 1000)} drop"
    )
    subprocess.run(["ip", "netns", "exec", ns, "nft", rules], check=True)


def default_congestion() -> str:
    return Path("/proc/sys/net/ipv4/tcp_congestion_control").read_text().strip()


def one_run(loss: float, delay_ms: int, method: str, congestion: str | None) -> dict:
    with hand_built(spec(loss, delay_ms, method), "tcp-loss", "tl") as (layout, _provider):
        node_ns = {
            role.split(":", 1)[1]: ns for ns, role in layout.namespaces.items() if role.startswith("node:")
        }
        b_addr = next(i.address for i in layout.interfaces() if i.ns == node_ns["b"] and i.address)
        if method == "kernel drop":
            drop_rule(node_ns["b"], loss, "dport 5201")  # data (and the control connection)
            drop_rule(node_ns["a"], loss, "sport 5201")  # ACKs
        server = subprocess.Popen(
            ["ip", "netns", "exec", node_ns["b"], "iperf3", "-s", "-1"], stdout=subprocess.DEVNULL
        )
        try:
            time.sleep(0.3)
            client = ["iperf3", "-c", b_addr.split("/")[0], "-t", str(SECONDS), "-O", str(OMIT), "-J"]
            client += ["-C", congestion] if congestion else []
            out = subprocess.run(
                ["ip", "netns", "exec", node_ns["a"], *client], capture_output=True, text=True
            )
            server.wait(timeout=15)
        finally:
            if server.poll() is None:
                server.kill()
                server.wait()
    end = json.loads(out.stdout)["end"]
    stream = end["streams"][0]["sender"]
    return {
        "loss": loss,
        "delay_ms": delay_ms,
        "method": method,
        "congestion": congestion or "default",
        "sender_congestion": end.get("sender_tcp_congestion"),
        "goodput_mbit": end["sum_received"]["bits_per_second"] / 1e6,
        "retransmits": end["sum_sent"]["retransmits"],
        "segments": round(end["sum_sent"]["bytes"] / 1448),
        "mean_rtt_ms": stream.get("mean_rtt", 0) / 1000,
    }


def mathis_mbit(loss: float, delay_ms: int) -> float:
    return MSS_BITS / (2 * delay_ms / 1000) * 1.22 / math.sqrt(loss) / 1e6


def summarise(runs: list[dict]) -> list[dict]:
    rows = []
    for congestion in CONGESTION:
        for loss, delay_ms in CONFIGS:
            rtt = 2 * delay_ms
            row: dict = {"congestion": congestion or "default", "loss": loss, "rtt_ms": rtt}
            row["mathis_mbit"] = round(mathis_mbit(loss, delay_ms), 1)
            for method in METHODS:
                mine = [r for r in runs if _config(r) == (congestion or "default", loss, delay_ms, method)]
                row["used"] = sorted({str(r["sender_congestion"]) for r in mine})
                goodput = [r["goodput_mbit"] for r in mine]
                retrans = [r["retransmits"] / max(r["segments"], 1) * 100 for r in mine]
                key = method.split()[0]
                row[f"{key}_mbit"] = [
                    round(statistics.median(goodput), 1),
                    round(min(goodput), 1),
                    round(max(goodput), 1),
                ]
                row[f"{key}_retrans_pct"] = round(statistics.median(retrans), 2)
            rows.append(row)
    return rows


def _config(run: dict) -> tuple:
    return (run["congestion"], run["loss"], run["delay_ms"], run["method"])


def figure(rows: list[dict], path: Path) -> None:
    fig, axes = plt.subplots(1, len(CONGESTION), figsize=(11, 4.2))
    for ax, congestion in zip(axes, CONGESTION, strict=True):
        mine = [r for r in rows if r["congestion"] == (congestion or "default")]
        xs = range(len(mine))
        for offset, key, colour, marker, label in (
            (-0.12, "delay", BLUE, "o", "delay node (`loss:` on the link)"),
            (0.12, "kernel", MAGENTA, "s", "kernel drop (nftables numgen)"),
        ):
            med = [r[f"{key}_mbit"][0] for r in mine]
            low = [r[f"{key}_mbit"][0] - r[f"{key}_mbit"][1] for r in mine]
            high = [r[f"{key}_mbit"][2] - r[f"{key}_mbit"][0] for r in mine]
            ax.errorbar(
                [x + offset for x in xs], med, yerr=[low, high], fmt=marker, color=colour, label=label
            )
        mathis = [r["mathis_mbit"] for r in mine]
        ax.plot(list(xs), mathis, "_", color=NEUTRAL, markersize=28, label="Mathis estimate (loss-based TCP)")
        top = max(max(r["delay_mbit"][2], r["kernel_mbit"][2], r["mathis_mbit"]) for r in mine)
        if top > RATE_MBIT / 2:  # the link's rate only where TCP comes near it
            ax.axhline(
                RATE_MBIT, color=NEUTRAL, linestyle="--", linewidth=1, label=f"link rate {RATE_MBIT} Mbit/s"
            )
            top = RATE_MBIT
        ax.set_ylim(0, top * 1.15)
        ax.set_ylabel("TCP goodput, Mbit/s (median, min–max)")
        ax.legend(fontsize=8, loc="center" if top == RATE_MBIT else "upper right")
        ax.set_xticks(list(xs), [f"loss {r['loss']:.0%}\nRTT {r['rtt_ms']} ms" for r in mine])
        used = ", ".join(sorted({u for r in mine for u in r["used"]}))
        ax.set_title(f"-C {congestion}" if congestion else f"the machine's default ({used})")
    fig.suptitle("TCP over a lossy link: the delay node's loss vs the kernel's own random drop")
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--reps", type=int, default=3, help="runs of each method per configuration")
    parser.add_argument("--plot-only", action="store_true", help="redraw tcp_loss.png from tcp_loss.json")
    args = parser.parse_args()
    if args.plot_only:
        figure(json.loads((HERE / "tcp_loss.json").read_text())["rows"], HERE / "tcp_loss.png")
        return
    if shutil.which("nft") is None:
        sys.exit("tcp_loss.py needs nft (apt-get install nftables) for the kernel-drop runs")
    runs = []
    for rep in range(args.reps):
        for congestion, (loss, delay_ms) in itertools.product(CONGESTION, CONFIGS):
            for method in METHODS if rep % 2 == 0 else METHODS[::-1]:
                run = one_run(loss, delay_ms, method, congestion) | {"rep": rep + 1}
                runs.append(run)
                what = (
                    f"rep {rep + 1} {congestion or 'default'} loss {loss:.0%} RTT {2 * delay_ms} ms {method}"
                )
                print(f"{what}: {run['goodput_mbit']:.1f} Mbit/s, {run['retransmits']} retr.", flush=True)
                time.sleep(1.0)  # the kernel's clean-up of the last topology
    (HERE / "raw").mkdir(exist_ok=True)
    (HERE / "raw" / "tcp_loss_runs.json").write_text(json.dumps(runs, indent=1))
    rows = summarise(runs)
    summary = {"reps": args.reps, "rate_mbit": RATE_MBIT, "seconds": SECONDS, "omit": OMIT}
    summary |= {"default_congestion": default_congestion(), "rows": rows}
    (HERE / "tcp_loss.json").write_text(json.dumps(summary, indent=1) + "\n")
    figure(rows, HERE / "tcp_loss.png")
    for row in rows:
        print(row)


if __name__ == "__main__":
    main()
