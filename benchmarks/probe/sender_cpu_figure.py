"""Table and figure of sender_cpu.sh: sender CPU of 100 Mbit/s of 1472-byte datagrams, iperf3 vs
vnb-probe (1 and 5 ms pacing quanta, with and without UDP GSO), on a plain veth pair and with the
receiving veth in threaded NAPI.

python sender_cpu_figure.py OUT_DIR   (reads OUT_DIR/raw, writes OUT_DIR/sender-cpu.png, prints
markdown: median [min .. max] over the repetitions; ratios against iperf3 of the same repetition
and set-up)
python sender_cpu_figure.py OUT_DIR --redraw   (the same figure from OUT_DIR/runs.csv, the runs kept in
git: runs_csv.py's rows of the same files; prints nothing, measures nothing)
"""

from __future__ import annotations

import csv
import json
import re
import statistics
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt

from vnetbench.palette import BLUE, BLUISH_GREEN, MAGENTA, NEUTRAL, REDDISH_PURPLE
from vnetbench.report.cycle import use_palette

use_palette()

# vnetbench's palette (its report's figures too), each series also a marker of its own; goals grey
# dashed and named in the legend; the black ticks are medians
SETUP_STYLE = {"plain": (BLUISH_GREEN, "o"), "napi": (REDDISH_PURPLE, "D")}

SETUPS = {
    "plain": "plain veth (receive softirq charged to the sender)",
    "napi": "receiver veth in threaded NAPI",
}
CASES = {
    "iperf3": "iperf3 -u -l 1472 -b 100M",
    "q1": "vnb-probe --pacing-quantum-us 1000",
    "q5": "vnb-probe --pacing-quantum-us 5000",
    "gso1": "vnb-probe --gso --pacing-quantum-us 1000",
    "gso5": "vnb-probe --gso --pacing-quantum-us 5000",
}
TICKS = ["iperf3", "q=1 ms", "q=5 ms", "GSO\nq=1 ms", "GSO\nq=5 ms"]
GOAL = 0.5


@dataclass
class Run:
    cpu_s: float
    napi_s: float
    ksoftirqd_s: float
    achieved_mbit: float | None
    sent: int | None
    missed: int | None
    loss_pct: float | None
    lost: int | None
    per_message: float | None


def load(path: Path) -> Any:
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError):
        return None


def tagged(path: Path, tag: str) -> float | None:
    """The number after `tag` on a line of a .cpu / .threads file (CPU: user + system)."""
    try:
        for line in path.read_text().splitlines():
            parts = line.split()
            if parts and parts[0] == tag:
                return sum(float(x) for x in parts[1:])
    except OSError:
        return None
    return None


def read_run(raw: Path, setup: str, case: str, rep: int) -> Run | None:
    f = raw / f"{setup}-{case}-{rep}"
    cpu = tagged(Path(f"{f}.cpu"), "CPU")
    if cpu is None:
        return None
    napi = tagged(Path(f"{f}.threads"), "NAPI") or 0.0
    soft = tagged(Path(f"{f}.threads"), "KSOFTIRQD") or 0.0
    mbit = loss = per_msg = None
    lost = sent = missed = None
    if case == "iperf3":
        c, s = load(Path(f"{f}.client.json")), load(Path(f"{f}.server.json"))
        if c and "end" in c:
            mbit = c["end"]["sum"]["bits_per_second"] / 1e6
            sent = int(c["end"]["sum"]["packets"])
        if s and "end" in s:
            loss = float(s["end"]["sum"]["lost_percent"])
            lost = int(s["end"]["sum"]["lost_packets"])
    else:
        snd, rcv = load(Path(f"{f}.send.json")), load(Path(f"{f}.recv.json"))
        if snd:
            mbit = snd["achieved_bps"] / 1e6
            sent, missed = int(snd["sent_packets"]), int(snd["missed_slots_packets"])
            per_msg = snd.get("mean_message_packets")
        if rcv:
            loss = rcv["totals"]["loss_ratio"] * 100
            lost = int(rcv["totals"]["lost_packets"])
    return Run(cpu, napi, soft, mbit, sent, missed, loss, lost, per_msg)


