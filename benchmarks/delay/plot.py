#!/usr/bin/env python3
"""Figure of benchmarks/delay/raw/results.json (written by run.py) -> delay.png (four panels)."""

from __future__ import annotations

import json
import statistics
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np
from scipy import stats

from vnetbench.palette import BLUE, MAGENTA, NEUTRAL
from vnetbench.report.cycle import use_palette

# runs in vnetbench's palette (its report's figures too), not matplotlib's red-beside-green tab10;
# targets and models grey dashed and named in the legend; black dots are single runs
use_palette()

HERE = Path(__file__).resolve().parent


SINKS = {"counter": "far side counts", "recv": "UDP receiver"}


def main() -> None:
    res = json.loads((HERE / "raw" / "results.json").read_text())
    fig, ax = plt.subplots(2, 2, figsize=(12, 8.5))

    a = ax[0][0]
    for i, rep in enumerate(res.get("accuracy", [])):
        x = np.sort(rep["rtt_samples_ms"])
        a.plot(x, np.arange(1, len(x) + 1) / len(x), label=f"run {i + 1}: median {np.median(x):.3f} ms")
    a.axvspan(99.8, 100.2, color=NEUTRAL, alpha=0.15, label="target: median 100 ± 0.2 ms")
    a.set_xlim(99.9, 100.6)
    a.set_xlabel("RTT, ms (vnb-probe rtt, 2000 probes)")
    a.set_ylabel("CDF")
    a.set_title("delay: 50ms each way")
    a.legend(fontsize=8)

    a = ax[0][1]
    reps = res.get("accuracy", [])
    if reps:
        owd = np.array(reps[0]["owd_samples_ms"])
        a.hist(owd, bins=80, density=True, alpha=0.6, color=BLUE, label="measured one-way delay (run 1)")
        x = np.linspace(10, 90, 400)
        a.plot(x, stats.norm.pdf(x, 50, 10), color=NEUTRAL, ls="--", label="configured N(50 ms, 10 ms)")
        ps = ", ".join(f"{r['jitter']['ks_p']:.2f}" for r in reps)
        a.set_title(
            f"jitter: 10ms normal — KS p = {ps}\n(5000 probes each, seeds from the clock: see README)",
            fontsize=10,
        )
    a.set_xlabel("one-way delay, ms")
    a.legend(fontsize=8)

    a = ax[1][0]
    rows = res.get("throughput", [])
    raw = res.get("rawpps", [])
    groups = [  # (label, rows of the group, target pps)
        ("1500 B\n2 UDP senders", [r for r in rows if r["frame_bytes"] == 1500], 1e9 / (1500 * 8)),
        ("64 B\n2 UDP senders", [r for r in rows if r["frame_bytes"] == 64], 300_000),
        *(
            (
                f"64 B raw gen.\n{offered // 1000}K offered\n{SINKS[sink]}",
                [r for r in raw if r["sink"] == sink and r["offered_pps"] == offered],
                300_000,
            )
            for sink in ("counter", "recv")
            for offered in (300_000, 400_000)
        ),
    ]
    labels, xs = [], []
    for k, (label, group, target) in enumerate(groups):
        for j, (path, color) in enumerate((("node", BLUE), ("bare", MAGENTA))):
            sel = [r for r in group if r["path"] == path]
            if not sel:
                continue
            x = k * 3 + j
            got = [r["received_pps"] / 1e3 for r in sel]
            a.bar(
                x,
                statistics.median(got),
                color=color,
                label=("through a delay node (+10 ms)", "generator alone (bare veth)")[j] if k == 0 else None,
            )
            a.plot([x] * len(got), got, "k.")
        target_label = "issue target" if k == 0 else None
        a.hlines(
            target / 1e3, k * 3 - 0.45, k * 3 + 1.45, colors=NEUTRAL, linestyles="dashed", label=target_label
        )
        labels.append(label)
        xs.append(k * 3 + 0.5)
    a.set_xticks(xs, labels)
    a.set_ylabel("received, kpps (dashed: issue target)")
    a.tick_params(axis="x", labelsize=7)
    cpu = [
        r["node"]["cpu_per_frame_ns"] / 1e3 for r in rows + raw if r.get("node") and r["frame_bytes"] != "tcp"
    ]
    a.set_ylim(0, 420)

    def ratio(group: list[dict]) -> str:
        got = [r["ratio_to_bare"] for r in group if "ratio_to_bare" in r]
        return f"{statistics.median(got):.2f}" if got else "n/a"

    a.set_title(
        "through a node adding 10 ms; node ÷ generator alone (median):\n"
        + ", ".join(ratio(g) for _, g, _ in groups)
        + f"\nnode CPU {min(cpu, default=0):.1f}–{max(cpu, default=0):.1f} µs/frame",
        fontsize=9,
    )
    a.legend(fontsize=7, loc="upper left")

    a = ax[1][1]
    bdp = res.get("bdp", [])
    windows = [w for w in ("160K", "256K", "auto") if any(r["window"] == w for r in bdp)]
    for j, window in enumerate(windows):
        for k, link in enumerate(("short", "long")):
            rows = [r for r in bdp if r["window"] == window and r["link"] == link]
            vals = [r["goodput_bps"] / 1e6 for r in rows]
            if not vals:
                continue
            x = j * 3 + k
            a.bar(
                x,
                statistics.median(vals),
                color=[BLUE, MAGENTA][k],
                label=f"{link}: {'25' if link == 'short' else '120'} ms each way" if j == 0 else None,
            )
            a.plot([x] * len(vals), vals, "k.")
            # the model: min(link, the window the receiver advertised / RTT); autotuned: the link
            adv = [r.get("max_snd_wnd_bytes") for r in rows if r.get("max_snd_wnd_bytes")]
            rtt = 0.050 if link == "short" else 0.240
            bound = 9.57 if window == "auto" or not adv else min(9.57, statistics.median(adv) * 8 / rtt / 1e6)
            model = "model: min(link, window / RTT)" if (j, k) == (0, 0) else None
            a.hlines(bound, x - 0.4, x + 0.4, colors=NEUTRAL, linestyles="dashed", label=model)
    a.set_xticks(
        [j * 3 + 0.5 for j in range(len(windows))],
        [f"iperf3 -w {w}" if w != "auto" else "autotuned" for w in windows],
    )
    a.set_ylabel("TCP goodput, Mbit/s (10 Mbit/s link)")
    a.set_title("bandwidth-delay product\n(dashed: min(link, advertised window / RTT))")
    a.legend(fontsize=8)

    fig.suptitle("vnb-probe delay nodes on a 2-vCPU machine (kernel without netem)")
    fig.tight_layout()
    fig.savefig(HERE / "delay.png", dpi=110)


if __name__ == "__main__":
    main()
