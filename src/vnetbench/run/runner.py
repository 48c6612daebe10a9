"""Execute a plan: build the topology, run every step's flows behind a start barrier, store the results.

Each step (flows started together) is committed in one transaction as soon as it ends, so a
killed campaign loses at most the step in flight, and `resume` continues from the store.
A failed measurement is stored with its reason and the campaign goes on. Observers (telemetry, a
dashboard …) are told of every step (observers/); what each measurement kind needs is its kind's
to say (kinds/).
"""

from __future__ import annotations

import contextlib
import functools
import json
import logging
import os
import signal
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, replace
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

from vnetbench.drivers.base import Commands, Driver, FlowParams, Parsed
from vnetbench.kinds import PathFacts, driver_for, kind_of
from vnetbench.layout import Layout, build_layout
from vnetbench.layout.summary import layout_summary
from vnetbench.observers import FlowProcesses, Interrupted, Observer, RunningStep, RunSummary, StepCallback
from vnetbench.plan import Flow, Plan, Step, path_facts
from vnetbench.providers.base import EMULATOR_EVENT, Finished, Provider, ProviderError, ToolProcess
from vnetbench.providers.local.procs import starttime
from vnetbench.run.background import background_plans
from vnetbench.run.handshake import Watched, late_start, watch_handshakes
from vnetbench.run.priming import prime_paths
from vnetbench.spec.models import Campaign
from vnetbench.store.db import Store
from vnetbench.store.records import Event, MeasurementRecord, now_utc_ns
from vnetbench.telemetry.observer import TelemetryObserver

log = logging.getLogger(__name__)

SERVER_START_TIMEOUT_S = 10.0
DEFAULT_GRACE_S = 45.0  # > iperf3's 30 s wait for a lost UDP handshake (where no watchdog ends it sooner)
SETUP_ATTEMPTS = 8  # a step whose tool setup failed runs at most this often (20 % loss: ~43 % fail)
SETUP_FAILED = "setup_failed"  # measurements.status of an attempt whose tool never got to measure
PORT_RANGE = (5201, 5999)


def standard_observers(provider: Provider, store: Store, campaign_id: str) -> list[Observer]:
    """The observers every campaign has: telemetry (when the spec enables it)."""
    return [TelemetryObserver(provider, store.location, campaign_id)]


@dataclass
class _Active:
    build_id: int
    topology_key: str
    layout: Layout


