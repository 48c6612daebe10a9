"""Telemetry as an observer of the runner: sample around every step's flows, attach the series to them.

    on_step_start(running)          # clients spawned behind the barrier: baseline reading, captures
    ...tools run...
    on_step_end(running, records)   # final reading; each flow's rows go to record.telemetry

The store writes `record.telemetry` in the transaction that stores the record. Telemetry never
fails a measurement: a source that cannot be read is noted (telemetry_runs.errors, an event). The
local provider's namespaces are read through their handles (sources.py, `Provider.namespace_access`);
a remote provider's hosts through its TelemetryReader, one round trip per host per reading
(remote.py); a provider with neither gets no telemetry.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from vnetbench.kinds import kind_of
from vnetbench.kinds.overhead import fragments_per_datagram
from vnetbench.layout import Layout
from vnetbench.layout.flowpath import FlowPath, flow_path, mark_shared
from vnetbench.observers import FlowProcesses, Interrupted, Observer, RunningStep
from vnetbench.providers.base import NamespaceAccess, Provider, ProviderError, TelemetryReader
from vnetbench.spec.models import Telemetry
from vnetbench.store.records import Event, MeasurementRecord, TelemetryRun
from vnetbench.telemetry import capture
from vnetbench.telemetry.capture import Capture
from vnetbench.telemetry.ovsstats import DATAPATH, OvsSource, appctl_of
from vnetbench.telemetry.remote import HostPlan, RemoteSource, pid_scope, remote_flow_path
from vnetbench.telemetry.sampler import Result, Sampler
from vnetbench.telemetry.sources import HostSource, NamespaceSource, ProcessSource

log = logging.getLogger("vnetbench.telemetry")
HOST_SCOPES = ("cpu", "softnet")


@dataclass
class _Flow:
    record: MeasurementRecord
    path: FlowPath
    fragments: int | None
    pids: dict[str, str]  # sampler scope (pid:N) -> stored scope (proc:client / proc:server)
    captures: list[Capture] = field(default_factory=list)


@dataclass
class Session:
    sampler: Sampler
    closers: list[Any]
    flows: list[_Flow]
    captures: list[Capture]


class TelemetryObserver(Observer):
    """Samples every step's flows when the spec's `telemetry` is enabled."""

    def __init__(self, provider: Provider, store_location: str | None = None, campaign_id: str = "") -> None:
        self.provider = provider
        self.store_location = store_location
        self.campaign_id = campaign_id
        self._session: Session | None = None
        self._paths: dict[tuple[str, str, str], FlowPath] = {}  # remote flow paths, by (src, dst, peer)

    # ------------------------------------------------------------------ sampling

    def on_step_start(self, running: RunningStep) -> None:
        self._session = None
        config: Telemetry = running.variant.telemetry
        flows = running.flows
        access = self.provider.namespace_access()
        remote = access is None and all(
            self.provider.telemetry_reader(n) for f in flows for n in (f.record.src, f.record.dst)
        )
        if not config.enabled or not flows or (access is None and not remote):
            return
        datagram = kind_of(running.measurement.kind).datagram_bytes(running.measurement)
        try:
            if access is None:
                self._session = self._start_remote(config, running.layout, datagram, flows)
            else:
                self._session = self._start(config, running.layout, datagram, flows, access)
        except Interrupted:  # Ctrl-C while starting: the runner's to handle
            raise
        except Exception as err:  # never fail the measurement
            log.warning("telemetry not started: %s", err)
            for f in flows:
                f.record.events.append(
                    Event("telemetry_error", f"telemetry not started: {type(err).__name__}: {err}")
                )

    def _start(
        self,
        config: Telemetry,
        layout: Layout,
        datagram: int | None,
        flows: Sequence[FlowProcesses],
        access: NamespaceAccess,
    ) -> Session:
        planned: list[_Flow] = []
        interfaces: dict[str, set[str]] = {}
        shaped: set[str] = set()
        pids: dict[str, int] = {}
        # the provider's own layout has what it spliced in (delay nodes), so their hops are counted too
        built = getattr(self.provider, "layout", None)
        walked = built if isinstance(built, Layout) and built.campaign_id == layout.campaign_id else layout
        for f in flows:
            path = flow_path(walked, f.record.src, f.record.dst)
            frags = fragments_per_datagram(datagram, path.mtu) if datagram else None
            names: dict[str, str] = {}
            for role, proc in (("client", f.client), ("server", f.server)):
                if proc is not None:
                    pids[f"pid:{proc.pid}"] = proc.pid
                    names[f"pid:{proc.pid}"] = f"proc:{role}"
            planned.append(_Flow(f.record, path, frags, names))
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
                fd = access.namespace_fd(ns)
                if fd is None:
                    continue
                src = NamespaceSource(ns, fd, names, qdiscs=ns in shaped)
                closers.append(src)
                sources.append(src)
            sources += _ovs_sources(access, [f.path for f in planned])
            captures = self._captures(config, layout, planned) if config.capture else []
        except BaseException:
            for c in closers:
                c.close()
            raise
        sampler = Sampler(sources, config.interval)
        _start_or_close(sampler, closers)
        return Session(sampler, closers, planned, captures)

    def _captures(self, config: Telemetry, layout: Layout, flows: list[_Flow]) -> list[Capture]:
        directory = capture.capture_dir(self.store_location, self.campaign_id)
        return capture.start_or_note(self.provider, directory, config, layout, list(flows))

    def _start_remote(
        self, config: Telemetry, layout: Layout, datagram: int | None, flows: Sequence[FlowProcesses]
    ) -> Session:
        """Hosts reached by the provider (SSH): one reading per host per interval (telemetry/remote.py)."""
        planned: list[_Flow] = []
        plans: dict[str, HostPlan] = {}

        def plan_for(node: str) -> HostPlan:
            reader = self.provider.telemetry_reader(node)
            assert reader is not None
            return plans.setdefault(reader.host, HostPlan(reader))

        for f in flows:
            rec = f.record
            sender, receiver = plan_for(rec.src), plan_for(rec.dst)
            down = [p.reader.host for p in (sender, receiver) if not p.reader.reachable()]
            if down:  # not read at all: every reading would wait for the connection to time out
                text = f"host {', '.join(dict.fromkeys(down))} unreachable: no telemetry from it"
                rec.events.append(Event("telemetry_error", text))
                path = FlowPath(rec.src, rec.dst, sender.reader.host, receiver.reader.host, 1500)
            else:
                path = self._remote_path(layout, rec, sender.reader, receiver.reader)
            frags = fragments_per_datagram(datagram, path.mtu) if datagram else None
            names: dict[str, str] = {}
            for role, proc, plan in (("client", f.client, sender), ("server", f.server, receiver)):
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

    def on_step_end(self, running: RunningStep, records: Sequence[MeasurementRecord]) -> None:
        """Take the final reading, stop captures, and attach each flow's series to its record."""
        session, self._session = self._session, None
        if session is None:
            return
        try:
            result = session.sampler.stop()
        finally:
            for c in session.closers:
                c.close()
            capture.stop(session.captures)
        for flow in session.flows:
            for err in result.errors:
                flow.record.events.append(Event("telemetry_error", err))
            flow.record.telemetry = TelemetryRun(
                started_utc_ns=result.started_utc_ns,
                interval_ns=result.interval_ns,
                duration_ns=result.duration_ns,
                readings=result.readings,
                sampler_cpu_ns=result.sampler_cpu_ns,
                path=flow.path.to_json(),
                fragments_per_datagram=flow.fragments,
                errors=result.errors,
                rows=_rows_for(flow, result),
                captures=[cap.stored() for cap in flow.captures],
            )


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


def _ovs_sources(access: NamespaceAccess | None, paths: list[FlowPath]) -> list[OvsSource]:
    """One reader per OVS instance whose bridge a flow crosses, of the ports it crosses there."""
    if access is None:
        return []
    ports: dict[str, set[str]] = {}
    for path in paths:
        for fwd in (h for h in path.hops if h.direction == "fwd" and h.kind == "ovs"):
            names = {h.name for h in path.hops if h.ns == fwd.ns and h.master == fwd.name}
            ports.setdefault(fwd.ns, set()).update(names)
    out = []
    for ns, names in ports.items():
        instance = access.ovs_instance(ns)
        if instance is not None:
            ctl = f"{instance.rundir}/ovs-vswitchd.ctl"
            out.append(OvsSource(ns, appctl_of(ctl, instance.env()), names))
    return out
