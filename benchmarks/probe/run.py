"""vnb-probe at its default flags beside iperf3, side by side in one run (issue 17).

    sudo .venv/bin/python benchmarks/probe/run.py [--reps 5] [--only cpu,acc,max]     (~25 min)

Over one veth pair between two network namespaces, in REPS repetitions whose order rotates:
  cpu  sender CPU for 100 Mbit/s of 1472-byte datagrams, 10 s: iperf3 -u -l 1472 -b 100M;
       vnb-probe --rate 100M (its default pacing for a bit rate: iperf3's 1 ms); the same with
       --pacing-quantum-us 5000, with --gso, with both, and with --gso and its receiver taking
       the GSO sends whole (recv --gro: veth never cuts them into datagrams); vnb-probe --pps
       8492 (its default for a packet schedule: every packet at its own slot time) and iperf3
       at the same granularity (--pacing-timer 118), to show "never costlier than iperf3 at
       equal burstiness"; and the default once more with vnb-probe's receiver waiting on its
       socket (--poll-max-us 0), to show how much of the sender's CPU the receiver's timed
       polling saves on veth.
  acc  rate accuracy and send lateness at 1K, 10K, 100K packets/s of 18 bytes, 5 s: vnb-probe
       --pps (iperf3 -b beside it, rate only: it reports no lateness).
  max  highest offered rate of 18-byte payloads that passes (sent >= 99 % of the target and
       < 1 % lost at the receiver), 3 s per step: vnb-probe default, vnb-probe with its
       receiver's timed polling off (--poll-max-us 0), iperf3.
CPU of a sender = user + system time of that process (wait4's rusage), the same for both tools;
on veth the receive softirq runs in the sender's context and is charged to it, for both alike.

Writes to OUT (default benchmarks/probe/results-defaults/): raw/ (every run's JSON; not in git),
runs.csv (one row per run), summary.json (medians, spreads, ratios, load), table.md and
defaults.png. `--redraw` only redraws table, summary and figure from runs.csv.

Creates only the namespaces PREFIX-S/PREFIX-R (PREFIX from $VNB_BENCH_PREFIX, default vnbpd)
joined by the veth pair PREFIXs0/PREFIXr0 (198.18.0.1/24 <-> 198.18.0.2/24); refuses to run if
they exist; deletes exactly them, and kills exactly the processes it started, on exit.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import report_defaults

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
PROBE = str(ROOT / ".venv" / "bin" / "vnb-probe")
PREFIX = os.environ.get("VNB_BENCH_PREFIX", "vnbpd")
NS_S, NS_R = f"{PREFIX}S", f"{PREFIX}R"
SRC, DST, PORT = "198.18.0.1", "198.18.0.2", 47300
MBIT100_1472_PPS = 8492  # 100e6 / (1472 * 8) = 8 491.8
ACC_RATES = (1_000, 10_000, 100_000)
MAX_RATES = (50_000, 100_000, 150_000, 200_000, 250_000, 300_000, 400_000, 500_000)

# name -> (tool, extra flags); vnb cases send --rate 100M --size 1472 unless they give --pps
CPU_CASES: dict[str, tuple[str, list[str]]] = {
    "iperf3": ("iperf3", []),
    "vnb": ("vnb", []),
    "vnb-q5": ("vnb", ["--pacing-quantum-us", "5000"]),
    "vnb-gso": ("vnb", ["--gso"]),
    "vnb-gso-q5": ("vnb", ["--gso", "--pacing-quantum-us", "5000"]),
    "vnb-gso-gro": ("vnb", ["--gso"]),  # its receiver takes the GSO sends whole (--gro)
    "vnb-pps": ("vnb", ["--pps", str(MBIT100_1472_PPS)]),
    "vnb-waitrecv": ("vnb", []),  # its receiver waits on the socket (--poll-max-us 0)
    "iperf3-pt118": ("iperf3", ["--pacing-timer", "118"]),
}
# the receiver's flags where a case changes them
RECV_FLAGS: dict[str, tuple[str, ...]] = {"vnb-waitrecv": ("--poll-max-us", "0"), "vnb-gso-gro": ("--gro",)}
STARTED: list[subprocess.Popen[bytes]] = []


def sh(*argv: str) -> None:
    subprocess.run(argv, check=True)


def make_pair() -> None:
    have = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout.split()
    for ns in (NS_S, NS_R):
        if ns in have:
            sys.exit(f"namespace {ns} exists already; not ours, refusing to touch it")
    sh("ip", "netns", "add", NS_S)
    sh("ip", "netns", "add", NS_R)
    sh(
        "ip",
        "-n",
        NS_S,
        "link",
        "add",
        f"{PREFIX}s0",
        "type",
        "veth",
        "peer",
        "name",
        f"{PREFIX}r0",
        "netns",
        NS_R,
    )
    sh("ip", "-n", NS_S, "addr", "add", f"{SRC}/24", "dev", f"{PREFIX}s0")
    sh("ip", "-n", NS_R, "addr", "add", f"{DST}/24", "dev", f"{PREFIX}r0")
    for ns, dev in ((NS_S, f"{PREFIX}s0"), (NS_R, f"{PREFIX}r0")):
        sh("ip", "-n", ns, "link", "set", "lo", "up")
        sh("ip", "-n", ns, "link", "set", dev, "up")


def cleanup() -> None:
    for p in STARTED:
        if p.poll() is None:
            p.kill()
            p.wait()
    for ns in (NS_S, NS_R):
        subprocess.run(["ip", "netns", "del", ns], stderr=subprocess.DEVNULL)


def in_ns(ns: str, argv: list[str]) -> list[str]:
    return ["ip", "netns", "exec", ns, *argv]


def start(argv: list[str], out: Path, ready: str | None = None) -> subprocess.Popen[bytes]:
    """Start a server; wait until its stderr says READY (vnb-probe) or it listens (iperf3)."""
    err = out.with_suffix(out.suffix + ".err")
    with out.open("wb") as o, err.open("wb") as e:
        p = subprocess.Popen(argv, stdout=o, stderr=e)
    STARTED.append(p)
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        if ready and ready in err.read_text(errors="replace"):
            return p
        if not ready and f":{PORT + 1} " in listening():
            return p
        if p.poll() is not None:
            break
        time.sleep(0.01)
    raise RuntimeError(f"server did not become ready: {argv}: {err.read_text(errors='replace')}")


def listening() -> str:
    return subprocess.run(in_ns(NS_R, ["ss", "-Hltn"]), capture_output=True, text=True).stdout


def run_sender(argv: list[str], out: Path) -> float:
    """Run a sender to the end; its CPU time (user + system of that process), seconds."""
    with out.open("wb") as o:
        p = subprocess.Popen(argv, stdout=o, stderr=subprocess.DEVNULL)
    STARTED.append(p)
    _, _, ru = os.wait4(p.pid, 0)
    p.returncode = 0
    return ru.ru_utime + ru.ru_stime


def load1() -> float:
    return float(Path("/proc/loadavg").read_text().split()[0])


def vnb_run(
    raw: Path,
    name: str,
    secs: float,
    rate: list[str],
    size: int,
    extra: list[str],
    recv_extra: tuple[str, ...] = (),
) -> dict[str, Any]:
    recv = [
        PROBE,
        "recv",
        "--bind",
        f"{DST}:{PORT}",
        "--expect-streams",
        "1",
        "--duration",
        str(secs + 20),
        "--trace-bin-us",
        "0",
        "--json",
        *recv_extra,
    ]
    server = start(in_ns(NS_R, recv), raw / f"{name}.recv.json", ready="READY")
    send = [
        PROBE,
        "send",
        "--dst",
        f"{DST}:{PORT}",
        *rate,
        "--size",
        str(size),
        "--duration",
        str(secs),
        "--json",
        *extra,
    ]
    row = {"load1": load1(), "cpu_s": run_sender(in_ns(NS_S, send), raw / f"{name}.send.json")}
    server.wait()
    return row | report_defaults.vnb_fields(raw / f"{name}.send.json", raw / f"{name}.recv.json")


def iperf3_run(raw: Path, name: str, secs: float, bits: float, size: int, extra: list[str]) -> dict[str, Any]:
    srv = ["iperf3", "-s", "-1", "-J", "-B", DST, "-p", str(PORT + 1)]
    server = start(in_ns(NS_R, srv), raw / f"{name}.server.json")
    cli = [
        "iperf3",
        "-c",
        DST,
        "-p",
        str(PORT + 1),
        "-u",
        "-J",
        "-l",
        str(size),
        "-b",
        str(int(bits)),
        "-t",
        str(secs),
        *extra,
    ]
    row = {"load1": load1(), "cpu_s": run_sender(in_ns(NS_S, cli), raw / f"{name}.client.json")}
    server.wait()
    return row | report_defaults.iperf3_fields(raw / f"{name}.client.json", raw / f"{name}.server.json")


def rotated(items: list[Any], rep: int) -> list[Any]:
    k = rep % len(items)
    return items[k:] + items[:k]


def cpu_runs(raw: Path, rep: int, secs: float) -> list[dict[str, Any]]:
    rows = []
    for case in rotated(list(CPU_CASES), rep):
        tool, extra = CPU_CASES[case]
        name = f"cpu-{case}-{rep}"
        if tool == "iperf3":
            r = iperf3_run(raw, name, secs, 100e6, 1472, extra)
        else:
            rate = [] if "--pps" in extra else ["--rate", "100M"]
            recv_extra = RECV_FLAGS.get(case, ())
            r = vnb_run(raw, name, secs, rate, 1472, extra, recv_extra)
        rows.append({"part": "cpu", "case": case, "rep": rep, "target_pps": 100e6 / (1472 * 8)} | r)
    return rows


def acc_runs(raw: Path, rep: int, secs: float) -> list[dict[str, Any]]:
    rows = []
    for pps in ACC_RATES:
        for tool in rotated(["vnb", "iperf3"], rep):
            name = f"acc-{tool}-{pps}-{rep}"
            if tool == "vnb":
                r = vnb_run(raw, name, secs, ["--pps", str(pps)], 18, [])
            else:
                r = iperf3_run(raw, name, secs, pps * 18 * 8, 18, [])
            rows.append({"part": "acc", "case": tool, "rep": rep, "target_pps": pps} | r)
    return rows


def max_runs(raw: Path, rep: int, secs: float) -> list[dict[str, Any]]:
    rows = []
    for pps in MAX_RATES:
        for case in rotated(["vnb", "vnb-blocking", "iperf3"], rep):
            name = f"max-{case}-{pps}-{rep}"
            if case == "iperf3":
                r = iperf3_run(raw, name, secs, pps * 18 * 8, 18, [])
            else:
                recv_extra = ("--poll-max-us", "0") if case == "vnb-blocking" else ()
                r = vnb_run(raw, name, secs, ["--pps", str(pps)], 18, [], recv_extra)
            rows.append({"part": "max", "case": case, "rep": rep, "target_pps": pps} | r)
    return rows


def first_line(argv: list[str]) -> str:
    return subprocess.run(argv, capture_output=True, text=True).stdout.split("\n")[0].strip()


def conditions() -> str:
    up = subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()
    return f"{time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime())} {up}"


def measure(args: argparse.Namespace, out: Path) -> None:
    raw = out / "raw"
    raw.mkdir(parents=True, exist_ok=True)
    parts = {
        "cpu": (cpu_runs, args.cpu_seconds),
        "acc": (acc_runs, args.acc_seconds),
        "max": (max_runs, args.max_seconds),
    }
    meta = {
        "start": conditions(),
        "kernel": os.uname().release,
        "cpus": os.cpu_count(),
        "iperf3": first_line(["iperf3", "--version"]),
        "probe": first_line([PROBE, "--version"]),
        "reps": args.reps,
        "seconds": {"cpu": args.cpu_seconds, "acc": args.acc_seconds, "max": args.max_seconds},
    }
    rows: list[dict[str, Any]] = []
    make_pair()
    try:
        for rep in range(1, args.reps + 1):
            for part in args.only:
                runs, secs = parts[part]
                rows += runs(raw, rep, secs)
                print(f"rep {rep} {part} done {conditions()}", flush=True)
    finally:
        cleanup()
    meta["end"] = conditions()
    (out / "conditions.json").write_text(json.dumps(meta, indent=1) + "\n")
    with (out / "runs.csv").open("w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=report_defaults.COLUMNS, extrasaction="ignore")
        w.writeheader()
        w.writerows(rows)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--only", default="cpu,acc,max", type=lambda s: s.split(","))
    ap.add_argument("--out", type=Path, default=HERE / "results-defaults")
    ap.add_argument("--cpu-seconds", type=float, default=10)
    ap.add_argument("--acc-seconds", type=float, default=5)
    ap.add_argument("--max-seconds", type=float, default=3)
    ap.add_argument("--redraw", action="store_true", help="only redraw from OUT/runs.csv")
    args = ap.parse_args()
    if bad := [p for p in args.only if p not in ("cpu", "acc", "max")]:
        ap.error(f"--only: unknown part {bad}; use cpu, acc, max")
    if not args.redraw:
        if os.geteuid() != 0:
            ap.error("needs root (network namespaces); --redraw does not")
        measure(args, args.out)
    report_defaults.write(args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
