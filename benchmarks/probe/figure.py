"""Draw the issue-3 proofs from veth-bench.sh's raw JSON and print a markdown table (median [min .. max]).

python figure.py RAW_DIR RAW_RT_DIR OUT.png
"""

from __future__ import annotations

import glob
import json
import os
import statistics
import sys
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt

from vnetbench.palette import BLUE, MAGENTA, NEUTRAL
from vnetbench.report.cycle import use_palette

# measured series in vnetbench's palette (its report's figures too), not matplotlib's red-beside-green tab10;
# reference lines grey and dashed, named in the legend
use_palette()

LOSS_LIMIT = 0.01
TARGETS = [1000, 10000, 100000]


def load(path: str) -> Any:
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def spread(xs: list[float], fmt: str = "{:.3g}") -> str:
    xs = [x for x in xs if x is not None]
    if not xs:
        return "n/a"
    return (
        f"{fmt.format(statistics.median(xs))} [{fmt.format(min(xs))} .. {fmt.format(max(xs))}] (n={len(xs)})"
    )


def vnb_run(raw: str, name: str, rate: int, rep: int) -> tuple[float, float] | None:
    """(sent pps, loss ratio) of one vnb-probe run."""
    s = load(f"{raw}/maxrate-{name}-{rate}-{rep}.send.json")
    r = load(f"{raw}/maxrate-{name}-{rate}-{rep}.recv.json")
    if not s or not r or not r.get("streams"):
        return None
    return s["achieved_pps"], r["streams"][0]["loss_ratio"]


def iperf_run(raw: str, rate: int, rep: int) -> tuple[float, float] | None:
    """(sent pps, loss ratio) of one iperf3 run: datagrams sent (client) against arrived (server)."""
    c = load(f"{raw}/maxrate-iperf3-{rate}-{rep}.client.json")
    sv = load(f"{raw}/maxrate-iperf3-{rate}-{rep}.server.json")
    try:
        sent = c["end"]["sum"]["packets"]
        ss = sv["end"]["sum"]
        arrived = ss["packets"] - ss["lost_packets"]
        return sent / c["end"]["sum"]["seconds"], max(0.0, 1 - arrived / sent)
    except (KeyError, TypeError, ZeroDivisionError):
        return None


def accuracy(raw: str) -> list[tuple[int, list[float], list[float], list[float]]]:
    """(target pps, rate errors %, lateness p99 µs, lateness p50 µs) per target."""
    out = []
    for pps in TARGETS:
        sends = [s for p in sorted(glob.glob(f"{raw}/accuracy-{pps}-*.send.json")) if (s := load(p))]
        out.append(
            (
                pps,
                [abs(s["achieved_to_target_ratio"] - 1) * 100 for s in sends],
                [s["send_lateness"]["p99_ns"] / 1e3 for s in sends],
                [s["send_lateness"]["p50_ns"] / 1e3 for s in sends],
            )
        )
    return out


def cpu_seconds(raw: str, names: list[str], reps: list[int]) -> dict[str, list[float]]:
    out: dict[str, list[float]] = {name: [] for name in names}
    for rep in reps:
        for name, acc in out.items():
            try:
                lines = Path(f"{raw}/cpu-{name}-{rep}.cpu").read_text().splitlines()
            except OSError:
                continue
            # the wrapper's line is "CPU user system" (lib.sh): the sender's CPU is their sum
            acc += [sum(map(float, line.split()[1:3])) for line in lines if line.startswith("CPU ")]
    return out