def collect(raw: Path) -> dict[tuple[str, str], dict[int, Run]]:
    reps = sorted({int(m.group(1)) for p in raw.glob("*.cpu") if (m := re.search(r"-(\d+)\.cpu$", p.name))})
    out: dict[tuple[str, str], dict[int, Run]] = {}
    for setup in SETUPS:
        for case in CASES:
            out[(setup, case)] = {r: run for r in reps if (run := read_run(raw, setup, case, r))}
    return out


def from_runs_csv(path: Path) -> dict[tuple[str, str], dict[int, Run]]:
    """collect()'s runs from runs_csv.py's rows (the .cpu, .threads and JSON files' numbers, 6
    significant digits); a run without its .cpu line is left out, as collect() leaves it."""
    out: dict[tuple[str, str], dict[int, Run]] = {(s, c): {} for s in SETUPS for c in CASES}

    def num(value: str) -> float | None:
        return float(value) if value else None

    with path.open() as f:
        for r in csv.DictReader(f):
            setup, case, rep = r["run"].split("-")
            if (setup, case) not in out or not r["sender_cpu_s"]:
                continue
            loss = num(r["loss_ratio"])
            sent, missed, lost = (
                num(r["sent_packets"]),
                num(r["missed_slots_packets"]),
                num(r["lost_packets"]),
            )
            out[(setup, case)][int(rep)] = Run(
                cpu_s=float(r["sender_cpu_s"]),
                napi_s=num(r["napi_cpu_s"]) or 0.0,
                ksoftirqd_s=num(r["ksoftirqd_cpu_s"]) or 0.0,
                achieved_mbit=None if not r["achieved_bps"] else float(r["achieved_bps"]) / 1e6,
                sent=None if sent is None else int(sent),
                missed=None if missed is None else int(missed),
                loss_pct=None if loss is None else loss * 100,
                lost=None if lost is None else int(lost),
                per_message=num(r["mean_message_packets"]),
            )
    return {key: dict(sorted(runs.items())) for key, runs in out.items()}


def spread(xs: list[float], fmt: str) -> str:
    if not xs:
        return "n/a"
    return f"{fmt.format(statistics.median(xs))} [{fmt.format(min(xs))} .. {fmt.format(max(xs))}]"


def ratios(
    data: dict[tuple[str, str], dict[int, Run]], setup: str, case: str, total: bool, per_packet: bool = False
) -> list[float]:
    """CPU (sender, or sender + napi thread with `total`) over iperf3's in the same repetition and
    set-up; `per_packet`: each divided by the packets it sent (a sender that skipped slots after
    a stall sent fewer packets and so used less CPU)."""
    base = data[(setup, "iperf3")]
    out = []
    for rep, run in data[(setup, case)].items():
        b = base.get(rep)
        if b is None:
            continue
        num = run.cpu_s + (run.napi_s if total else 0.0)
        den = b.cpu_s + (b.napi_s if total else 0.0)
        if per_packet:
            if not (run.sent and b.sent):
                continue
            num, den = num / run.sent, den / b.sent
        if den > 0:
            out.append(num / den)
    return out


def verdict(rs: list[float]) -> str:
    if not rs:
        return ""
    if max(rs) <= GOAL:
        return " ✔ every rep"
    if statistics.median(rs) <= GOAL:
        return " ✔ median"
    return " ✘"


