"""One CSV row per benchmark run from a raw directory: the compact summary kept in git.

The benchmark scripts write every run's raw output (vnb-probe's send/recv JSON, iperf3's
client/server JSON, the sender's CPU line, kernel-thread CPU) to a `raw*/` directory that git
ignores; this keeps what the tables and figures are made of, one row per run:

    python3 benchmarks/probe/runs_csv.py RAW_DIR > runs.csv

A run is the file prefix the scripts use (e.g. `cpu-iperf3-3`, `acc-vnb-10000-2`).
"""

from __future__ import annotations

import csv
import json
import sys
from pathlib import Path
from typing import Any

SUFFIXES = (".send.json", ".recv.json", ".client.json", ".server.json", ".cpu", ".threads")
COLUMNS = [
    "run",
    "tool",
    "sender_cpu_s",
    "target_pps",
    "sent_packets",
    "achieved_pps",
    "achieved_bps",
    "missed_slots_packets",
    "lateness_p50_ns",
    "lateness_p99_ns",
    "lateness_max_ns",
    "mean_batch_packets",
    "mean_message_packets",
    "pacing_quantum_ns",
    "received_packets",
    "lost_packets",
    "loss_ratio",
    "kernel_drops_packets",
    "napi_cpu_s",
    "ksoftirqd_cpu_s",
]


def _json(path: Path) -> dict[str, Any] | None:
    try:
        text = path.read_text()
        # iperf3 may print a warning line before its JSON
        return json.loads(text[text.index("{") :])
    except (OSError, ValueError):
        return None


def _cpu(path: Path) -> float | None:
    """The wrapper's `CPU user system` line (seconds): their sum."""
    try:
        for line in path.read_text().splitlines():
            if line.startswith("CPU "):
                _, user, system = line.split()
                return float(user) + float(system)
    except (OSError, ValueError):
        pass
    return None


def _threads(path: Path) -> dict[str, float]:
    out: dict[str, float] = {}
    try:
        for line in path.read_text().splitlines():
            name, _, value = line.partition(" ")
            out[name.lower()] = float(value)
    except (OSError, ValueError):
        pass
    return out


def _vnb(row: dict[str, Any], send: dict[str, Any] | None, recv: dict[str, Any] | None) -> None:
    if send:
        late = send.get("send_lateness") or {}
        row.update(
            tool="vnb-probe",
            target_pps=send.get("target_pps"),
            sent_packets=send.get("sent_packets"),
            achieved_pps=send.get("achieved_pps"),
            achieved_bps=send.get("achieved_bps"),
            missed_slots_packets=send.get("missed_slots_packets"),
            lateness_p50_ns=late.get("p50_ns"),
            lateness_p99_ns=late.get("p99_ns"),
            lateness_max_ns=late.get("max_ns"),
            mean_batch_packets=send.get("mean_batch_packets"),
            mean_message_packets=send.get("mean_message_packets"),
            pacing_quantum_ns=send.get("pacing_quantum_ns"),
        )
        if row["sender_cpu_s"] is None:
            row["sender_cpu_s"] = (send.get("cpu_user_ns", 0) + send.get("cpu_system_ns", 0)) / 1e9
    if recv:
        totals = recv.get("totals") or {}
        row.update(
            received_packets=totals.get("unique_packets"),
            lost_packets=totals.get("lost_packets"),
            loss_ratio=totals.get("loss_ratio"),
            kernel_drops_packets=recv.get("kernel_drops_packets"),
        )


def _iperf3(row: dict[str, Any], client: dict[str, Any] | None, server: dict[str, Any] | None) -> None:
    row["tool"] = "iperf3"
    csum = ((client or {}).get("end") or {}).get("sum") or {}
    ssum = ((server or {}).get("end") or {}).get("sum") or {}
    secs = csum.get("seconds") or 0
    row.update(
        sent_packets=csum.get("packets"),
        achieved_pps=(csum["packets"] / secs) if secs and csum.get("packets") else None,
        achieved_bps=csum.get("bits_per_second"),
    )
    if ssum:
        packets, lost = ssum.get("packets"), ssum.get("lost_packets")
        row.update(
            received_packets=(packets - lost) if packets is not None and lost is not None else None,
            lost_packets=lost,
            loss_ratio=(ssum.get("lost_percent") or 0) / 100,
        )


def rows(raw: Path) -> list[dict[str, Any]]:
    prefixes = sorted({p.name[: -len(s)] for p in raw.iterdir() for s in SUFFIXES if p.name.endswith(s)})
    out = []
    for prefix in prefixes:
        f = {s: raw / f"{prefix}{s}" for s in SUFFIXES}
        row: dict[str, Any] = dict.fromkeys(COLUMNS)
        row["run"] = prefix
        row["sender_cpu_s"] = _cpu(f[".cpu"])
        threads = _threads(f[".threads"])
        row["napi_cpu_s"], row["ksoftirqd_cpu_s"] = threads.get("napi"), threads.get("ksoftirqd")
        if f[".send.json"].exists() or f[".recv.json"].exists():
            _vnb(row, _json(f[".send.json"]), _json(f[".recv.json"]))
        elif f[".client.json"].exists():
            _iperf3(row, _json(f[".client.json"]), _json(f[".server.json"]))
        out.append(row)
    return out


def write(raw: Path, stream: Any) -> None:
    w = csv.DictWriter(stream, fieldnames=COLUMNS, lineterminator="\n")
    w.writeheader()
    for row in rows(raw):
        w.writerow({k: (f"{v:.6g}" if isinstance(v, float) else v) for k, v in row.items()})


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: runs_csv.py RAW_DIR > runs.csv")
    write(Path(sys.argv[1]), sys.stdout)
