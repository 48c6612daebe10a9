"""vnb-probe runs between two nodes of a topology the local provider built: an echo server and its
`rtt` client, a `recv` and its `send`. Shared by the delay-node tests and benchmarks/delay/run.py.
Each server is killed (or ends) before the function returns; a failure raises with the tool's stderr."""

from __future__ import annotations

import json
from typing import Any

from vnetbench.providers.local import LocalProvider, delaynode


def probe_binary() -> str:
    return str(delaynode.binary() or "vnb-probe")


def _finished(proc: Any, what: str, timeout: float) -> str:
    done = proc.wait(timeout)
    if done.returncode != 0:
        raise RuntimeError(f"vnb-probe {what} failed (exit {done.returncode}): {done.stderr[-400:]}")
    return done.stdout


def _listening(provider: LocalProvider, proc: Any, node: str, ip: str, port: int) -> None:
    if not provider.wait_listening(proc, port, "udp", 5):
        raise RuntimeError(f"vnb-probe on {node} did not bind {ip}:{port} within 5 s")


def rtt_records(
    provider: LocalProvider, src: str, dst: str, ip: str, port: int, count: int, interval: str
) -> list[dict[str, Any]]:
    """`count` probes every `interval` seconds from `src` to an echo on `dst` at ip:port: the rtt
    client's per-probe records (rtt_ns, owd_up_ns, … ; None where lost)."""
    probe = probe_binary()
    echo = provider.spawn(dst, [probe, "echo", "--bind", f"{ip}:{port}", "--duration", "60", "--json"])
    try:
        _listening(provider, echo, dst, ip, port)
        argv = [
            probe,
            "rtt",
            "--dst",
            f"{ip}:{port}",
            "--count",
            str(count),
            "--interval",
            interval,
            "--json",
        ]
        out = _finished(provider.spawn(src, argv), "rtt", 60)
    finally:
        echo.kill()
    return json.loads(out)["records"]


def loss_run(
    provider: LocalProvider, src: str, dst: str, ip: str, port: int, pps: int, duration: str, catch_up: int
) -> dict[str, Any]:
    """A constant-rate `send` from `src` to a `recv` on `dst` at ip:port: the receiver's report
    (FINs may be lost too: the sender sends five, so one arrives)."""
    probe = probe_binary()
    recv = provider.spawn(
        dst, [probe, "recv", "--bind", f"{ip}:{port}", "--expect-streams", "1", "--duration", "40", "--json"]
    )
    try:
        _listening(provider, recv, dst, ip, port)
        argv = [probe, "send", "--dst", f"{ip}:{port}", "--pps", str(pps), "--duration", duration]
        _finished(provider.spawn(src, [*argv, "--catch-up", str(catch_up), "--json"]), "send", 30)
        return json.loads(_finished(recv, "recv", 45))
    finally:
        recv.kill()
