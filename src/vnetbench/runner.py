"""Execute a plan: build the topology, run every step's flows behind a start barrier, store the results.

Each step (flows started together) is committed in one transaction as soon as it ends, so a
killed campaign loses at most the step in flight, and `resume` continues from the store.
A failed measurement is stored with its reason and the campaign goes on.
"""

from __future__ import annotations

import contextlib
import json
import signal
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from rich.console import Console
from rich.progress import (
    BarColumn,
    Progress,
    TaskProgressColumn,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)

from vnetbench import probe_steps
from vnetbench.drivers import driver_for
from vnetbench.drivers.base import Commands, FlowParams, Parsed
from vnetbench.layout import Layout, build_layout
from vnetbench.model import expected_max_bps
from vnetbench.plan import Flow, Plan, Step, offered_bps
from vnetbench.providers.base import EMULATOR_EVENT, Finished, Provider, ProviderError, ToolProcess
from vnetbench.spec.models import Campaign
from vnetbench.store.db import Event, MeasurementRecord, Store, now_utc_ns
from vnetbench.telemetry.hook import TelemetryHook

SERVER_START_TIMEOUT_S = 10.0
DEFAULT_GRACE_S = 30.0
PORT_RANGE = (5201, 5999)


class Interrupted(Exception):
    """SIGINT or SIGTERM: stop after cleaning up; the campaign can be resumed."""


@dataclass
class RunSummary:
    steps_run: int = 0
    flows_ok: int = 0
    flows_failed: int = 0
    skipped: int = 0  # flows already in the store (resume)
    interrupted: bool = False
    failures: list[str] = field(default_factory=list)


@dataclass
class _Active:
    build_id: int
    topology_key: str
    layout: Layout


