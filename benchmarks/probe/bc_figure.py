"""Table and figure of bc.sh's runs: proofs (b) sender CPU and (c) rate accuracy / lateness.

python bc_figure.py OUT_DIR   (reads OUT_DIR/raw, writes OUT_DIR/probe-bc.png, prints markdown)
"""

from __future__ import annotations

import glob
import json
import re
import statistics
import sys
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt

from vnetbench.palette import BLUE, NEUTRAL
from vnetbench.report.cycle import use_palette

# each case in vnetbench's palette (its report's figures too), not matplotlib's red-beside-green tab10;
# goals grey dashed and named in the legend; the black ticks are medians
use_palette()

TARGETS = [1000, 10000, 100000]
CPU_CASES = {
    "iperf3": "iperf3 -u -l 1472 -b 100M",
    "vnb": "vnb-probe default (per slot)",
    "vnbq1": "vnb-probe --pacing-quantum-us 1000",
    "vnbq5": "vnb-probe --pacing-quantum-us 5000",
    "vnbq5bp": "the same, receiver --busy-poll (not alike)",
}
ACC_CASES = {
    "vnb": "vnb-probe default",
    "vnbrt": "vnb-probe default, SCHED_FIFO 1",
    "iperf3": "iperf3 -u -l 18 -b",
}


def load(path: Path) -> Any:
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError):
        return None


def spread(xs: list[float], fmt: str = "{:.3g}") -> str:
    if not xs:
        return "n/a"
    med, lo, hi = statistics.median(xs), min(xs), max(xs)
    return f"{fmt.format(med)} [{fmt.format(lo)} .. {fmt.format(hi)}]"


def reps(raw: Path, pattern: str) -> list[int]:
    found = {int(m.group(1)) for p in raw.glob(pattern) if (m := re.search(r"-(\d+)\.", p.name))}
    return sorted(found)


def cpu_seconds(path: Path) -> float | None:
    try:
        for line in path.read_text().splitlines():
            if line.startswith("CPU "):
                _, user, system = line.split()
                return float(user) + float(system)
    except OSError:
        return None
    return None


def cpu_table(raw: Path) -> tuple[dict[str, list[float]], dict[str, list[float]], list[str]]:
    """CPU seconds per case and the ratio to iperf3 of the same repetition."""
    secs: dict[str, list[float]] = {c: [] for c in CPU_CASES}
    ratio: dict[str, list[float]] = {c: [] for c in CPU_CASES if c != "iperf3"}
    lines = [
        "| sender | CPU s per run | ratio to iperf3 (same rep) | achieved Mbit/s | lateness p50 / p99 |",
        "| --- | --- | --- | --- | --- |",
    ]
    for rep in reps(raw, "cpu-*.cpu"):
        base = cpu_seconds(raw / f"cpu-iperf3-{rep}.cpu")
        for c in CPU_CASES:
            s = cpu_seconds(raw / f"cpu-{c}-{rep}.cpu")
            if s is None:
                continue
            secs[c].append(s)
            if c != "iperf3" and base:
                ratio[c].append(s / base)
    for c, label in CPU_CASES.items():
        mbit, p50, p99 = [], [], []
        for p in sorted(raw.glob(f"cpu-{c}-*.{'client' if c == 'iperf3' else 'send'}.json")):
            j = load(p)
            if not j:
                continue
            if c == "iperf3":
                mbit.append(j["end"]["sum"]["bits_per_second"] / 1e6)
            else:
                mbit.append(j["achieved_bps"] / 1e6)
                p50.append(j["send_lateness"]["p50_ns"] / 1e3)
                p99.append(j["send_lateness"]["p99_ns"] / 1e3)
        lat = f"{spread(p50, '{:.0f}')} / {spread(p99, '{:.0f}')} µs" if p50 else "(not reported)"
        r = spread(ratio[c], "{:.2f}") if c in ratio else "1"
        lines.append(f"| {label} | {spread(secs[c], '{:.3f}')} | {r} | {spread(mbit, '{:.2f}')} | {lat} |")
    return secs, ratio, lines


def rate_error(case: str, j: Any) -> float | None:
    if not j:
        return None
    if case == "iperf3":
        try:
            s = j["end"]["sum"]
            return abs(s["packets"] / s["seconds"] / target_of(j) - 1) * 100
        except (KeyError, ZeroDivisionError, TypeError):
            return None
    return abs(j["achieved_to_target_ratio"] - 1) * 100


def target_of(j: Any) -> float:
    return float(j["start"]["test_start"]["target_bitrate"]) / (18 * 8)


