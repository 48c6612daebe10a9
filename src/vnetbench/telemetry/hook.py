"""The runner's telemetry hook: sample around every step's flows, then store the series with them.

    session = telemetry.start(variant, layout, m, [(record, client, server), ...])  # before release
    ...tools run...
    telemetry.stop(session)                                     # after the tools ended
    store.save_measurements(records, after=telemetry.save)      # same transaction

Telemetry never fails a measurement: a source that cannot be read is noted (telemetry_runs.errors,
an event). The local provider's namespaces are read through their handles (sources.py); a remote
provider's hosts through its TelemetryReader, one round trip per host per reading (remote.py); a
provider with neither gets no telemetry.
"""

from __future__ import annotations

import contextlib
import logging
import os
import re
import signal
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sqlalchemy import insert
from sqlalchemy.engine import Connection

from vnetbench.layout import Layout
from vnetbench.providers.base import Provider, ProviderError, TelemetryReader, ToolProcess
from vnetbench.spec.models import Campaign, Telemetry
from vnetbench.store import schema as t
from vnetbench.store.db import Event, MeasurementRecord
from vnetbench.telemetry.ovsstats import DATAPATH, OvsSource, appctl_of
from vnetbench.telemetry.path import FlowPath, flow_path, fragments_per_datagram, mark_shared
from vnetbench.telemetry.remote import HostPlan, RemoteSource, pid_scope, remote_flow_path
from vnetbench.telemetry.sampler import Result, Sampler
from vnetbench.telemetry.sources import HostSource, NamespaceSource, ProcessSource

log = logging.getLogger("vnetbench.telemetry")
CAPTURE_READY_S = 2.0
HOST_SCOPES = ("cpu", "softnet")


@dataclass
class _Capture:
    node: str
    interface: str
    file: Path
    snaplen: int
    packets: int
    proc: ToolProcess | None = None


@dataclass
class _Flow:
    record: MeasurementRecord
    path: FlowPath
    fragments: int | None
    pids: dict[str, str]  # sampler scope (pid:N) -> stored scope (proc:client / proc:server)
    captures: list[_Capture] = field(default_factory=list)


@dataclass
class Session:
    sampler: Sampler
    closers: list[Any]
    flows: list[_Flow]
    captures: list[_Capture]
    result: Result | None = None


@dataclass
class _Pending:
    flow: _Flow
    result: Result