@dataclass
class _FlowRun:
    """One flow of a step in flight: its record, its commands and its processes."""

    record: MeasurementRecord
    commands: Commands
    server: ToolProcess | None = None
    client: ToolProcess | None = None
    path: PathFacts | None = None  # for the start check (a measured flow's; background flows: None)
    omit_ns: int = 0


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
        observers: Sequence[Observer] | None = None,
        step_guard: Callable[[Step], contextlib.AbstractContextManager[Any]] | None = None,
        update_campaign: Callable[..., None] | None = None,
    ) -> None:
        """`observers`: None gives the standard ones (telemetry); `on_step(step, records)` is one more.
        `step_guard(step)` is held around a step's attempts (the monitor's throughput locks).
        `update_campaign(**values)` writes the campaign row's status and pid as the run starts and ends
        (default: the store's; the monitor's writes only while it holds the campaign's claim)."""
        self.store = store
        self.campaign_id = campaign_id
        self.plan = plan
        self.provider = provider
        self.tool_versions = tool_versions
        self.console = console or Console(stderr=True)
        self._stop_signals: list[str] = []  # SIGINT/SIGTERM received while the steps run
        self.observers = list(
            standard_observers(provider, store, campaign_id) if observers is None else observers
        )
        if on_step is not None:
            self.observers.append(StepCallback(on_step))
        self.step_guard = step_guard
        self.update_campaign = update_campaign or functools.partial(store.update_campaign, campaign_id)
        self.active: _Active | None = None
        self._stored_failures: dict[str, str | None] = {}
        self._port = PORT_RANGE[0]

    # ------------------------------------------------------------------ the campaign loop

    def run(self, started_utc_ns: int) -> RunSummary:
        """Run every step not yet in the store; returns what happened (interrupted: resumable)."""
        summary = RunSummary()
        done = self.store.done_keys(self.campaign_id)
        pending = [s for s in self.plan.steps if any(f.key not in done for f in s.flows)]
        summary.skipped = self.plan.flow_count - sum(len(s.flows) for s in pending)
        self.update_campaign(status="running", pid=os.getpid(), **self._pid_host())
        for observer in self.observers:
            observer.on_campaign_start(self.campaign_id, self.plan)
        with _signals_raise_interrupted() as signalled, self._progress() as progress:
            self._stop_signals = signalled
            task = progress.add_task("starting", total=max(1, self.plan.planned_ns / 1e9))
            progress.update(task, completed=(self.plan.planned_ns - sum(s.planned_ns for s in pending)) / 1e9)
            status = "failed"
            try:
                self._run_steps(pending, started_utc_ns, summary, progress, task)
                status = "finished"
            except (Interrupted, KeyboardInterrupt):
                summary.interrupted, status = True, "interrupted"
            except BaseException:
                if not signalled:
                    raise
                # a stop signal raised inside a driver's wait can come out as that driver's error
                # (psycopg: "another command is already in progress"): it is still a stop
                log.warning("stopped by %s; the error it raised is no failure", signalled[0], exc_info=True)
                summary.interrupted, status = True, "interrupted"
            finally:
                with _signals_deferred() as received:
                    try:
                        self._teardown()
                    finally:
                        # only now: while the topology stands, `clean` must see its process running
                        # (it removed a live campaign's objects during a teardown after 'finished')
                        self.update_campaign(status=status, pid=None)
                    for observer in self.observers:
                        observer.on_campaign_end(summary)
                # kept apart from the Interrupted exception, which a library may have swallowed
                summary.stop_requested = summary.interrupted or bool(signalled) or bool(received)
        return summary

    def _pid_host(self) -> dict[str, Any]:
        """The environment with this process's start time (`pid_start_ticks`: with the pid it names
        this process, whatever its command line, for `clean` and `resume`), and this machine as the
        pid's (`pid_hostname`) when another created the campaign (a resume from elsewhere, a shared
        store): the pid is checked where it runs (providers/cleanup.py)."""
        row = self.store.campaign(self.campaign_id) or {}
        env = {**(row.get("environment") or {}), "pid_start_ticks": starttime(os.getpid())}
        node = os.uname().nodename
        if env.get("hostname") not in (None, node) or env.get("pid_hostname") not in (None, node):
            env["pid_hostname"] = node
        return {"environment": env}

    def _run_steps(
        self, pending: list[Step], started_utc_ns: int, summary: RunSummary, progress: Progress, task: Any
    ) -> None:
        attempts = self.store.attempts(self.campaign_id)
        # why each key's latest attempt failed: a refused step an earlier resume stored is not stored again
        self._stored_failures = self.store.latest_failures(self.campaign_id) if self.plan.refused else {}
        retries = self.plan.variants[0].schedule.retries
        for step in pending:
            if self._stop_signals:  # a stop whose Interrupted a library swallowed (seen in telemetry's
                raise Interrupted(self._stop_signals[0])  # start: a clean-up error replaced it): stop here
            if (step.variant, step.measurement) not in self.plan.refused:  # a refused step builds nothing
                self._ensure_topology(step, force_rebuild=step.rebuild_before)
            self._wait_until(started_utc_ns + step.not_before_ns, progress, task)
            progress.update(task, description=_describe(step))
            with self.step_guard(step) if self.step_guard else contextlib.nullcontext():
                self._attempts(
                    step, max((attempts.get(f.key, 0) for f in step.flows), default=0), retries, summary
                )
            progress.advance(task, step.planned_ns / 1e9)
            pause = self.plan.variants[step.variant].schedule.pause
            if pause:
                time.sleep(pause / 1e9)

    def _attempts(self, step: Step, attempt: int, retries: int, summary: RunSummary) -> None:
        """Run a step until it succeeds: `retries` re-runs after a failure, and, on a budget of its
        own, up to SETUP_ATTEMPTS runs while the tool's setup fails (a lost handshake is no result)."""
        refused = self.plan.refused.get((step.variant, step.measurement))
        if refused is not None:  # the spec, not the run, is wrong: stored as failed once, no retry
            if all(self._stored_failures.get(f.key) == refused for f in step.flows):
                for flow in step.flows:  # stored by an earlier resume: still failed, not a second row
                    summary.flows_failed += 1
                    summary.failures.append(f"{flow.key}: {refused}")
            else:
                records = self._refused_step(step, attempt + 1, refused)
                self._commit(records, summary)
                _tally(records, summary)
            return
        failed_runs = setup_runs = 0
        while True:
            attempt += 1
            records = self._run_step(step, attempt)
            setup = any(r.status == SETUP_FAILED for r in records)
            if setup and setup_runs + 1 >= SETUP_ATTEMPTS:
                _setup_gave_up(records, SETUP_ATTEMPTS)
            self._commit(records, summary)
            if all(r.status == "ok" for r in records):
                _tally(records, summary)
                return
            if setup and setup_runs + 1 < SETUP_ATTEMPTS:
                setup_runs += 1
                continue
            failed_runs += 1
            if failed_runs > retries:
                _tally(records, summary)
                return
            summary.reruns += 1

    def _refused_step(self, step: Step, attempt: int, reason: str) -> list[MeasurementRecord]:
        """A step its tool cannot run (a stored spec's, Plan.refused): every flow stored as failed with
        the reason, which names the spec's field and the fix; nothing is built or started."""
        variant = self.plan.variants[step.variant]
        layout = (
            self.plan.layouts[step.variant] if self.plan.layouts else build_layout(variant, self.campaign_id)
        )
        records = []
        for flow in step.flows:
            rec = self._record(step, flow, attempt, variant, layout)
            rec.build_id = None  # measured on no build
            _fail(rec, reason)
            records.append(rec)
        self._end_step(RunningStep(step, variant, layout, variant.measurement(step.measurement), []), records)
        return records

    def _end_step(self, running: RunningStep, records: list[MeasurementRecord]) -> None:
        for observer in self.observers:
            observer.on_step_end(running, records)

    def _commit(self, records: list[MeasurementRecord], summary: RunSummary) -> None:
        self.store.save_measurements(records)
        summary.steps_run += 1
        summary.setup_failures += sum(rec.status == SETUP_FAILED for rec in records)

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

        machine = os.uname().nodename

        def record(items: Any) -> list[int]:
            # Each object names the machine that made it: with a shared store, a campaign resumed on
            # another machine leaves objects on both, and `clean` must know which are whose.
            marked = [(kind, name, {**details, "machine": machine}) for kind, name, details in items]
            return self.store.record_objects(self.campaign_id, build_id, marked)

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
        for key, report in self.provider.emulator_reports().items():
            link = report.get("link") or key
            detail = {"build_id": self.active.build_id, "link": link, "node": key, "report": report}
            self.store.add_event(self.campaign_id, EMULATOR_EVENT, json.dumps(detail))
        self.active = None

    # ------------------------------------------------------------------ one step

    def _next_port(self) -> int:
        port = self._port
        self._port = port + 1 if port < PORT_RANGE[1] else PORT_RANGE[0]
        return port

    def _run_step(self, step: Step, attempt: int) -> list[MeasurementRecord]:
        """Start the step's servers, its clients behind one barrier, wait for them; never raises on a
        tool's failure (the records say it), only on an interruption."""
        assert self.active is not None
        layout = self.active.layout
        variant = self.plan.variants[step.variant]
        m = variant.measurement(step.measurement)
        flows = self._flows(step, attempt, variant, layout)
        records = [f.record for f in flows]
        if any(r.status != "ok" for r in records):  # the driver refused a flow's commands: nothing runs
            _mark_incomplete_groups(step, records)
            self._end_step(RunningStep(step, variant, layout, m, []), records)
            return records
        if variant.schedule.prime:
            prime_paths(self.provider, records, lambda dst, src: self.provider.address_of(layout, dst, src))
        running = RunningStep(step, variant, layout, m, [])  # its flows: those whose client started
        try:
            try:
                self._start_servers(flows)
                runnable = [f for f in flows if f.record.status == "ok"]
                self._start_clients(runnable, running)
                timeout_s = (m.timeout or (step.planned_ns + DEFAULT_GRACE_S * 1e9)) / 1e9
                self._wait_clients(runnable, timeout_s)
            except ProviderError as err:
                for rec in records:
                    if rec.status == "ok" and not rec.summary:
                        _fail(rec, str(err))
            _mark_incomplete_groups(step, records)
        finally:
            self._end_step(running, records)
            for flow in flows:
                for proc in (flow.client, flow.server):
                    if proc is not None:
                        proc.kill()
        return records

    def _flows(self, step: Step, attempt: int, variant: Campaign, layout: Layout) -> list[_FlowRun]:
        """The step's flows with their records and commands, then its pattern's background flows."""
        m = variant.measurement(step.measurement)
        driver = driver_for(m.kind)
        duration_ns, omit_ns = kind_of(m.kind).flow_timing(m)
        flows = []
        for flow in step.flows:
            rec = self._record(step, flow, attempt, variant, layout)
            address = self.provider.address_of(layout, flow.dst, flow.src) if flow.src != flow.dst else ""
            params = FlowParams(
                flow.src, flow.dst, address, self._next_port(), duration_ns, omit_ns, step.params
            )
            try:
                cmds = driver.commands(m, params, rec.offered_bps)
            except ValueError as err:
                # what the plan let through (a stored spec): a failed flow, no traceback
                _fail(rec, f"not run: the {driver.tool} driver refused it: {err}")
                flows.append(_FlowRun(rec, Commands(client=[])))
                continue
            rec.command = {"client": cmds.client, **({"server": cmds.server} if cmds.server else {})}
            path = path_facts(layout, flow.src, flow.dst)
            if not self.provider.shapes_links:  # no queue of ours on the path for a late start to overflow
                path = replace(path, queue_bytes=None)
            flows.append(_FlowRun(rec, cmds, path=path, omit_ns=omit_ns))
        if any(f.record.status != "ok" for f in flows):
            return flows
        background = background_plans(
            step,
            variant,
            layout,
            flows[0].record,
            self._next_port,
            lambda dst, src: self.provider.address_of(layout, dst, src),
        )
        return flows + [_FlowRun(rec, cmds) for rec, cmds in background]

    def _start_servers(self, flows: list[_FlowRun]) -> None:
        """Start every server and wait until it listens; a flow whose server does not is failed."""
        for flow in flows:
            rec, cmds = flow.record, flow.commands
            if cmds.server is None:
                continue
            proc = self.provider.spawn(rec.dst, cmds.server)
            flow.server = proc
            port = cmds.port or (int(cmds.server[cmds.server.index("-p") + 1]) if "-p" in cmds.server else 0)
            if not self.provider.wait_listening(proc, port, cmds.server_proto, SERVER_START_TIMEOUT_S):
                fin = proc.wait(1.0)
                tool = driver_for(rec.kind).tool
                reason = _last_line(fin.stderr or fin.stdout) or "no output"
                _fail(rec, f"the {tool} server on {rec.dst} did not start: {reason}")
                rec.raw[("server", "stdout")], rec.raw[("server", "stderr")] = fin.stdout, fin.stderr

    def _start_clients(self, runnable: list[_FlowRun], running: RunningStep) -> None:
        """Spawn the clients behind one barrier, tell the observers, open the barrier, note the skew."""
        gate = self.provider.gate()
        try:
            for flow in runnable:
                flow.client = self.provider.spawn(flow.record.src, flow.commands.client, gate=gate)
                running.flows.append(FlowProcesses(flow.record, flow.client, flow.server))
            for observer in self.observers:
                observer.on_step_start(running)
            released = gate.release()
        finally:
            gate.close()
        first = min(released, default=0)
        skew = (max(released) - first) if released else 0
        for flow, stamp in zip(runnable, released, strict=False):
            flow.record.start_skew_ns = skew
            flow.record.start_offset_ns = stamp - first
            flow.record.started_utc_ns = stamp

    def _wait_clients(self, runnable: list[_FlowRun], timeout_s: float) -> None:
        deadline = time.monotonic() + timeout_s
        watched = [
            (f, (f.client, f.server, f.commands.handshake))
            for f in runnable
            if f.client and f.server and f.commands.handshake
        ]
        seen = watch_handshakes(self.provider, [w for _, w in watched], deadline)
        no_result = {id(watched[i][0]): _no_result(watched[i][0], w) for i, w in seen.items()}
        for i, w in seen.items():  # kept with every attempt: how long the tool took to start sending
            if w.data_after_s is not None:
                watched[i][0].record.summary["udp_start_delay_s"] = round(w.data_after_s, 3)
        for flow in runnable:
            assert flow.client is not None
            client_fin = flow.client.wait(max(0.1, deadline - time.monotonic()))
            server_fin = flow.server.wait(5.0) if flow.server is not None else None
            driver = driver_for(flow.record.kind)
            finish_record(flow.record, driver, client_fin, server_fin, timeout_s, no_result.get(id(flow)))

    def _record(
        self, step: Step, flow: Flow, attempt: int, variant: Campaign, layout: Layout
    ) -> MeasurementRecord:
        m = variant.measurement(step.measurement)
        kind = kind_of(m.kind)
        path = path_facts(layout, flow.src, flow.dst)
        offered = kind.offered(m, path, step.params)
        rec = MeasurementRecord(
            campaign_id=self.campaign_id,
            **step.record_fields(flow, layout),
            kind=m.kind,
            attempt=attempt,
            build_id=self.active.build_id if self.active else None,
            link_rate_bps=path.rate_bps,
            path_mtu=path.mtu,
            expected_max_bps=kind.expected_max_bps(m, path, step.params),
            offered_bps=None if offered is None else offered.bps,
            tool=kind.driver.tool,
            tool_version=self.tool_versions.get(kind.driver.tool),
        )
        pps = layout.path_pps(flow.src, flow.dst)
        if pps:  # a switch's packet-rate capacity on the path (the report draws it as the limit)
            rec.summary["path_pps_limit"] = float(pps)
        return rec