def table(data: dict[tuple[str, str], dict[int, Run]]) -> list[str]:
    lines = []
    for setup, title in SETUPS.items():
        lines += [
            f"### {title}\n",
            "| sender | sender CPU s | ratio to iperf3 (goal ≤ 0.5) | ratio per packet sent "
            "| napi thread s | sender + napi s | ratio of sender + napi | achieved Mbit/s | missed slots "
            "| receiver loss % (max lost packets) | ksoftirqd s | packets per message |",
            "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |",
        ]
        for case, label in CASES.items():
            runs = list(data[(setup, case)].values())
            if not runs:
                continue
            r, rt = ratios(data, setup, case, False), ratios(data, setup, case, True)
            ratio = "1" if case == "iperf3" else spread(r, "{:.2f}") + verdict(r)
            ratio_t = "1" if case == "iperf3" else spread(rt, "{:.2f}")
            rp = ratios(data, setup, case, False, per_packet=True)
            ratio_p = "1" if case == "iperf3" else spread(rp, "{:.2f}") + verdict(rp)
            missed = [float(x.missed) for x in runs if x.missed is not None]
            mbit = [x.achieved_mbit for x in runs if x.achieved_mbit is not None]
            loss = [x.loss_pct for x in runs if x.loss_pct is not None]
            lost = [x.lost for x in runs if x.lost is not None]
            per = [x.per_message for x in runs if x.per_message is not None]
            lines.append(
                f"| {label} | {spread([x.cpu_s for x in runs], '{:.3f}')} | {ratio} | {ratio_p} "
                f"| {spread([x.napi_s for x in runs], '{:.2f}')} "
                f"| {spread([x.cpu_s + x.napi_s for x in runs], '{:.3f}')} | {ratio_t} "
                f"| {spread(mbit, '{:.2f}')} | {spread(missed, '{:.0f}') if missed else '–'} "
                f"| {spread(loss, '{:.3f}')} ({max(lost) if lost else 'n/a'}) "
                f"| {spread([x.ksoftirqd_s for x in runs], '{:.2f}')} "
                f"| {spread(per, '{:.1f}') if per else '1 (one per write)'} |"
            )
        lines.append("")
    return lines


def strip(ax: Any, i: float, ys: list[float], **kw: Any) -> None:
    ax.scatter([i] * len(ys), ys, s=20, alpha=0.75, **kw)
    if ys:
        ax.hlines(statistics.median(ys), i - 0.25, i + 0.25, color="k", lw=1)


def draw(out: Path, data: dict[tuple[str, str], dict[int, Run]]) -> None:
    fig, ax = plt.subplots(1, 3, figsize=(17, 5))
    for k, setup in enumerate(SETUPS):
        a = ax[k]
        for i, case in enumerate(CASES):
            runs = list(data[(setup, case)].values())
            strip(a, i - 0.12, [x.cpu_s for x in runs], color=BLUE, label="sender" if i == 0 else None)
            if setup == "napi":
                tot = [x.cpu_s + x.napi_s for x in runs]
                label = "sender + napi thread" if i == 0 else None
                strip(a, i + 0.12, tot, color=MAGENTA, marker="s", label=label)
        base = [x.cpu_s for x in data[(setup, "iperf3")].values()]
        if base:
            half = GOAL * statistics.median(base)
            a.axhline(half, ls="--", color=NEUTRAL, lw=1, label="0.5 × iperf3 sender (median)")
        a.set_xticks(range(len(CASES)), TICKS)
        a.set_ylabel("CPU s per 10 s run")
        a.set_ylim(bottom=0)
        a.set_title(SETUPS[setup], fontsize=10)
        a.legend(fontsize=8)
    a = ax[2]
    for k, setup in enumerate(SETUPS):
        for i, case in enumerate(list(CASES)[1:]):
            rs = ratios(data, setup, case, False)
            colour, marker = SETUP_STYLE[setup]
            strip(a, i + (k - 0.5) * 0.3, rs, color=colour, marker=marker, label=setup if i == 0 else None)
    a.axhline(GOAL, ls="--", color=NEUTRAL, lw=1, label="goal ≤ 0.5")
    a.set_xticks(range(len(CASES) - 1), TICKS[1:])
    a.set_ylabel("sender CPU / iperf3's (same repetition and set-up)")
    a.set_ylim(bottom=0)
    a.set_title("ratio to iperf3, per repetition", fontsize=10)
    a.legend(fontsize=8)
    fig.suptitle("sender CPU, 100 Mbit/s of 1472-byte datagrams on veth — shared 2-vCPU VM (README: load)")
    fig.tight_layout()
    fig.savefig(out, dpi=110)


def main() -> None:
    out = Path(sys.argv[1])
    if sys.argv[2:] == ["--redraw"]:
        draw(out / "sender-cpu.png", from_runs_csv(out / "runs.csv"))
        return
    data = collect(out / "raw")
    draw(out / "sender-cpu.png", data)
    print("## Sender CPU, 100 Mbit/s of 1472-byte datagrams, 10 s runs: median [min .. max]\n")
    print("\n".join(table(data)))
    n = sum(len(v) for v in data.values())
    print(f"({n} runs; ratios against iperf3 of the same repetition and set-up)")


if __name__ == "__main__":
    main()
