"""The telemetry sampler's cost per reading over SSH, beside the local provider's fast path (root).

Two hosts: sshd in network namespaces (the SSH tests' harness). Per repeat, interleaved:
- local: the local sources (HostSource, NamespaceSource opened on each host's namespace, qdisc dump on
  the sender) read the same two namespaces directly: what the local provider does per reading;
- ssh: RemoteSource over kept-open SSH connections: one remote command per host per reading, both
  hosts in parallel, a pid per host and the sender's `tc -s -j qdisc show` (what a UDP flow needs).
For each: wall time per reading, this process's CPU per reading (all threads: the sampler, the SSH
event loop, the fan-out pool), and (ssh) the remote hosts' CPU per reading: the sshd session processes
of our connections and the commands they ran (utime + stime + cutime + cstime). % of a core at the
default 1 s interval = CPU per reading / 1 s.

    sudo .venv/bin/python benchmarks/telemetry/ssh_cost.py [--readings 40] [--repeats 5]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from tests.helpers.integration.sshnet import SshNet, skip_reason  # noqa: E402

from vnetbench.providers.ssh.connect import Pool  # noqa: E402
from vnetbench.providers.ssh.loop import LoopThread  # noqa: E402
from vnetbench.providers.ssh.telemetry import SshTelemetryReader  # noqa: E402
from vnetbench.spec.inventory import Inventory  # noqa: E402
from vnetbench.telemetry.procfs import NS_PER_TICK  # noqa: E402
from vnetbench.telemetry.remote import HostPlan, RemoteSource  # noqa: E402
from vnetbench.telemetry.sources import HostSource, NamespaceSource, ProcessSource  # noqa: E402

HERE = Path(__file__).parent


def session_cpu_ns(net: SshNet) -> int:
    """CPU of the sshd session processes (not the listeners) and of the commands they reaped."""
    total = 0
    for host in net.hosts:
        assert host.sshd is not None
        for pid in net._descendants(host.sshd.pid):
            try:
                with open(f"/proc/{pid}/stat") as f:
                    text = f.read()
            except OSError:
                continue
            fields = text[text.rindex(")") + 2 :].split()
            if fields[0] == "Z":
                continue
            total += sum(int(x) for x in fields[11:15]) * NS_PER_TICK
    return total


def measure(read: Any, readings: int, net: SshNet | None) -> dict[str, float]:
    read()  # warm: connections open, files open
    remote0 = session_cpu_ns(net) if net else 0
    cpu0, t0 = time.process_time_ns(), time.monotonic_ns()
    for _ in range(readings):
        read()
    wall, cpu = time.monotonic_ns() - t0, time.process_time_ns() - cpu0
    remote = (session_cpu_ns(net) - remote0) if net else 0
    return {
        "wall_ms": wall / readings / 1e6,
        "cpu_ms": cpu / readings / 1e6,
        "remote_cpu_ms": remote / readings / 1e6,
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--readings", type=int, default=40)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    reason = skip_reason()
    if reason:
        sys.exit(f"cannot run: {reason}")
    net = SshNet(Path(tempfile.mkdtemp(prefix="vnb-telbench-")), count=2, jump_hosts=0).start()
    loop = LoopThread()
    pool = Pool(Inventory.model_validate(net.inventory()))
    runs: list[dict[str, Any]] = []
    try:
        sender, receiver = net.hosts
        pids = {h.name: h.sshd.pid for h in net.hosts if h.sshd}  # any live pid: one /proc/PID/stat each
        plans = [
            HostPlan(SshTelemetryReader(loop, pool, sender.name), [pids[sender.name]], {"eth0"}, qdiscs=True),
            HostPlan(SshTelemetryReader(loop, pool, receiver.name), [pids[receiver.name]], {"eth0"}),
        ]
        remote = RemoteSource(plans)
        fds = {h.name: os.open(f"/run/netns/{h.ns}", os.O_RDONLY) for h in net.hosts}
        local = [
            HostSource(),
            ProcessSource({f"pid:{p}": p for p in pids.values()}),
            NamespaceSource(sender.name, fds[sender.name], {"eth0"}, qdiscs=True),
            NamespaceSource(receiver.name, fds[receiver.name], {"eth0"}, qdiscs=False),
        ]

        def read_local() -> None:
            out: dict[str, dict[str, int]] = {}
            for s in local:
                s.read(out)

        def read_ssh() -> None:
            remote.read({})

        for r in range(args.repeats):
            for case, fn, with_net in (("local", read_local, None), ("ssh", read_ssh, net)):
                row = {"case": case, "repeat": r, **measure(fn, args.readings, with_net)}
                runs.append(row)
                print(json.dumps(row), flush=True)
        remote.close()
        for s in local:
            if hasattr(s, "close"):
                s.close()
        for fd in fds.values():
            os.close(fd)
    finally:
        loop.run(pool.close(), 10)
        loop.stop()
        net.close()
    summary: dict[str, Any] = {}
    for case in ("local", "ssh"):
        rows = [r for r in runs if r["case"] == case]
        summary[case] = {
            k: {
                "median": statistics.median(r[k] for r in rows),
                "min": min(r[k] for r in rows),
                "max": max(r[k] for r in rows),
            }
            for k in ("wall_ms", "cpu_ms", "remote_cpu_ms")
        }
    (HERE / "raw").mkdir(exist_ok=True)  # every run: regenerated, not kept in git
    (HERE / "raw" / "ssh-results.json").write_text(
        json.dumps({"args": vars(args), "runs": runs, "summary": summary}, indent=1)
    )
    (HERE / "ssh-results.json").write_text(json.dumps({"args": vars(args), "summary": summary}, indent=1))
    print(json.dumps(summary, indent=1))


if __name__ == "__main__":
    main()