def finish_record(
    rec: MeasurementRecord,
    driver: Driver,
    client: Finished,
    server: Finished | None,
    timeout_s: float,
    setup_failure: str | None = None,
) -> None:
    """Turn what a flow's tools left into the record's status, numbers and events: ok, failed, or
    setup_failed (the tool, not the test, failed: the step is re-run)."""
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
    if setup_failure is not None and rec.status == "ok":  # the watchdog's verdict: no result
        rec.status, rec.reason = SETUP_FAILED, setup_failure
        rec.events.append(Event("setup_failed", f"{driver.tool} setup failed, step re-run: {setup_failure}"))
    elif parsed.error and (rec.status == "ok" or (client.timed_out and parsed.setup_failed)):
        # a tool that hung on a control message the path lost is ended by the timeout: no result
        reason = parsed.error if rec.status == "ok" else f"{rec.reason}: {parsed.error}"
        rec.status, rec.reason = "failed", reason
        if parsed.setup_failed:
            rec.status = SETUP_FAILED
            rec.events.append(
                Event("setup_failed", f"{driver.tool} setup failed, step re-run: {parsed.error}")
            )
    elif client.returncode not in (0, None) and rec.status == "ok" and not parsed.summary:
        _fail(rec, f"{driver.tool} exited with {client.returncode}: {_last_line(client.stderr)}")


