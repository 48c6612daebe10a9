"""What the sampler reads, opened once per measurement and re-read every interval.

A namespace's /proc/net files are opened by a short-lived thread that has entered the namespace
(setns on the provider's namespace fd): a /proc/thread-self/net file stays bound to the namespace it
was opened in, so later reads from any thread see that namespace's counters. Qdisc statistics come
from a netlink socket created inside the namespace the same way (nldump.py). Everything opened here is
closed by close(): an open /proc/net file keeps its namespace alive.
"""

from __future__ import annotations

import contextlib
import os
import socket
import time
from typing import Any

from vnetbench.providers.local import kernel
from vnetbench.telemetry import nldump, procfs

Counters = dict[str, dict[str, int]]  # scope -> metric -> value
NET_FILES = ("snmp", "netstat", "dev")


def _read(fd: int) -> str:
    chunks, offset = [], 0
    while True:
        chunk = os.pread(fd, 1 << 16, offset)
        if not chunk:
            return b"".join(chunks).decode("ascii", "replace")
        chunks.append(chunk)
        offset += len(chunk)


class NamespaceSource:
    """SNMP counters, interface counters and (optionally) qdisc stats of one namespace."""

    def __init__(self, name: str, ns_fd: int, interfaces: set[str], qdiscs: bool) -> None:
        self.name = name
        self.interfaces = interfaces
        self.fds: dict[str, int] = {}
        self.nl: socket.socket | None = None

        def open_inside() -> tuple[dict[str, int], Any]:
            fds: dict[str, int] = {}
            nl = None
            try:
                for f in NET_FILES:
                    fds[f] = os.open(f"/proc/thread-self/net/{f}", os.O_RDONLY | os.O_CLOEXEC)
                # the netlink socket must be created here, in the namespace (see nldump.py)
                nl = (
                    socket.socket(socket.AF_NETLINK, socket.SOCK_DGRAM, socket.NETLINK_ROUTE)
                    if qdiscs
                    else None
                )
                return fds, nl
            except BaseException:
                for fd in fds.values():
                    os.close(fd)
                if nl is not None:
                    nl.close()
                raise

        self.fds, self.nl = kernel.in_netns(ns_fd, open_inside)
        self.ifnames: dict[int, str] = {}

    def read(self, out: Counters) -> None:
        snmp = procfs.snmp(_read(self.fds["snmp"]))
        snmp.update(procfs.snmp(_read(self.fds["netstat"])))
        out[f"snmp:{self.name}"] = snmp
        for ifname, counters in procfs.netdev(_read(self.fds["dev"])).items():
            if ifname in self.interfaces:
                out[f"if:{self.name}/{ifname}"] = counters
        if self.nl is not None:
            if not self.ifnames:
                self.ifnames = nldump.links(self.nl)
            for msg in nldump.qdiscs(self.nl):
                ifname = self.ifnames.get(msg["index"])
                if ifname in self.interfaces:
                    stats = qdisc_stats(msg)
                    if stats is not None:
                        out[
                            f"qdisc:{self.name}/{ifname}/{msg.get_attr('TCA_KIND')}:{msg['handle'] >> 16:x}"
                        ] = stats

    def close(self) -> None:
        for fd in self.fds.values():
            with contextlib.suppress(OSError):
                os.close(fd)
        self.fds = {}
        if self.nl is not None:
            with contextlib.suppress(OSError):
                self.nl.close()
            self.nl = None


def qdisc_stats(msg: Any) -> dict[str, int] | None:
    """Packets, bytes, drops, overlimits, requeues (counters) and backlog, qlen (gauges) of a qdisc."""
    if msg.get_attr("TCA_KIND") in ("noqueue", None):
        return None
    stats = msg.get_attr("TCA_STATS2")
    out: dict[str, int] = {}
    if stats is not None:
        basic = stats.get_attr("TCA_STATS_BASIC") or {}
        queue = stats.get_attr("TCA_STATS_QUEUE") or {}
        out = {
            "packets": int(basic.get("packets", 0)),
            "bytes": int(basic.get("bytes", 0)),
            "drops": int(queue.get("drops", 0)),
            "overlimits": int(queue.get("overlimits", 0)),
            "requeues": int(queue.get("requeues", 0)),
            "backlog_bytes": int(queue.get("backlog", 0)),
            "qlen_packets": int(queue.get("qlen", 0)),
        }
    else:
        old = msg.get_attr("TCA_STATS") or {}
        out = {
            "packets": int(old.get("packets", 0)),
            "bytes": int(old.get("bytes", 0)),
            "drops": int(old.get("drops", 0)),
            "overlimits": int(old.get("overlimits", 0)),
            "backlog_bytes": int(old.get("backlog", 0)),
            "qlen_packets": int(old.get("qlen", 0)),
        }
    return out


class HostSource:
    """Host-wide: CPU time per core and in total (/proc/stat), softnet backlog drops."""

    def __init__(self) -> None:
        self.stat = os.open("/proc/stat", os.O_RDONLY | os.O_CLOEXEC)
        self.softnet = os.open("/proc/net/softnet_stat", os.O_RDONLY | os.O_CLOEXEC)

    def read(self, out: Counters) -> None:
        for name, times in procfs.cpu_times(_read(self.stat)).items():
            out[name] = times
        out["softnet"] = procfs.softnet(_read(self.softnet))

    def close(self) -> None:
        for fd in (self.stat, self.softnet):
            with contextlib.suppress(OSError):
                os.close(fd)


class ProcessSource:
    """CPU time of tool processes (by pid); a process that has gone keeps its last reading."""

    def __init__(self, pids: dict[str, int]) -> None:
        self.pids = pids  # scope -> pid
        self.last: Counters = {}

    def read(self, out: Counters) -> None:
        for scope, pid in self.pids.items():
            try:
                with open(f"/proc/{pid}/stat") as f:
                    # wall_ns: time covered by readings of a live process (the CPU ratio's denominator)
                    self.last[scope] = {**procfs.process_cpu(f.read()), "wall_ns": time.monotonic_ns()}
            except (OSError, ValueError, IndexError):
                pass
            if scope in self.last:
                out[scope] = self.last[scope]
