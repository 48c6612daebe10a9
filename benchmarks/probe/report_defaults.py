"""Tables, summary and figure of benchmarks/probe/run.py (one row per run in runs.csv).

    .venv/bin/python benchmarks/probe/run.py --redraw        # from OUT/runs.csv, no root needed

Every figure is a median over the repetitions with its [min .. max]; every ratio is taken within
one repetition (both tools under the same load) and then summarised the same way.
"""

from __future__ import annotations

import csv
import json
import statistics
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from vnetbench.palette import BLACK, BLUE, MAGENTA, NEUTRAL

# each tool's colour in every panel (palette.SERIES); reference lines are grey and dashed, named in the legend
CASE_COLOURS = {"vnb": BLUE, "vnb-blocking": BLACK, "iperf3": MAGENTA}

COLUMNS = [
    "part",
    "case",
    "rep",
    "target_pps",
    "load1",
    "cpu_s",
    "sent_packets",
    "achieved_pps",
    "missed_slots_packets",
    "lateness_p50_ns",
    "lateness_p99_ns",
    "lateness_max_ns",
    "burst_mean_packets",
    "burst_p99_packets",
    "burst_max_packets",
    "pacing_quantum_ns",
    "mean_message_packets",
    "received_packets",
    "lost_packets",
    "loss_ratio",
    "kernel_drops_packets",
    "timed_polls",
    "receiver_cpu_s",
]
PASS_SENT, PASS_LOSS = 0.99, 0.01  # a max-rate step passes: sent >= 99 % of target, < 1 % lost
CPU_LABELS = {
    "iperf3": "iperf3 `-u -l 1472 -b 100M` (1 ms pacing)",
    "vnb": "vnb-probe `--rate 100M` (default: 1 ms pacing)",
    "vnb-q5": "vnb-probe `--rate 100M --pacing-quantum-us 5000`",
    "vnb-gso": "vnb-probe `--rate 100M --gso`",
    "vnb-gso-q5": "vnb-probe `--rate 100M --gso --pacing-quantum-us 5000`",
    "vnb-gso-gro": "vnb-probe `--rate 100M --gso`, receiver `--gro`",
    "vnb-pps": "vnb-probe `--pps 8492` (default: every packet at its slot)",
    "iperf3-pt118": "iperf3 `--pacing-timer 118` (one packet per timer tick)",
    "vnb-waitrecv": "vnb-probe `--rate 100M`, receiver `--poll-max-us 0`",
}


def _json(path: Path) -> dict[str, Any]:
    try:
        text = path.read_text()
        return json.loads(text[text.index("{") :])  # iperf3 may print a warning line first
    except (OSError, ValueError):
        return {}


def vnb_fields(send_path: Path, recv_path: Path) -> dict[str, Any]:
    s, r = _json(send_path), _json(recv_path)
    late, burst, totals = s.get("send_lateness") or {}, s.get("burst_packets") or {}, r.get("totals") or {}
    return {
        "sent_packets": s.get("sent_packets"),
        "achieved_pps": s.get("achieved_pps"),
        "missed_slots_packets": s.get("missed_slots_packets"),
        "lateness_p50_ns": late.get("p50_ns"),
        "lateness_p99_ns": late.get("p99_ns"),
        "lateness_max_ns": late.get("max_ns"),
        "burst_mean_packets": burst.get("mean_packets"),
        "burst_p99_packets": burst.get("p99_packets"),
        "burst_max_packets": burst.get("max_packets"),
        "pacing_quantum_ns": s.get("pacing_quantum_ns"),
        "mean_message_packets": s.get("mean_message_packets"),
        "received_packets": totals.get("unique_packets"),
        "lost_packets": totals.get("lost_packets"),
        "loss_ratio": totals.get("loss_ratio"),
        "kernel_drops_packets": r.get("kernel_drops_packets"),
        "timed_polls": r.get("timed_polls"),
        "receiver_cpu_s": (r["cpu_user_ns"] + r["cpu_system_ns"]) / 1e9 if "cpu_user_ns" in r else None,
    }