def acc_table(raw: Path) -> tuple[dict[tuple[str, int], dict[str, list[float]]], list[str]]:
    res: dict[tuple[str, int], dict[str, list[float]]] = {}
    lines = [
        "| target pps | sender | rate error % | missed slots | lateness p50 µs | lateness p99 µs | CPU % |",
        "| --- | --- | --- | --- | --- | --- | --- |",
    ]
    for pps in TARGETS:
        for c, label in ACC_CASES.items():
            d: dict[str, list[float]] = {"err": [], "missed": [], "p50": [], "p99": [], "cpu": []}
            suffix = "client" if c == "iperf3" else "send"
            for p in sorted(raw.glob(f"acc-{c}-{pps}-*.{suffix}.json")):
                j = load(p)
                e = rate_error(c, j)
                if e is None:
                    continue
                d["err"].append(e)
                if c != "iperf3":
                    d["missed"].append(j["missed_slots_packets"])
                    d["p50"].append(j["send_lateness"]["p50_ns"] / 1e3)
                    d["p99"].append(j["send_lateness"]["p99_ns"] / 1e3)
                    d["cpu"].append((j["cpu_user_ns"] + j["cpu_system_ns"]) / j["duration_ns"] * 100)
            res[(c, pps)] = d
            na = "–"
            lines.append(
                f"| {pps} | {label} | {spread(d['err'], '{:.3f}')} | "
                f"{spread(d['missed'], '{:.0f}') if d['missed'] else na} | "
                f"{spread(d['p50'], '{:.1f}') if d['p50'] else na} | "
                f"{spread(d['p99'], '{:.0f}') if d['p99'] else na} | "
                f"{spread(d['cpu'], '{:.1f}') if d['cpu'] else na} |"
            )
    return res, lines


def draw(out: Path, secs: dict[str, list[float]], acc: dict[tuple[str, int], dict[str, list[float]]]) -> None:
    fig, ax = plt.subplots(1, 3, figsize=(16, 4.8))
    names = list(CPU_CASES)
    for i, c in enumerate(names):
        ys = secs[c]
        ax[0].scatter([i] * len(ys), ys, s=18, alpha=0.7, color=BLUE)  # the case: its tick
        if ys:
            ax[0].hlines(statistics.median(ys), i - 0.3, i + 0.3, color="k")
    if secs["iperf3"]:
        half = statistics.median(secs["iperf3"]) / 2
        ax[0].axhline(half, ls="--", color=NEUTRAL, lw=1, label="0.5 × iperf3 median (goal)")
        ax[0].legend(fontsize=8)
    ticks = ["iperf3", "vnb default", "vnb q=1 ms", "vnb q=5 ms", "q=5 ms,\nrecv polls"]
    ax[0].set_xticks(range(len(names)), ticks)
    ax[0].set_ylabel("sender CPU s (user+system)")
    ax[0].set_title("(b) 100 Mbit/s of 1472 B, per run")
    width = 0.25
    for k, c in enumerate(ACC_CASES):
        xs, ys, lo, hi = [], [], [], []
        for i, pps in enumerate(TARGETS):
            v = acc.get((c, pps), {}).get("err", [])
            if v:
                m = statistics.median(v)
                xs.append(i + (k - 1) * width)
                ys.append(max(m, 1e-5))
                lo.append(max(m, 1e-5) - max(min(v), 1e-5))
                hi.append(max(v) - m)
        ax[1].errorbar(xs, ys, yerr=[lo, hi], fmt="o", capsize=3, label=ACC_CASES[c])
    ax[1].axhline(0.5, ls="--", color=NEUTRAL, lw=1, label="goal ≤ 0.5 %")
    ax[1].set_yscale("log")
    ax[1].set_xticks(range(len(TARGETS)), [f"{t // 1000}K pps" for t in TARGETS])
    ax[1].set_ylabel("|achieved/target − 1| %  (median, min..max)")
    ax[1].set_title("(c) rate error, 18-byte payloads")
    ax[1].legend(fontsize=8)
    for k, c in enumerate(("vnb", "vnbrt")):
        xs, ys, lo, hi = [], [], [], []
        for i, pps in enumerate(TARGETS):
            v = acc.get((c, pps), {}).get("p99", [])
            if v:
                m = statistics.median(v)
                xs.append(i + (k - 0.5) * width)
                ys.append(m)
                lo.append(m - min(v))
                hi.append(max(v) - m)
        ax[2].errorbar(xs, ys, yerr=[lo, hi], fmt="o", capsize=3, label=ACC_CASES[c])
    ax[2].axhline(50, ls="--", color=NEUTRAL, lw=1, label="goal ≤ 50 µs at 10K")
    ax[2].set_yscale("log")
    ax[2].set_xticks(range(len(TARGETS)), [f"{t // 1000}K pps" for t in TARGETS])
    ax[2].set_ylabel("send lateness p99, µs")
    ax[2].set_title("(c) send lateness p99")
    ax[2].legend(fontsize=8)
    fig.suptitle("vnb-probe vs iperf3 on a veth pair — shared 2-vCPU VM (see README for load)")
    fig.tight_layout()
    fig.savefig(out, dpi=110)


def main() -> None:
    out = Path(sys.argv[1])
    raw = out / "raw"
    secs, _, cpu_lines = cpu_table(raw)
    acc, acc_lines = acc_table(raw)
    draw(out / "probe-bc.png", secs, acc)
    print("### (b) sender CPU, 100 Mbit/s of 1472-byte datagrams: median [min .. max]\n")
    print("\n".join(cpu_lines))
    print("\n### (c) rate accuracy and send lateness, 18-byte payloads: median [min .. max]\n")
    print("\n".join(acc_lines))
    print(f"\n({len(glob.glob(str(raw / '*.json')))} raw JSON files)")


if __name__ == "__main__":
    main()
