"""Telemetry on hosts the provider reaches remotely (SSH): their counters and the flow's path.

RemoteSource reads every host of a step once per reading, in parallel (one round trip each, via the
provider's TelemetryReader), and parses the raw text with procfs.py into the same counters the
local sources give. Scopes carry the host (the "namespace" of a remote path): snmp:HOST,
if:HOST/IF, qdisc:HOST/IF/KIND:MAJOR, cpu@HOST, cpuN@HOST, softnet@HOST, pid:N@HOST.

remote_flow_path: the path of a flow between two hosts from their own routing: the sender's
egress interface (`ip -j route get PEER`) and the receiver's interface holding the address the
sender sends to. The hops in between (switches, the cloud's fabric) are not visible from the hosts.
"""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from vnetbench.layout.flowpath import FlowPath, Hop
from vnetbench.providers.base import TelemetryReader
from vnetbench.telemetry import procfs
from vnetbench.telemetry.sources import Counters

MAX_PARALLEL = 8


def pid_scope(pid: int, host: str) -> str:
    """The telemetry scope of a process on a remote host: pid:N@HOST."""
    return f"pid:{pid}@{host}"


@dataclass
class HostPlan:
    reader: TelemetryReader
    pids: list[int] = field(default_factory=list)
    interfaces: set[str] = field(default_factory=set)
    qdiscs: bool = False


class RemoteSource:
    """Counters of every remote host of a step; notes (no tc on a host) go to the sampler's errors."""

    def __init__(self, plans: Sequence[HostPlan]) -> None:
        self.plans = list(plans)
        self.notes: list[str] = []
        self.last: Counters = {}  # a process that has gone keeps its last reading
        self._pool = ThreadPoolExecutor(min(MAX_PARALLEL, max(1, len(self.plans))), "vnb-telemetry-ssh")

    def read(self, out: Counters) -> None:
        results = list(self._pool.map(self._read_one, self.plans))
        errors = [str(r) for r in results if isinstance(r, BaseException)]
        for plan, raw in zip(self.plans, results, strict=True):
            if isinstance(raw, dict):
                self._parse(plan, raw, out)
        if errors:
            raise RuntimeError("; ".join(errors))

    @staticmethod
    def _read_one(plan: HostPlan) -> dict[str, str] | BaseException:
        if not plan.reader.reachable():  # went down during the measurement: do not wait on it
            return RuntimeError(f"host {plan.reader.host} unreachable")
        try:
            return plan.reader.read(plan.pids, plan.qdiscs)
        except Exception as err:  # one host's failure must not lose the others' reading
            return err

    def _parse(self, plan: HostPlan, raw: dict[str, str], out: Counters) -> None:
        host = plan.reader.host
        for name, times in procfs.cpu_times(raw.get("stat", "")).items():
            out[f"{name}@{host}"] = times
        out[f"softnet@{host}"] = procfs.softnet(raw.get("softnet", ""))
        snmp = procfs.snmp(raw.get("snmp", ""))
        snmp.update(procfs.snmp(raw.get("netstat", "")))
        out[f"snmp:{host}"] = snmp
        for ifname, counters in procfs.netdev(raw.get("dev", "")).items():
            if ifname in plan.interfaces:
                out[f"if:{host}/{ifname}"] = counters
        now = time.monotonic_ns()
        for pid in plan.pids:
            scope, text = pid_scope(pid, host), raw.get(f"pid:{pid}")
            if text:
                self.last[scope] = {**procfs.process_cpu(text), "wall_ns": now}
            if scope in self.last:
                out[scope] = self.last[scope]
        if "tc" in raw:
            try:
                qdiscs = procfs.tc_qdiscs(raw["tc"])
            except ValueError:  # an iproute2 without JSON output (-j)
                qdiscs = {}
                self._note(f"host {host}: `tc -s -j qdisc show` gave no JSON, so no qdisc statistics")
            for (dev, qdisc), stats in qdiscs.items():
                if dev in plan.interfaces:
                    out[f"qdisc:{host}/{dev}/{qdisc}"] = stats
        elif plan.qdiscs and "notc" in raw:
            self._note(f"host {host}: no tc, so no qdisc statistics (install iproute2)")

    def _note(self, note: str) -> None:
        if note not in self.notes:
            self.notes.append(note)

    def close(self) -> None:
        self._pool.shutdown(wait=True)


def _interface_with(addr_json: str, address: str) -> dict[str, Any] | None:
    for link in json.loads(addr_json or "[]"):
        if any(a.get("local") == address for a in link.get("addr_info", [])):
            return link
    return None


def _mtu(addr_json: str, ifname: str) -> int | None:
    for link in json.loads(addr_json or "[]"):
        if link.get("ifname") == ifname:
            return int(link["mtu"]) if "mtu" in link else None
    return None


def remote_flow_path(
    src: str, dst: str, sender: TelemetryReader, receiver: TelemetryReader, peer: str
) -> FlowPath:
    """The path of a flow from node src to node dst, which reaches dst at address `peer`.

    Raises ValueError when the hosts' routing does not give it (no route, address on no interface).
    """
    route_json, sender_addrs = sender.route(peer)
    routes = json.loads(route_json or "[]")
    if not routes or "dev" not in routes[0]:
        raise ValueError(f"host {sender.host} has no route to {peer}")
    egress = str(routes[0]["dev"])
    if sender.host == receiver.host:
        raise ValueError(f"{src} and {dst} are on the same host {sender.host}: no interface between them")
    _, receiver_addrs = receiver.route(peer)
    ingress_link = _interface_with(receiver_addrs, peer)
    if ingress_link is None:
        raise ValueError(f"no interface of host {receiver.host} holds {peer}")
    ingress = str(ingress_link["ifname"])
    mtus = [m for m in (_mtu(sender_addrs, egress), ingress_link.get("mtu")) if m]
    path = FlowPath(src, dst, sender.host, receiver.host, int(min(mtus)) if mtus else 1500)
    path.hops = [
        Hop(sender.host, egress, "tx", "interface", f"node:{src}"),
        Hop(receiver.host, ingress, "rx", "interface", f"node:{dst}"),
    ]
    return path