def main(raw: str, raw_rt: str, png: str, raw_q5: str | None = None) -> None:
    reps = sorted(
        {int(p.rsplit("-", 1)[1].split(".")[0]) for p in glob.glob(f"{raw}/maxrate-vnb-*.send.json")}
    )
    rates = sorted(
        {int(os.path.basename(p).split("-")[2]) for p in glob.glob(f"{raw}/maxrate-vnb-*.send.json")}
    )
    tools = {
        "vnb-probe": lambda r, k: vnb_run(raw, "vnb", r, k),
        "vnb-probe --busy-poll": lambda r, k: vnb_run(raw, "vnbbp", r, k),
        "iperf3": lambda r, k: iperf_run(raw, r, k),
    }
    # (a) highest offered rate received with < 1 % loss, per repetition (sent >= 99 % of the target)
    best: dict[str, list[float]] = {t: [] for t in tools}
    sent_ok: dict[str, list[float]] = {t: [] for t in tools}
    for rep in reps:
        for tool, fn in tools.items():
            runs = [(r, x) for r in rates if (x := fn(r, rep))]
            passing = [r for r, x in runs if x[0] >= 0.99 * r and x[1] < LOSS_LIMIT]
            best[tool].append(max(passing, default=0))
            sent_ok[tool].append(max((x[0] for _, x in runs if x[1] < LOSS_LIMIT), default=0.0))
    fig, axes = plt.subplots(1, 3, figsize=(15, 4.2))
    ax = axes[0]
    for tool, fn in tools.items():
        med = []
        for r in rates:
            got = [x[0] * (1 - x[1]) for rep in reps if (x := fn(r, rep))]
            med.append(statistics.median(got) if got else float("nan"))
        top = statistics.median(sent_ok[tool])
        ax.plot(rates, med, marker="o", label=f"{tool} (median best sent with < 1 % loss: {top:,.0f})")
    ax.plot(rates, rates, color=NEUTRAL, lw=1, ls="--", label="received = offered", zorder=1.5)
    ax.set_xlabel("offered rate, 18-byte payloads (packets/s)")
    ax.set_ylabel("received (packets/s), median of reps")
    ax.set_ylim(bottom=0)
    ax.set_title("(a) veth pair: received vs offered")
    ax.legend(fontsize=7)
    ax.grid(alpha=0.3)

    # (b) sender CPU for 100 Mbit/s of 1472-byte datagrams
    cpu = cpu_seconds(raw, ["vnb", "vnbq", "iperf3"], reps)
    if raw_q5:
        q5 = cpu_seconds(raw_q5, ["vnb", "iperf3"], reps)
        cpu["vnbq5"], cpu["iperf3 (q5 run)"] = q5["vnb"], q5["iperf3"]
    names = {
        "vnb": "vnb-probe\n(per-slot)",
        "vnbq": "vnb-probe\nquantum 1 ms",
        "iperf3": "iperf3",
        "vnbq5": "vnb-probe\nquantum 5 ms",
        "iperf3 (q5 run)": "iperf3\n(beside 5 ms)",
    }
    ax = axes[1]
    for i, (name, xs) in enumerate(cpu.items()):
        if xs:
            med = statistics.median(xs)
            colour = MAGENTA if name.startswith("iperf3") else BLUE  # each tool's, as in (a)
            ax.bar(i, med, yerr=[[med - min(xs)], [max(xs) - med]], capsize=4, color=colour)
    ax.set_xticks(range(len(cpu)), [names[n] for n in cpu], fontsize=7)
    ax.set_ylabel("sender CPU seconds (user + system)")
    ax.set_title("(b) 100 Mbit/s of 1472-byte datagrams")
    ax.grid(alpha=0.3, axis="y")

    # (c) lateness p99 at normal priority and at SCHED_FIFO 1
    ax = axes[2]
    acc = {"normal priority": accuracy(raw), "SCHED_FIFO 1": accuracy(raw_rt)}
    for offset, (label, rows) in zip((-0.18, 0.18), acc.items(), strict=True):
        ax.boxplot(
            [r[2] for r in rows],
            positions=[i + offset for i in range(len(TARGETS))],
            widths=0.3,
            patch_artist=True,
            boxprops={"facecolor": BLUE if offset < 0 else MAGENTA, "alpha": 0.5},
            label=label,
        )
    ax.set_xticks(range(len(TARGETS)), [f"{t:,}" for t in TARGETS])
    ax.axhline(50, color=NEUTRAL, ls="--", lw=1, label="goal at 10K pps: 50 µs")
    ax.set_yscale("log")
    ax.set_xlabel("target rate (packets/s), 18-byte payloads")
    ax.set_ylabel("send lateness p99 (µs)")
    ax.set_title("(c) vnb-probe's own timing error")
    ax.legend(fontsize=7)
    ax.grid(alpha=0.3)
    fig.tight_layout()
    Path(png).parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(png, dpi=100)

    print("| proof | result: median [min .. max] (n) | goal |")
    print("|---|---|---|")
    for tool in tools:
        print(
            f"| (a) highest offered rate passing (sent ≥ 99 %, loss < 1 %), {tool} | {spread(best[tool])} | |"
        )
    for tool in tools:
        print(f"| (a) highest rate sent and received with < 1 % loss, {tool} | {spread(sent_ok[tool])} | |")
    for tool in ("vnb-probe", "vnb-probe --busy-poll"):
        ratio = [v / i for v, i in zip(best[tool], best["iperf3"], strict=True) if i]
        print(f"| (a) target-rule ratio {tool} / iperf3, per repetition | {spread(ratio)} | ≥ 2 |")
        ratio = [v / i for v, i in zip(sent_ok[tool], sent_ok["iperf3"], strict=True) if i]
        print(f"| (a) sent-rate ratio {tool} / iperf3, per repetition | {spread(ratio)} | ≥ 2 |")
    for name in cpu:
        print(f"| (b) sender CPU s, {names[name].replace(chr(10), ' ')} | {spread(cpu[name], '{:.3f}')} | |")
    pairs = [("vnb", "iperf3"), ("vnbq", "iperf3"), ("vnbq5", "iperf3 (q5 run)")]
    for name, base in pairs:
        if cpu.get(name):
            ratio = [a / b for a, b in zip(cpu[name], cpu[base], strict=False) if b]
            label = names[name].replace(chr(10), " ")
            print(f"| (b) CPU ratio {label} / iperf3 (same run, per repetition) | {spread(ratio)} | ≤ 0.5 |")
    for label, rows in acc.items():
        for pps, e, p99, p50 in rows:
            print(f"| (c) {label}, {pps:,} pps: rate error % | {spread(e, '{:.4f}')} | ≤ 0.5 |")
            goal = "p99 ≤ 50" if pps == 10000 else ""
            print(
                f"| (c) {label}, {pps:,} pps: lateness p50 / p99 µs | {spread(p50, '{:.2f}')} / "
                f"{spread(p99, '{:.1f}')} | {goal} |"
            )


if __name__ == "__main__":
    main(*sys.argv[1:5])