def iperf3_fields(client_path: Path, server_path: Path) -> dict[str, Any]:
    c = (_json(client_path).get("end") or {}).get("sum") or {}
    server_end = _json(server_path).get("end") or {}
    s = server_end.get("sum") or {}
    host_pct = (server_end.get("cpu_utilization_percent") or {}).get("host_total")
    packets, secs = c.get("packets"), c.get("seconds")
    lost = s.get("lost_packets")
    return {
        "sent_packets": packets,
        "achieved_pps": packets / secs if packets and secs else None,
        "received_packets": s["packets"] - lost
        if s.get("packets") is not None and lost is not None
        else None,
        "lost_packets": lost,
        "loss_ratio": (s.get("lost_percent") or 0) / 100 if s else None,
        # the server's own CPU share over its run (iperf3 reports % of one core)
        "receiver_cpu_s": host_pct * s["seconds"] / 100
        if host_pct is not None and s.get("seconds")
        else None,
    }


# ---------------------------------------------------------------------------------- statistics


def _f(v: Any) -> float | None:
    try:
        return float(v)
    except (TypeError, ValueError):
        return None


def spread(values: Iterable[float | None]) -> dict[str, float] | None:
    vs = [v for v in values if v is not None]
    if not vs:
        return None
    return {"median": statistics.median(vs), "min": min(vs), "max": max(vs), "n": len(vs)}


def fmt(s: dict[str, float] | None, f: Callable[[float], str] = lambda v: f"{v:.3f}") -> str:
    if not s:
        return "–"
    return f"{f(s['median'])} [{f(s['min'])} .. {f(s['max'])}]"


def _rows(rows: list[dict[str, Any]], part: str, case: str, pps: float | None = None) -> list[dict[str, Any]]:
    """The runs of one case (at one target rate)."""
    return [
        r
        for r in rows
        if r["part"] == part and r["case"] == case and (pps is None or float(r["target_pps"]) == pps)
    ]


def _by_rep(rows: list[dict[str, Any]], key: str) -> dict[int, float]:
    return {int(r["rep"]): v for r in rows if (v := _f(r[key])) is not None}


def ratios(num: dict[int, float], den: dict[int, float]) -> list[float]:
    return [num[k] / den[k] for k in num if den.get(k)]


def cpu_summary(rows: list[dict[str, Any]]) -> dict[str, Any]:
    base = _by_rep(_rows(rows, "cpu", "iperf3"), "cpu_s")
    out = {}
    for case in CPU_LABELS:
        rs = _rows(rows, "cpu", case)
        if not rs:
            continue
        cpu = _by_rep(rs, "cpu_s")
        out[case] = {
            "cpu_s": spread(cpu.values()),
            "ratio_to_iperf3": spread(ratios(cpu, base)),
            "achieved_mbit_s": spread(
                _f(r["achieved_pps"]) and _f(r["achieved_pps"]) * 1472 * 8 / 1e6 for r in rs
            ),
            "loss_ratio": spread(_f(r["loss_ratio"]) for r in rs),
            "burst_mean_packets": spread(_f(r["burst_mean_packets"]) for r in rs),
            "lateness_p99_ns": spread(_f(r["lateness_p99_ns"]) for r in rs),
            "receiver_cpu_s": spread(_f(r["receiver_cpu_s"]) for r in rs),
        }
    if "vnb-pps" in out and "iperf3-pt118" in out:
        same = ratios(
            _by_rep(_rows(rows, "cpu", "vnb-pps"), "cpu_s"),
            _by_rep(_rows(rows, "cpu", "iperf3-pt118"), "cpu_s"),
        )
        out["vnb-pps"]["ratio_to_iperf3_same_granularity"] = spread(same)
    return out