class Runner:
    def __init__(
        self,
        store: Store,
        campaign_id: str,
        plan: Plan,
        provider: Provider,
        tool_versions: dict[str, str],
        console: Console | None = None,
        on_step: Callable[[Step, list[MeasurementRecord]], None] | None = None,
    ) -> None:
        self.store = store
        self.campaign_id = campaign_id
        self.plan = plan
        self.provider = provider
        self.tool_versions = tool_versions
        self.console = console or Console(stderr=True)
        self.on_step = on_step
        self.active: _Active | None = None
        self._port = PORT_RANGE[0]
        self.telemetry = TelemetryHook(provider, store.location, campaign_id)

    # ------------------------------------------------------------------ the campaign loop

    def run(self, started_utc_ns: int) -> RunSummary:
        summary = RunSummary()
        done = self.store.done_keys(self.campaign_id)
        attempts = self.store.attempts(self.campaign_id)
        pending = [s for s in self.plan.steps if any(f.key not in done for f in s.flows)]
        summary.skipped = self.plan.flow_count - sum(len(s.flows) for s in pending)
        retries = self.plan.variants[0].schedule.retries
        self.store.update_campaign(self.campaign_id, status="running", pid=_pid())
        with _signals_raise_interrupted(), self._progress() as progress:
            task = progress.add_task("starting", total=max(1, self.plan.planned_ns / 1e9))
            progress.update(task, completed=(self.plan.planned_ns - sum(s.planned_ns for s in pending)) / 1e9)
            try:
                for step in pending:
                    self._ensure_topology(step, force_rebuild=step.rebuild_before)
                    self._wait_until(started_utc_ns + step.not_before_ns, progress, task)
                    progress.update(task, description=_describe(step))
                    for attempt_offset in range(retries + 1):
                        attempt = (
                            max((attempts.get(f.key, 0) for f in step.flows), default=0) + 1 + attempt_offset
                        )
                        records = self._run_step(step, attempt)
                        self._commit(step, records, summary)
                        if all(r.status == "ok" for r in records):
                            break
                    progress.advance(task, step.planned_ns / 1e9)
                    pause = self.plan.variants[step.variant].schedule.pause
                    if pause:
                        time.sleep(pause / 1e9)
                self.store.update_campaign(self.campaign_id, status="finished", pid=None)
            except (Interrupted, KeyboardInterrupt):
                summary.interrupted = True
                self.store.update_campaign(self.campaign_id, status="interrupted", pid=None)
            except BaseException:
                self.store.update_campaign(self.campaign_id, status="failed", pid=None)
                raise
            finally:
                with _signals_ignored():
                    self._teardown()
        return summary

    def _commit(self, step: Step, records: list[MeasurementRecord], summary: RunSummary) -> None:
        self.store.save_measurements(records, after=self.telemetry.save)
        summary.steps_run += 1
        for rec in records:
            if rec.status == "ok":
                summary.flows_ok += 1
            else:
                summary.flows_failed += 1
                summary.failures.append(f"{rec.key}: {rec.reason}")
        if self.on_step:
            self.on_step(step, records)

    def _progress(self) -> Progress:
        return Progress(
            TextColumn("[bold]{task.description}"),
            BarColumn(),
            TaskProgressColumn(),
            TimeElapsedColumn(),
            TextColumn("ETA"),
            TimeRemainingColumn(),
            console=self.console,
            transient=False,
            disable=not self.console.is_terminal,
        )

    def _wait_until(self, deadline_utc_ns: int, progress: Progress, task: Any) -> None:
        while (left := deadline_utc_ns - now_utc_ns()) > 0:
            progress.update(task, description=f"waiting {left / 1e9:.0f} s for the next repetition")
            time.sleep(min(1.0, left / 1e9))

    # ------------------------------------------------------------------ topology

    def _ensure_topology(self, step: Step, force_rebuild: bool) -> None:
        key = self.plan.topology_keys[step.variant]
        if self.active and self.active.topology_key == key and not force_rebuild:
            return
        self._teardown()
        variant = self.plan.variants[step.variant]
        layout = build_layout(variant, self.campaign_id)
        problems = self.provider.preflight(layout)
        if problems:
            raise ProviderError("\n".join(problems))
        build_id = self.store.start_build(self.campaign_id, key, layout_summary(layout))
        started = time.monotonic_ns()
        self.active = _Active(build_id, key, layout)

        def record(items: Any) -> list[int]:
            return self.store.record_objects(self.campaign_id, build_id, items)

        self.provider.build(layout, build_id, record)
        built_ns = time.monotonic_ns() - started
        # What the provider chose while building (netem or a delay node per link, kernel features)
        # is provenance of every measurement on this build.
        summary = {**layout_summary(layout), "provider": self.provider.environment()}
        self.store.finish_build(build_id, build_ns=built_ns, layout=summary)

    def _teardown(self) -> None:
        if self.active is None:
            return
        started = time.monotonic_ns()
        removed = self.provider.teardown()
        self.store.mark_removed(removed)
        self.store.finish_build(self.active.build_id, teardown_ns=time.monotonic_ns() - started)
        # the delay nodes' own accounts of this build (frames, drops by cause, timing error, CPU)
        for link, report in self.provider.emulator_reports().items():
            detail = {"build_id": self.active.build_id, "link": link, "report": report}
            self.store.add_event(self.campaign_id, EMULATOR_EVENT, json.dumps(detail))
        self.active = None

    # ------------------------------------------------------------------ one step

    def _next_port(self) -> int:
        port = self._port
        self._port = port + 1 if port < PORT_RANGE[1] else PORT_RANGE[0]
        return port

    def _run_step(self, step: Step, attempt: int) -> list[MeasurementRecord]:
        assert self.active is not None
        layout = self.active.layout
        variant = self.plan.variants[step.variant]
        m = variant.measurement(step.measurement)
        driver = driver_for(m.kind)
        records = [self._record(step, flow, attempt, variant, layout) for flow in step.flows]
        plans: list[tuple[MeasurementRecord, Commands]] = []
        for rec, flow in zip(records, step.flows, strict=True):
            params = FlowParams(
                flow.src,
                flow.dst,
                self.provider.address_of(layout, flow.dst, flow.src) if flow.src != flow.dst else "",
                self._next_port(),
                getattr(m, "duration", 0),
                getattr(m, "omit", 0),
                step.params,
            )
            cmds = driver.commands(m, params, rec.offered_bps)
            rec.command = {"client": cmds.client, **({"server": cmds.server} if cmds.server else {})}
            plans.append((rec, cmds))
        background = probe_steps.background_plans(
            step,
            variant,
            layout,
            records[0],
            self._next_port,
            lambda dst, src: self.provider.address_of(layout, dst, src),
        )
        plans += background
        records += [rec for rec, _ in background]

        servers: dict[int, ToolProcess] = {}
        clients: dict[int, ToolProcess] = {}
        sampling = None
        try:
            for i, (rec, cmds) in enumerate(plans):
                if cmds.server is None:
                    continue
                proc = self.provider.spawn(rec.dst, cmds.server)
                servers[i] = proc
                port = cmds.port or (
                    int(cmds.server[cmds.server.index("-p") + 1]) if "-p" in cmds.server else 0
                )
                if not self.provider.wait_listening(proc, port, cmds.server_proto, SERVER_START_TIMEOUT_S):
                    fin = proc.wait(1.0)
                    _fail(
                        rec,
                        f"the {driver.tool} server on {rec.dst} did not start: "
                        f"{_last_line(fin.stderr or fin.stdout) or 'no output'}",
                    )
                    rec.raw[("server", "stdout")], rec.raw[("server", "stderr")] = fin.stdout, fin.stderr
            runnable = [i for i, (rec, _) in enumerate(plans) if rec.status == "ok"]
            gate = self.provider.gate()
            try:
                for i in runnable:
                    rec, cmds = plans[i]
                    clients[i] = self.provider.spawn(rec.src, cmds.client, gate=gate)
                sampling = self.telemetry.start(
                    variant, layout, m, [(plans[i][0], clients[i], servers.get(i)) for i in clients]
                )
                released = gate.release()
            finally:
                gate.close()
            first = min(released, default=0)
            skew = (max(released) - first) if released else 0
            for i, stamp in zip(runnable, released, strict=False):
                plans[i][0].start_skew_ns = skew
                plans[i][0].start_offset_ns = stamp - first
                plans[i][0].started_utc_ns = stamp

            timeout_s = (m.timeout or (step.planned_ns + DEFAULT_GRACE_S * 1e9)) / 1e9
            deadline = time.monotonic() + timeout_s
            for i, proc in clients.items():
                rec, _ = plans[i]
                client_fin = proc.wait(max(0.1, deadline - time.monotonic()))
                server_fin = servers[i].wait(5.0) if i in servers else None
                self._finish(rec, driver_for(rec.kind), client_fin, server_fin, timeout_s)
        except ProviderError as err:
            for rec, _ in plans:
                if rec.status == "ok" and not rec.summary:
                    _fail(rec, str(err))
        finally:
            self.telemetry.stop(sampling)
            for proc in [*clients.values(), *servers.values()]:
                proc.kill()
        _mark_incomplete_groups(step, records)
        return records

    def _finish(
        self, rec: MeasurementRecord, driver: Any, client: Finished, server: Finished | None, timeout_s: float
    ) -> None:
        rec.raw[("client", "stdout")], rec.raw[("client", "stderr")] = client.stdout, client.stderr
        if server is not None:
            rec.raw[("server", "stdout")], rec.raw[("server", "stderr")] = server.stdout, server.stderr
        rec.duration_ns = (client.ended_utc_ns - client.started_utc_ns) if client.ended_utc_ns else None
        if client.timed_out:
            _fail(
                rec,
                f"timed out after {timeout_s:.0f} s (raise the measurement's timeout if this is expected)",
            )
        try:
            parsed: Parsed = driver.parse(client, server)
        except Exception as err:  # a parser bug must not lose the measurement: raw output is kept
            _fail(rec, f"could not parse {driver.tool} output ({type(err).__name__}: {err}); raw output kept")
            return
        rec.summary.update(parsed.summary)
        rec.samples.extend(parsed.samples)
        rec.events.extend(parsed.events)
        if parsed.error and rec.status == "ok":
            _fail(rec, parsed.error)
        elif client.returncode not in (0, None) and rec.status == "ok" and not parsed.summary:
            _fail(rec, f"{driver.tool} exited with {client.returncode}: {_last_line(client.stderr)}")

    def _record(
        self, step: Step, flow: Flow, attempt: int, variant: Campaign, layout: Layout
    ) -> MeasurementRecord:
        m = variant.measurement(step.measurement)
        rate = layout.bottleneck_rate(flow.src, flow.dst)
        mtu = layout.path_mtu(flow.src, flow.dst)
        offered = offered_bps(variant, layout, step.measurement, flow.src, flow.dst)
        driver = driver_for(m.kind)
        rec = MeasurementRecord(
            campaign_id=self.campaign_id,
            key=flow.key,
            step_key=step.key,
            seq=step.seq,
            repetition=step.repetition,
            pattern=step.pattern,
            pattern_kind=step.pattern_kind,
            group_kind=step.group_kind,
            group_size=len(step.flows),
            measurement=step.measurement,
            kind=m.kind,
            src=flow.src,
            dst=flow.dst,
            placement=layout.placement(flow.src, flow.dst),
            attempt=attempt,
            build_id=self.active.build_id if self.active else None,
            factors=dict(step.factors),
            src_host=layout.node_host[flow.src],
            dst_host=layout.node_host[flow.dst],
            link_rate_bps=rate,
            path_mtu=mtu,
            expected_max_bps=expected_max_bps(m.kind, rate, mtu, getattr(m, "length", 1470)),
            offered_bps=offered,
            tool=driver.tool,
            tool_version=self.tool_versions.get(driver.tool),
        )
        probe_steps.annotate(rec, m, step.params)
        return rec