class TelemetryHook:
    def __init__(self, provider: Provider, store_location: str | None = None, campaign_id: str = "") -> None:
        self.provider = provider
        self.store_location = store_location
        self.campaign_id = campaign_id
        self._pending: dict[int, _Pending] = {}
        self._paths: dict[tuple[str, str, str], FlowPath] = {}  # remote flow paths, by (src, dst, peer)

    # ------------------------------------------------------------------ sampling

    def start(
        self,
        variant: Campaign,
        layout: Layout,
        m: Any,
        flows: Sequence[tuple[MeasurementRecord, ToolProcess | None, ToolProcess | None]],
    ) -> Session | None:
        config: Telemetry = variant.telemetry
        fd_of = getattr(self.provider, "namespace_fd", None)
        remote = fd_of is None and all(
            self.provider.telemetry_reader(n) for r, _, _ in flows for n in (r.src, r.dst)
        )
        if not config.enabled or not flows or (fd_of is None and not remote):
            return None
        try:
            if remote:
                return self._start_remote(config, layout, m, flows)
            return self._start(config, layout, m, flows, fd_of)
        except Exception as err:  # never fail the measurement
            from vnetbench.runner import Interrupted  # (imported here: the runner imports this module)

            if isinstance(err, Interrupted):  # Ctrl-C while starting: the runner's to handle
                raise
            log.warning("telemetry not started: %s", err)
            for rec, _, _ in flows:
                rec.events.append(
                    Event("telemetry_error", f"telemetry not started: {type(err).__name__}: {err}")
                )
            return None

    def _start(self, config: Telemetry, layout: Layout, m: Any, flows: Sequence[Any], fd_of: Any) -> Session:
        planned: list[_Flow] = []
        interfaces: dict[str, set[str]] = {}
        shaped: set[str] = set()
        pids: dict[str, int] = {}
        for rec, client, server in flows:
            path = flow_path(layout, rec.src, rec.dst)
            length = getattr(m, "length", None)
            frags = fragments_per_datagram(int(length), path.mtu) if m.kind == "udp" and length else None
            names: dict[str, str] = {}
            for role, proc in (("client", client), ("server", server)):
                if proc is not None:
                    pids[f"pid:{proc.pid}"] = proc.pid
                    names[f"pid:{proc.pid}"] = f"proc:{role}"
            planned.append(_Flow(rec, path, frags, names))
            for ns in path.namespaces:
                interfaces.setdefault(ns, set())
            for hop in path.hops:
                interfaces[hop.ns].add(hop.name)
                if hop.shaper:
                    shaped.add(hop.ns)
        mark_shared([f.path for f in planned])
        closers: list[Any] = []
        sources: list[Any] = [HostSource(), ProcessSource(pids)]
        closers.append(sources[0])
        try:
            for ns, names in interfaces.items():
                fd = fd_of(ns)
                if fd is None:
                    continue
                src = NamespaceSource(ns, fd, names, qdiscs=ns in shaped)
                closers.append(src)
                sources.append(src)
            sources += _ovs_sources(self.provider, [f.path for f in planned])
            captures = self._captures_or_event(config, layout, planned) if config.capture else []
        except BaseException:
            for c in closers:
                c.close()
            raise
        sampler = Sampler(sources, config.interval)
        _start_or_close(sampler, closers)
        return Session(sampler, closers, planned, captures)

    def _start_remote(self, config: Telemetry, layout: Layout, m: Any, flows: Sequence[Any]) -> Session:
        """Hosts reached by the provider (SSH): one reading per host per interval (telemetry/remote.py)."""
        planned: list[_Flow] = []
        plans: dict[str, HostPlan] = {}

        def plan_for(node: str) -> HostPlan:
            reader = self.provider.telemetry_reader(node)
            assert reader is not None
            return plans.setdefault(reader.host, HostPlan(reader))

        for rec, client, server in flows:
            sender, receiver = plan_for(rec.src), plan_for(rec.dst)
            down = [p.reader.host for p in (sender, receiver) if not p.reader.reachable()]
            if down:  # not read at all: every reading would wait for the connection to time out
                text = f"host {', '.join(dict.fromkeys(down))} unreachable: no telemetry from it"
                rec.events.append(Event("telemetry_error", text))
                path = FlowPath(rec.src, rec.dst, sender.reader.host, receiver.reader.host, 1500)
            else:
                path = self._remote_path(layout, rec, sender.reader, receiver.reader)
            length = getattr(m, "length", None)
            frags = fragments_per_datagram(int(length), path.mtu) if m.kind == "udp" and length else None
            names: dict[str, str] = {}
            for role, proc, plan in (("client", client, sender), ("server", server, receiver)):
                if proc is not None:
                    plan.pids.append(int(proc.pid))
                    names[pid_scope(int(proc.pid), plan.reader.host)] = f"proc:{role}"
            for hop in path.hops:
                plans[hop.ns].interfaces.add(hop.name)
                plans[hop.ns].qdiscs |= hop.direction == "tx"
            planned.append(_Flow(rec, path, frags, names))
        mark_shared([f.path for f in planned])
        source = RemoteSource([p for p in plans.values() if p.reader.reachable()])
        sampler = Sampler([source], config.interval)
        _start_or_close(sampler, [source])
        return Session(sampler, [source], planned, [])

    def _remote_path(
        self, layout: Layout, rec: MeasurementRecord, sender: TelemetryReader, receiver: TelemetryReader
    ) -> FlowPath:
        """The flow's path from the hosts' routing (kept for the campaign); an empty one if unknown."""
        peer = self.provider.address_of(layout, rec.dst, rec.src)
        key = (rec.src, rec.dst, peer)
        if key not in self._paths:
            try:
                self._paths[key] = remote_flow_path(rec.src, rec.dst, sender, receiver, peer)
            except (ValueError, KeyError, ProviderError) as err:
                rec.events.append(Event("telemetry_error", f"flow path unknown: {err}"))
                return FlowPath(rec.src, rec.dst, sender.host, receiver.host, 1500)
        path = self._paths[key]
        return FlowPath.from_json(path.to_json())  # a copy: mark_shared sets its own `shared`

    def stop(self, session: Session | None) -> None:
        if session is None:
            return
        try:
            session.result = session.sampler.stop()
        finally:
            for c in session.closers:
                c.close()
            self._stop_captures(session.captures)
        for flow in session.flows:
            self._pending[id(flow.record)] = _Pending(flow, session.result)
            for err in session.result.errors:
                flow.record.events.append(Event("telemetry_error", err))

    # ------------------------------------------------------------------ capture

    def _capture_dir(self) -> Path:
        loc = self.store_location
        base = Path(loc).expanduser().resolve().parent if loc and "://" not in loc else Path.cwd()
        return base / "captures" / (self.campaign_id or "campaign")

    def _captures_or_event(self, config: Telemetry, layout: Layout, flows: list[_Flow]) -> list[_Capture]:
        """Start the captures; one that cannot start (no tcpdump, unknown node) is an event, not an error."""
        assert config.capture is not None
        problems = [
            f"capture: no node '{item.partition(':')[0]}' in the topology (telemetry.capture.interfaces)"
            for item in config.capture.interfaces
            if item.partition(":")[0] not in layout.node_ns
        ]
        captures: list[_Capture] = []
        try:
            captures = self._start_captures(config, flows)
        except Exception as err:
            problems.append(f"capture not started: {err}")
        for flow in flows:
            flow.record.events.extend(Event("telemetry_error", p) for p in problems)
        return captures

    def _start_captures(self, config: Telemetry, flows: list[_Flow]) -> list[_Capture]:
        assert config.capture is not None
        layout_ifs: dict[str, list[str]] = {}
        for flow in flows:
            for node, ns in ((flow.record.src, flow.path.src_ns), (flow.record.dst, flow.path.dst_ns)):
                layout_ifs.setdefault(node, [h.name for h in flow.path.hops if h.ns == ns])
        wanted: list[tuple[str, str]] = []
        for item in config.capture.interfaces:
            node, _, ifname = item.partition(":")
            for name in layout_ifs.get(node, []):
                if (not ifname or ifname == name) and (node, name) not in wanted:
                    wanted.append((node, name))
        directory = self._capture_dir()
        directory.mkdir(parents=True, exist_ok=True)
        step = re.sub(r"[^A-Za-z0-9_.-]+", "_", flows[0].record.step_key)[:80]
        out: list[_Capture] = []
        for node, ifname in wanted:
            cap = _Capture(
                node,
                ifname,
                directory / f"{step}-a{flows[0].record.attempt}-{node}-{ifname}.pcap",
                int(config.capture.snaplen),
                config.capture.packets,
            )
            argv = ["tcpdump", "-i", ifname, "-s", str(cap.snaplen), "-c", str(cap.packets)]
            argv += ["-w", str(cap.file), "-U", "-n", "-Z", "root"]
            try:
                cap.proc = self.provider.spawn(node, argv)
            except BaseException:
                self._stop_captures(out)
                raise
            out.append(cap)
            for flow in flows:
                if node in (flow.record.src, flow.record.dst):
                    flow.captures.append(cap)
        deadline = time.monotonic() + CAPTURE_READY_S
        while any(not c.file.exists() for c in out) and time.monotonic() < deadline:
            time.sleep(0.01)
        time.sleep(0.05 if out else 0)  # tcpdump opens the file just before it starts capturing
        return out

    @staticmethod
    def _stop_captures(captures: list[_Capture]) -> None:
        for cap in captures:
            if cap.proc is None:
                continue
            if cap.proc.poll() is None:
                with contextlib.suppress(OSError):
                    os.kill(cap.proc.pid, signal.SIGTERM)  # tcpdump flushes and exits
            cap.proc.wait(2.0)
            cap.proc.kill()

    # ------------------------------------------------------------------ storing

    def save(self, conn: Connection, records: Sequence[MeasurementRecord], ids: Sequence[int]) -> None:
        """Write the telemetry of records (in the transaction that stores them)."""
        for rec, mid in zip(records, ids, strict=True):
            pending = self._pending.pop(id(rec), None)
            if pending is None:
                continue
            flow, result = pending.flow, pending.result
            conn.execute(
                insert(t.telemetry_runs).values(
                    measurement_id=mid,
                    started_utc_ns=result.started_utc_ns,
                    interval_ns=result.interval_ns,
                    duration_ns=result.duration_ns,
                    readings=result.readings,
                    sampler_cpu_ns=result.sampler_cpu_ns,
                    path=flow.path.to_json(),
                    fragments_per_datagram=flow.fragments,
                    errors=result.errors,
                )
            )
            rows = _rows_for(flow, result)
            if rows:
                conn.execute(insert(t.telemetry), [{"measurement_id": mid, **r} for r in rows])
            for cap in flow.captures:
                conn.execute(
                    insert(t.captures).values(
                        measurement_id=mid,
                        node=cap.node,
                        interface=cap.interface,
                        file=str(cap.file),
                        snaplen_bytes=cap.snaplen,
                        packet_cap=cap.packets,
                        size_bytes=cap.file.stat().st_size if cap.file.exists() else None,
                    )
                )

    def discard(self, records: Sequence[MeasurementRecord]) -> None:
        for rec in records:
            self._pending.pop(id(rec), None)