def acc_summary(rows: list[dict[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for case in ("vnb", "iperf3"):
        for pps in sorted({float(r["target_pps"]) for r in rows if r["part"] == "acc"}):
            rs = _rows(rows, "acc", case, pps)
            err = [abs(a / pps - 1) * 100 for r in rs if (a := _f(r["achieved_pps"])) is not None]
            out[f"{case}@{pps:.0f}"] = {
                "rate_error_pct": spread(err),
                "lateness_p50_ns": spread(_f(r["lateness_p50_ns"]) for r in rs),
                "lateness_p99_ns": spread(_f(r["lateness_p99_ns"]) for r in rs),
                "missed_slots_packets": spread(_f(r["missed_slots_packets"]) for r in rs),
                "cpu_pct": spread(_cpu_pct(r, pps) for r in rs),
            }
    return out


def _cpu_pct(r: dict[str, Any], pps: float) -> float | None:
    """Sender CPU as % of one core over the run (its length: packets sent / rate)."""
    cpu, sent = _f(r["cpu_s"]), _f(r["sent_packets"])
    return 100 * cpu / (sent / pps) if cpu is not None and sent else None


def _received_pps(r: dict[str, Any]) -> float:
    return (_f(r["achieved_pps"]) or 0) * (1 - (_f(r["loss_ratio"]) or 0))


def _passes(r: dict[str, Any]) -> bool:
    a, loss = _f(r["achieved_pps"]), _f(r["loss_ratio"])
    return a is not None and loss is not None and a >= PASS_SENT * float(r["target_pps"]) and loss < PASS_LOSS


def max_summary(rows: list[dict[str, Any]]) -> dict[str, Any]:
    best: dict[str, dict[int, float]] = {}
    confirmed: dict[str, dict[int, float]] = {}
    for r in (r for r in rows if r["part"] == "max"):
        rep, case = int(r["rep"]), r["case"]
        if _passes(r):
            best.setdefault(case, {})[rep] = max(best.get(case, {}).get(rep, 0), float(r["target_pps"]))
        if (a := _f(r["achieved_pps"])) and (_f(r["loss_ratio"]) or 0) < PASS_LOSS:
            confirmed.setdefault(case, {})[rep] = max(confirmed.get(case, {}).get(rep, 0), a)
    reps = {int(r["rep"]) for r in rows if r["part"] == "max"}
    if not reps:
        return {}
    for d in [*best.values(), *confirmed.values()]:
        for rep in reps:
            d.setdefault(rep, 0.0)  # nothing passed in that repetition
    out: dict[str, Any] = {}
    for case in ("vnb", "vnb-blocking", "iperf3"):
        out[case] = {
            "reps_nothing_passed": sum(1 for v in best.get(case, {}).values() if v == 0),
            "reps_nothing_below_1pct_loss": sum(1 for v in confirmed.get(case, {}).values() if v == 0),
            "highest_passing_pps": spread(best.get(case, {}).values()),
            "highest_confirmed_pps": spread(confirmed.get(case, {}).values()),
        }
        if case != "iperf3":
            out[case]["ratio_to_iperf3"] = spread(ratios(best.get(case, {}), best.get("iperf3", {})))
            out[case]["confirmed_ratio_to_iperf3"] = spread(
                ratios(confirmed.get(case, {}), confirmed.get("iperf3", {}))
            )
    return out


def summary(rows: list[dict[str, Any]], conditions: dict[str, Any]) -> dict[str, Any]:
    return {
        "conditions": conditions,
        "load1_during_runs": spread(_f(r["load1"]) for r in rows),
        "cpu": cpu_summary(rows),
        "acc": acc_summary(rows),
        "max": max_summary(rows),
    }


# ---------------------------------------------------------------------------------- table, figure


def f0(v: float) -> str:
    return f"{v:,.0f}"


def f1(v: float) -> str:
    return f"{v:.1f}"


def f2(v: float) -> str:
    return f"{v:.2f}"


def f3(v: float) -> str:
    return f"{v:.3f}"


def us(v: float) -> str:
    return f"{v / 1e3:.1f} µs" if v < 1e6 else f"{v / 1e6:.2f} ms"


def table(s: dict[str, Any]) -> str:
    c = s["conditions"]
    secs = c.get("seconds") or {}
    lines = [
        f"Run {c.get('start', '?')} .. {c.get('end', '?')}; {c.get('cpus')} CPUs, kernel {c.get('kernel')}, "
        f"{c.get('iperf3')}, {c.get('probe')}; load average (1 min) at the start of each run: "
        f"{fmt(s['load1_during_runs'], f2)}.",
        "",
        f"Sender CPU for {secs.get('cpu', 10):g} s of 100 Mbit/s in 1472-byte datagrams, "
        f"{c.get('reps', '?')} repetitions, median [min .. max]:",
        "",
        "| sender | CPU s | ratio to iperf3 (same repetition) | Mbit/s | packets per burst | lateness p99 "
        "| receiver CPU s |",
        "| --- | --- | --- | --- | --- | --- | --- |",
    ]
    for case, v in s["cpu"].items():
        lines.append(
            f"| {CPU_LABELS[case]} | {fmt(v['cpu_s'])} | {fmt(v['ratio_to_iperf3'], f2)} | "
            f"{fmt(v['achieved_mbit_s'], f2)} | {fmt(v['burst_mean_packets'], f1)} | "
            f"{fmt(v['lateness_p99_ns'], us)} | {fmt(v['receiver_cpu_s'])} |"
        )
    if same := s["cpu"].get("vnb-pps", {}).get("ratio_to_iperf3_same_granularity"):
        lines += [
            "",
            f"`--pps 8492` against iperf3 `--pacing-timer 118` (equal burstiness): {fmt(same, f2)}.",
        ]
    if s["acc"]:
        lines += _acc_lines(s, secs)
    if s["max"]:
        lines += _max_lines(s, c, secs)
    return "\n".join(lines) + "\n"


def _acc_lines(s: dict[str, Any], secs: dict[str, Any]) -> list[str]:
    lines: list[str] = []
    lines += [
        "",
        f"Rate accuracy and send lateness, 18-byte payloads, {secs.get('acc', 5):g} s per run:",
        "",
        "| sender | rate error % | lateness p50 | lateness p99 | missed slots |",
        "| --- | --- | --- | --- | --- |",
    ]
    for key, v in s["acc"].items():
        case, pps = key.split("@")
        name = f"vnb-probe `--pps {pps}`" if case == "vnb" else f"iperf3 `-b` at {int(pps):,} pps"
        lines.append(
            f"| {name} | {fmt(v['rate_error_pct'], f3)} | {fmt(v['lateness_p50_ns'], us)} | "
            f"{fmt(v['lateness_p99_ns'], us)} | {fmt(v['missed_slots_packets'], f0)} |"
        )
    return lines


def _max_lines(s: dict[str, Any], c: dict[str, Any], secs: dict[str, Any]) -> list[str]:
    lines: list[str] = []
    lines += [
        "",
        "Highest offered rate passing (sent ≥ 99 % of it, < 1 % lost), 18-byte payloads, "
        f"{secs.get('max', 3):g} s per step:",
        "",
        "| sender | highest passing, pps | ratio to iperf3 (same repetition) "
        "| highest rate sent with < 1 % loss, pps | ratio to iperf3 (same repetition) |",
        "| --- | --- | --- | --- | --- |",
    ]
    names = {
        "vnb": "vnb-probe (default)",
        "vnb-blocking": "vnb-probe, receiver `--poll-max-us 0`",
        "iperf3": "iperf3",
    }
    for case, v in s["max"].items():
        lines.append(
            f"| {names[case]} | {fmt(v['highest_passing_pps'], f0)} | "
            f"{fmt(v.get('ratio_to_iperf3'), f2)} | {fmt(v['highest_confirmed_pps'], f0)} | "
            f"{fmt(v.get('confirmed_ratio_to_iperf3'), f2)} |"
        )
    i = s["max"]["iperf3"]
    lines += [
        "",
        f"Ratios are taken over the repetitions in which iperf3 had a value: it passed no step in "
        f"{i['reps_nothing_passed']} and had no run below 1 % loss in {i['reps_nothing_below_1pct_loss']} "
        f"of {c.get('reps', '?')} repetitions.",
    ]
    return lines


def figure(rows: list[dict[str, Any]], s: dict[str, Any], path: Path) -> None:
    """One panel per part that ran: sender CPU, lateness, highest rate before loss."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from vnetbench.report.cycle import use_palette

    use_palette()

    panels = [
        draw
        for part, draw in (("cpu", _cpu_panel), ("acc", _acc_panel), ("max", _max_panel))
        if any(r["part"] == part for r in rows)
    ]
    fig, axes = plt.subplots(1, len(panels), figsize=(5 * len(panels), 4.6), squeeze=False)
    for draw, ax in zip(panels, axes[0], strict=True):
        draw(ax, rows, s)
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def _cpu_panel(a: Any, rows: list[dict[str, Any]], s: dict[str, Any]) -> None:
    secs = (s["conditions"].get("seconds") or {}).get("cpu", 10)
    cases = list(s["cpu"])
    med = [s["cpu"][k]["cpu_s"]["median"] for k in cases]
    lo = [m - s["cpu"][k]["cpu_s"]["min"] for m, k in zip(med, cases, strict=True)]
    hi = [s["cpu"][k]["cpu_s"]["max"] - m for m, k in zip(med, cases, strict=True)]
    a.barh(cases, med, xerr=[lo, hi], color=[MAGENTA if k.startswith("iperf3") else BLUE for k in cases])
    a.invert_yaxis()
    a.set_xlabel(f"sender CPU, s per {secs:g} s run (median, min..max)")
    a.set_title("100 Mbit/s of 1472 B")


def _acc_panel(b: Any, rows: list[dict[str, Any]], s: dict[str, Any]) -> None:
    for case in ("vnb", "iperf3"):
        pts = [
            (float(r["target_pps"]) / 1e3, _f(r["lateness_p99_ns"]) / 1e3)
            for r in _rows(rows, "acc", case)
            if _f(r["lateness_p99_ns"])
        ]
        if pts:
            b.scatter(*zip(*pts, strict=True), color=CASE_COLOURS[case], label=f"{case} p99")
    b.axhline(50, color=NEUTRAL, ls="--", lw=1, label="goal: 50 µs")
    b.set_xscale("log")
    b.set_yscale("log")
    b.set_xlabel("packets/s (thousands), 18 B")
    b.set_ylabel("send lateness p99, µs")
    b.set_title("vnb-probe --pps: lateness per run")
    b.legend()


def _max_panel(c: Any, rows: list[dict[str, Any]], s: dict[str, Any]) -> None:
    for case in ("vnb", "vnb-blocking", "iperf3"):
        rs = _rows(rows, "max", case)
        targets = sorted({float(r["target_pps"]) for r in rs})
        got = [
            statistics.median([_received_pps(r) for r in rs if float(r["target_pps"]) == t]) for t in targets
        ]
        c.plot([t / 1e3 for t in targets], [g / 1e3 for g in got], "o-", color=CASE_COLOURS[case], label=case)
    # under the tools' lines, which run along it up to their knee
    c.plot([0, 500], [0, 500], color=NEUTRAL, lw=1, ls="--", label="received = offered", zorder=1.5)
    c.set_xlabel("offered, kpps (18 B)")
    c.set_ylabel("sent x (1 - loss), kpps (median)")
    c.set_title("highest rate before loss")
    c.legend()


def write(out: Path) -> None:
    with (out / "runs.csv").open() as f:
        rows = list(csv.DictReader(f))
    cond_path = out / "conditions.json"
    conditions = json.loads(cond_path.read_text()) if cond_path.exists() else {}
    s = summary(rows, conditions)
    (out / "summary.json").write_text(json.dumps(s, indent=1) + "\n")
    (out / "table.md").write_text(table(s))
    figure(rows, s, out / "defaults.png")
    print(table(s))