def _fail(rec: MeasurementRecord, reason: str) -> None:
    if rec.status == "ok":
        rec.status, rec.reason = "failed", reason


def _mark_incomplete_groups(step: Step, records: list[MeasurementRecord]) -> None:
    """Simultaneous flows are only comparable when all of them ran: a failure fails the group."""
    failed = [r for r in records if r.status != "ok"]
    if not failed or len(records) == 1:
        return
    names = ", ".join(f"{r.src}>{r.dst}" for r in failed)
    for rec in records:
        if rec.status == "ok":
            rec.status = "failed"
            rec.reason = f"group incomplete: {names} failed ({failed[0].reason}); results kept, step re-run"
            rec.events.append(Event("group_incomplete", rec.reason))


def _last_line(text: str) -> str:
    lines = [line.strip() for line in (text or "").splitlines() if line.strip()]
    return lines[-1][:300] if lines else ""


def _describe(step: Step) -> str:
    flows = step.flows
    who = f"{flows[0].src}→{flows[0].dst}" if len(flows) == 1 else f"{len(flows)} flows"
    return f"rep {step.repetition} · {step.pattern} · {step.measurement} · {who}"


def _pid() -> int:
    import os

    return os.getpid()


def layout_summary(layout: Layout) -> dict[str, Any]:
    """What was built, in a JSON-able form kept with the build (provenance)."""
    return {
        "namespaces": layout.namespaces,
        "segments": [
            {"subnet": s.subnet, "label": s.label, "addresses": s.addresses, "ifnames": s.ifnames}
            for s in layout.segments
        ],
        "bridges": [{"ns": b.ns, "name": b.name, "kind": b.kind, "label": b.label} for b in layout.bridges],
        "interfaces": [
            {
                "ns": i.ns,
                "name": i.name,
                "mtu": i.mtu,
                "address": i.address,
                "master": i.master,
                "shaper": i.shaper
                and {
                    "kind": i.shaper.kind,
                    "rate_bps": i.shaper.rate_bps,
                    "queue_bytes": i.shaper.queue_bytes,
                    "burst_bytes": i.shaper.burst_bytes,
                },
            }
            for i in layout.interfaces()
        ],
        "node_host": layout.node_host,
        "host_site": layout.host_site,
        "cpu_quota": layout.cpu_quota,
    }


@contextlib.contextmanager
def _signals_raise_interrupted() -> Iterator[None]:
    def handler(signum: int, _frame: Any) -> None:
        raise Interrupted(signal.Signals(signum).name)

    old = {sig: signal.signal(sig, handler) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield
    finally:
        for sig, previous in old.items():
            signal.signal(sig, previous)


@contextlib.contextmanager
def _signals_ignored() -> Iterator[None]:
    """Teardown must finish even if the user presses Ctrl-C again."""
    old = {sig: signal.signal(sig, signal.SIG_IGN) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield
    finally:
        for sig, previous in old.items():
            signal.signal(sig, previous)
