"""Telemetry over SSH: a host's raw counters in one command per reading, over the kept-open connection.

The command is the fixed script remote.TELEMETRY; pids reach it as integers, the peer address of
a route lookup as a validated IP address (remote.route_command). Parsing is the telemetry
package's (telemetry/procfs.py): this module only carries text.
"""

from __future__ import annotations

from collections.abc import Sequence

from vnetbench.providers.base import ProviderError, TelemetryReader
from vnetbench.providers.ssh import remote
from vnetbench.providers.ssh.connect import Pool
from vnetbench.providers.ssh.loop import LoopThread

READ_TIMEOUT_S = 10.0
SEPARATOR = "@@vnb "


FILES = {
    "/proc/stat": "stat",
    "/proc/net/softnet_stat": "softnet",
    "/proc/net/snmp": "snmp",
    "/proc/net/netstat": "netstat",
    "/proc/net/dev": "dev",
}


def _part_of(path: str) -> str | None:
    if path in FILES:
        return FILES[path]
    pid = path.removeprefix("/proc/").removesuffix("/stat")
    return f"pid:{pid}" if pid.isdigit() else None


def split_parts(text: str) -> dict[str, str]:
    """The TELEMETRY script's output -> {part: text}: "PATH:line" lines by file (stat, snmp ...,
    pid:N), then "@@vnb NAME" lines each followed by their part's text."""
    parts: dict[str, list[str]] = {}
    current: list[str] | None = None
    for line in text.splitlines(keepends=True):
        if line.startswith(SEPARATOR):
            current = parts.setdefault(line[len(SEPARATOR) :].strip(), [])
        elif current is not None:
            current.append(line)
        else:
            path, sep, rest = line.partition(":")
            name = _part_of(path) if sep else None
            if name is not None:
                parts.setdefault(name, []).append(rest)
    return {name: "".join(lines) for name, lines in parts.items()}


class SshTelemetryReader(TelemetryReader):
    def __init__(self, loop: LoopThread, pool: Pool, host: str) -> None:
        self.loop, self.pool, self.host = loop, pool, host

    def _run(self, command: str) -> str:
        done = self.loop.run(self.pool.run(self.host, command, READ_TIMEOUT_S), READ_TIMEOUT_S + 5)
        if done.exit_status != 0:
            raise ProviderError(
                f"host {self.host}: {str(done.stderr).strip()[-200:] or 'telemetry read failed'}"
            )
        return str(done.stdout)

    def reachable(self) -> bool:
        return self.pool.state.get(self.host) is not False

    def read(self, pids: Sequence[int], qdiscs: bool) -> dict[str, str]:
        return split_parts(self._run(remote.telemetry_command([int(p) for p in pids], qdiscs)))

    def route(self, peer: str) -> tuple[str, str]:
        route, _, addr = self._run(remote.route_command(peer)).partition(f"{SEPARATOR}addr\n")
        return route.strip(), addr.strip()