def _start_or_close(sampler: Sampler, closers: list[Any]) -> None:
    """Start sampling; if that is interrupted (Ctrl-C during the baseline reading), stop the sampler's
    thread before closing what it reads."""
    try:
        sampler.start()
    except BaseException:
        sampler.stop()
        for c in closers:
            c.close()
        raise


def _rows_for(flow: _Flow, result: Result) -> list[dict[str, Any]]:
    """The rows of a step's readings that concern this flow: its path, its namespaces, its processes."""
    keep = {f"snmp:{ns}" for ns in flow.path.namespaces}
    ifaces = {f"{h.ns}/{h.name}" for h in flow.path.hops}
    out = []
    for row in result.rows:
        scope = row.scope
        if scope in flow.pids:
            scope = flow.pids[scope]
        elif scope.startswith("pid:"):
            continue
        elif scope.startswith("if:"):
            if scope[3:] not in ifaces:
                continue
        elif scope.startswith("qdisc:"):
            if scope[6:].rsplit("/", 1)[0] not in ifaces:
                continue
        elif scope.startswith("ovs:"):  # OVS's port counters, and its datapath's (NS/datapath)
            ns, name = scope[4:].rsplit("/", 1)
            if scope[4:] not in ifaces and not (name == DATAPATH and ns in flow.path.namespaces):
                continue
        elif scope.startswith("snmp:"):
            if scope not in keep:
                continue
        elif not scope.startswith(HOST_SCOPES):
            continue
        elif "@" in scope and scope.split("@", 1)[1] not in flow.path.namespaces:
            continue  # another remote host's CPU (cpu@HOST)
        out.append({"t_ns": row.t_ns, "scope": scope, "metric": row.metric, "value": row.value})
    return out


def _ovs_sources(provider: Provider, paths: list[FlowPath]) -> list[OvsSource]:
    """One reader per OVS instance whose bridge a flow crosses, of the ports it crosses there."""
    instance_of = getattr(provider, "ovs_instance", None)
    if instance_of is None:
        return []
    ports: dict[str, set[str]] = {}
    for path in paths:
        for fwd in (h for h in path.hops if h.direction == "fwd" and h.kind == "ovs"):
            names = {h.name for h in path.hops if h.ns == fwd.ns and h.master == fwd.name}
            ports.setdefault(fwd.ns, set()).update(names)
    out = []
    for ns, names in ports.items():
        instance = instance_of(ns)
        if instance is not None:
            ctl = f"{instance.rundir}/ovs-vswitchd.ctl"
            out.append(OvsSource(ns, appctl_of(ctl, instance.env()), names))
    return out