def _no_result(flow: _FlowRun, seen: Watched) -> str | None:
    """Why the watchdog's view of a flow makes its attempt no result: a lost handshake, or a start so
    late that the tool's catch-up burst overflows the path's queue."""
    handshake = flow.commands.handshake
    if seen.lost or seen.data_after_s is None or flow.path is None or handshake is None:
        return seen.lost
    offered, omit_s = flow.record.offered_bps or 0.0, flow.omit_ns / 1e9
    return late_start(seen.data_after_s, flow.path, offered, handshake.payload_bytes, omit_s)


def _tally(records: list[MeasurementRecord], summary: RunSummary) -> None:
    """Count a step's measurements by their last attempt: a measurement re-run after a failure is one
    measurement, ok or failed (each failed attempt was counted as a failed measurement: "2 ok, 4
    failed" of 4 planned)."""
    for rec in records:
        if rec.status == "ok":
            summary.flows_ok += 1
        else:
            summary.flows_failed += 1
            tried = f" (attempt {rec.attempt})" if rec.attempt > 1 else ""
            summary.failures.append(f"{rec.key}{tried}: {rec.reason}")


def _setup_gave_up(records: list[MeasurementRecord], attempts: int) -> None:
    """The last setup attempt failed too: now it is a failed measurement."""
    for rec in records:
        if rec.status == SETUP_FAILED:
            rec.status, rec.reason = "failed", f"{rec.reason} (tool setup failed on {attempts} attempts)"


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


@contextlib.contextmanager
def _signals_raise_interrupted() -> Iterator[list[str]]:
    """SIGINT/SIGTERM raise Interrupted where the run is, and are recorded: an exception raised
    inside a database driver's wait can come out as that driver's error (psycopg turns it into a
    failed query, which the store retries), so the record is what says a stop was asked for."""
    received: list[str] = []

    def handler(signum: int, _frame: Any) -> None:
        received.append(signal.Signals(signum).name)
        raise Interrupted(signal.Signals(signum).name)

    old = {sig: signal.signal(sig, handler) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield received
    finally:
        for sig, previous in old.items():
            signal.signal(sig, previous)


@contextlib.contextmanager
def _signals_deferred() -> Iterator[list[str]]:
    """Teardown must finish even if the user presses Ctrl-C again; what arrives meanwhile is kept
    (not ignored: a monitor's SIGTERM during one run's teardown must still stop the monitor)."""
    received: list[str] = []
    old = {
        sig: signal.signal(sig, lambda signum, _f: received.append(signal.Signals(signum).name))
        for sig in (signal.SIGINT, signal.SIGTERM)
    }
    try:
        yield received
    finally:
        for sig, previous in old.items():
            signal.signal(sig, previous)
