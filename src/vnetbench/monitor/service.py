"""The monitor loop: wait for the next slot, run the campaign once (build, measure, tear down), check
the alert rules, repeat, until max-runs/until or SIGTERM.

Restart-safe: the next run is derived from the store (a run recorded as started but never finished is
finished first, its stored steps skipped), so a monitor killed with SIGKILL and started again measures
no run twice and loses none. SIGTERM/SIGINT: between runs it stops at once; during a run the runner
abandons the step in flight, tears down what it built, and the monitor exits 0.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import signal
import threading
import time
from dataclasses import dataclass
from typing import Any

from rich.console import Console
from sqlalchemy.exc import InterfaceError, OperationalError

from vnetbench.monitor import alerts, locks
from vnetbench.monitor.runs import next_run, pending_steps, run_plan
from vnetbench.monitor.schedule import Limits, next_slot, slip_ns
from vnetbench.observers import Interrupted, Observer, RunningStep
from vnetbench.plan import Plan, Step, make_plan
from vnetbench.providers.base import ProviderError
from vnetbench.providers.cleanup import clean
from vnetbench.providers.registry import make_provider
from vnetbench.run.campaign import create_campaign
from vnetbench.run.runner import Runner, standard_observers
from vnetbench.spec.errors import SpecInvalid
from vnetbench.spec.loader import LoadedSpec, parse_spec
from vnetbench.spec.models import Campaign
from vnetbench.store.db import Store
from vnetbench.store.monitoring import HEARTBEAT_S, HEARTBEAT_STALE_S, MonitorStore, NotOwner, this_host
from vnetbench.store.records import now_utc_ns

STORE_ERRORS = (OperationalError, InterfaceError)
STORE_POLL_S = 5.0  # while the store is unreachable, try it this often
ENDED = ("stopped", "finished", "failed")  # states a monitor process leaves the campaign in as it exits
# exit code of a monitor another one took over: contrib/systemd's unit does not restart it
# (RestartPreventExitStatus), which would only start a fight over the campaign with the new owner
TAKEN_OVER = 4


class MonitorError(Exception):
    """A problem the user must fix before the monitor can start (exit 2)."""


def _measured_part(campaign: Campaign) -> dict[str, Any]:
    """What defines the time series: everything but the schedule, the alert rules and the prose."""
    return campaign.model_dump(mode="json", exclude={"monitor", "alerts", "description"})


def pps_limited_measurements(plan: Plan) -> frozenset[str]:
    """The measurements with a flow through a link with `pps` in some variant: the only ones the runner
    gives a path_pps_limit (run/runner.py; background flows never get one)."""
    return frozenset(
        step.measurement
        for step in plan.steps
        if any(plan.layouts[step.variant].path_pps(f.src, f.dst) for f in step.flows)
    )


def _pps_limited(loaded: LoadedSpec, plan: Plan | None) -> frozenset[str] | None:
    """pps_limited_measurements, or None (not judged: every measurement may store path_pps_limit)."""
    c = loaded.campaign
    if not any(link.pps for link in c.topology.links) and not any(
        f.path.split(".")[0] == "topology" for f in c.factors
    ):
        return frozenset()  # no link has a packet-rate limit, nor can a factor set one
    if not any(rule.metric == alerts.PATH_PPS_LIMIT for rule in c.alerts):
        return None  # only a rule on it is worth planning for (a 1,000-node plan is not free)
    return pps_limited_measurements(plan or make_plan(loaded, "00000000", c.schedule.seed or 0))


def check_monitorable(loaded: LoadedSpec, plan: Plan | None = None) -> None:
    """A monitored campaign has a monitor: block and one repetition per run (the runs are the repetitions),
    and no alert rule that can never fire. `plan`: the spec's, if the caller made it (else it is made
    here, only when a rule names path_pps_limit: which flows cross a packet-rate limited link)."""
    c = loaded.campaign
    errors = []
    if c.monitor is None:
        errors.append(
            loaded.error(
                ("monitor",), "missing; add e.g. `monitor: {repeat: PT10M}` (see docs/monitoring.md)"
            )
        )
    if c.schedule.repetitions != 1:
        errors.append(
            loaded.error(
                ("schedule", "repetitions"),
                "a monitored campaign's runs are its repetitions; remove this (monitor.max_runs limits them)",
            )
        )
    if c.schedule.interval:
        errors.append(
            loaded.error(("schedule", "interval"), "the monitor schedules runs; use monitor.repeat instead")
        )
    if c.design is not None and c.design.replications != 1:
        errors.append(
            loaded.error(("design", "replications"), "each monitored run is one replication; set it to 1")
        )
    names = {m.name for m in c.measurements}
    # an episode is found again by its rule's name: two rules of one name (a warning and a critical
    # level) closed each other's episodes, firing and resolving the webhook at every run
    first_of: dict[str, int] = {}
    for i, rule in enumerate(c.alerts):
        if rule.name in first_of:
            errors.append(
                loaded.error(
                    ("alerts", i, "name"),
                    f"'{rule.name}' is the name of alerts[{first_of[rule.name]}] too; each rule needs its "
                    f"own name (its episodes are stored under it), e.g. {rule.name}-{rule.severity}",
                )
            )
        first_of.setdefault(rule.name, i)
    for i, rule in enumerate(c.alerts):
        if rule.measurement is not None and rule.measurement not in names:
            errors.append(
                loaded.error(
                    ("alerts", i, "measurement"),
                    f"no measurement '{rule.measurement}'; known: {', '.join(sorted(names))}",
                )
            )
    # a metric no measurement of the campaign can produce would never fire: refused before any run
    kinds = {m.name: m.kind for m in c.measurements}
    for i, problem in alerts.impossible_rules(list(c.alerts), kinds, _pps_limited(loaded, plan)).items():
        errors.append(loaded.error(("alerts", i, "metric"), problem))
    if errors:
        raise SpecInvalid(errors)


@dataclass
class Monitored:
    """One spec under the monitor: its campaign in the store and the template of every run."""

    loaded: LoadedSpec  # as given now: its schedule and alert rules apply
    campaign_id: str
    seed: int
    provider: str
    tool_versions: dict[str, str]
    template: Plan
    resumed: bool
    took_over: str | None = None  # the words saying whose stale claim this start took over

    @property
    def name(self) -> str:
        return self.loaded.campaign.name


def _sets_of(spec_text: str) -> list[str]:
    """The --set overrides a spec text was started with (spec/loader.py's overridden_text heads the text
    with them), as `--set PATH=VALUE` words; [] for a file's own text."""
    lines = spec_text.splitlines()
    if not lines or not (lines[0].startswith("# ") and lines[0].endswith(" as run, with:")):
        return []
    return [
        ln.removeprefix("#   ") for ln in itertools.takewhile(lambda x: x.startswith("#   --set "), lines[1:])
    ]


def _changed_spec(loaded: LoadedSpec, stored: LoadedSpec, campaign_id: str, location: str) -> str | None:
    """Why this start cannot continue the campaign's series: its measured part differs from the stored
    spec (the file or its --set overrides changed); None when only monitor, alerts or description did."""
    before, now = _measured_part(stored.campaign), _measured_part(loaded.campaign)
    if before == now:
        return None
    changed = ", ".join(k for k in sorted(before.keys() | now.keys()) if before.get(k) != now.get(k))
    was, given = _sets_of(stored.text), _sets_of(loaded.text)
    sets = ""
    if was != given:  # the file may be the same: say which overrides made the difference
        sets = (
            f"; it was started with {' '.join(was) or 'no --set'}, this start gives "
            f"{' '.join(given) or 'no --set'} (give the same --set to continue)"
        )
    return (
        f"campaign '{loaded.campaign.name}' ({campaign_id}) in {location} was started from a "
        f"different spec ({changed} changed; only monitor, alerts and description may){sets}, so its "
        "runs would not be one time series; restore the spec, or pass --new-campaign to start a new series"
    )


def _alive_monitor(pid: int | None) -> bool:
    if not pid or pid == os.getpid():
        return False
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return b"vnetbench" in f.read()
    except OSError:
        return False


def _refusal(claimed: dict[str, Any], name: str, campaign_id: str) -> str:
    """Why a start is refused: the words naming the monitor that holds the campaign."""
    pid, host = claimed["pid"], claimed["hostname"]
    if host in (None, this_host()):
        return (
            f"campaign '{name}' ({campaign_id}) is already monitored by process {pid} on {host}; "
            f"stop it first (kill {pid})"
        )
    age_s = (now_utc_ns() - int(claimed["updated_utc_ns"])) / 1e9
    return (
        f"campaign '{name}' ({campaign_id}) is already monitored by process {pid} on {host}, whose "
        f"heartbeat is {max(age_s, 0):.0f} s old (a running monitor writes it every {HEARTBEAT_S:.0f} "
        f"s); stop it there (kill {pid} on {host}), or, if {host} is down, start this monitor again "
        f"once that heartbeat is older than {HEARTBEAT_STALE_S:.0f} s (in "
        f"{max(HEARTBEAT_STALE_S - age_s, 0) + 1:.0f} s) to take the campaign over"
    )


def _check_claim(claimed: dict[str, Any] | None, name: str, campaign_id: str) -> str | None:
    """Refuse (MonitorError) when another monitor runs the campaign: on this host, a live process of
    the recorded pid; on another host (a shared PostgreSQL store), a heartbeat younger than
    HEARTBEAT_STALE_S, since that process cannot be seen from here. Returns the words saying so when a
    stale claim from another host is taken over, else None."""
    if claimed is None or claimed["state"] not in ("waiting", "running") or claimed["pid"] is None:
        return None
    pid, host = claimed["pid"], claimed["hostname"]
    if host in (None, this_host()):  # None: a row written before hostnames were compared
        if pid not in (os.getpid(), os.getppid()) and _alive_monitor(pid):
            raise MonitorError(_refusal(claimed, name, campaign_id))
        return None
    age_s = (now_utc_ns() - int(claimed["updated_utc_ns"])) / 1e9
    if age_s <= HEARTBEAT_STALE_S:  # a heartbeat from the future (clocks apart) is fresh too
        raise MonitorError(_refusal(claimed, name, campaign_id))
    return (
        f"taking over campaign '{name}' ({campaign_id}) from process {pid} on {host}: its heartbeat is "
        f"{age_s:.0f} s old (older than {HEARTBEAT_STALE_S:.0f} s), so that monitor is taken to be gone"
    )


def _claim(mstore: MonitorStore, loaded: LoadedSpec, campaign_id: str) -> str | None:
    """Check the campaign's claim and take it in one compare-and-set (MonitorStore.claim): of monitors
    started at once, each passes the check before any has written, and only one claim lands. A lost
    claim is refused as the check refuses, naming the winner; only a parent's claim (a several-spec
    monitor, whose child takes its campaign over) is read and tried again."""
    name = loaded.campaign.name
    for _ in range(5):
        seen = mstore.monitored(campaign_id)
        took_over = _check_claim(seen, name, campaign_id)
        if mstore.claim(campaign_id, loaded.text, loaded.source, os.getpid(), seen):
            return took_over
        now = mstore.monitored(campaign_id)
        if now is not None and (now["pid"], now["hostname"]) != (os.getppid(), this_host()):
            raise MonitorError(_refusal(now, name, campaign_id))
    raise MonitorError(f"campaign '{name}' ({campaign_id}): its claim kept changing; start the monitor again")


def _create(mstore: MonitorStore, loaded: LoadedSpec, store: Store, provider: str, new_campaign: bool) -> str:
    """Create the spec's campaign and name it the one monitors of its name continue, in one
    compare-and-set (MonitorStore.name_campaign): monitors started at once on a store without that
    campaign each create one, and only the first to name it keeps it. The others delete theirs
    (nothing was built or measured under it) and go on with the winner's, whose claim refuses them
    while its monitor lives. Without --new-campaign, a campaign already named (created a moment ago,
    its monitor's claim not yet written) is continued, not replaced."""
    name = loaded.campaign.name
    previous = mstore.named(name)
    if previous is not None and not new_campaign:
        return previous
    created = create_campaign(loaded, store, provider=provider).campaign_id
    if mstore.name_campaign(name, created, previous):
        return created
    mstore.drop_unused_campaign(created)
    winner = mstore.named(name)
    if winner is None:
        raise MonitorError(
            f"campaign '{name}': another monitor created it at this moment; start the monitor again"
        )
    return winner


def prepare(
    loaded: LoadedSpec, store: Store, new_campaign: bool = False, campaign_id: str | None = None
) -> Monitored:
    """Continue the spec's monitored campaign in this store (the newest of its name, or `campaign_id`),
    or create it; raises MonitorError when that cannot be done."""
    check_monitorable(loaded)
    mstore = MonitorStore(store)
    provider = "ssh" if loaded.campaign.inventory is not None else "local"
    if campaign_id is not None:  # a child of a several-spec monitor: its parent may just have created it
        resumed = mstore.last_run(campaign_id) is not None
    else:
        if not new_campaign:
            campaign_id = mstore.find(loaded.campaign.name)
        resumed = campaign_id is not None
    if campaign_id is None:
        campaign_id = _create(mstore, loaded, store, provider, new_campaign)
        resumed = mstore.last_run(campaign_id) is not None  # another monitor's, created at this moment
    row = store.campaign(campaign_id)
    assert row is not None
    stored = parse_spec(row["spec_text"], row["spec_source"], stored=True)
    changed = _changed_spec(loaded, stored, campaign_id, store.location)
    if changed is not None:
        raise MonitorError(changed)
    took_over = _claim(mstore, loaded, campaign_id)
    template = make_plan(stored, campaign_id, row["seed"])
    return Monitored(
        loaded, campaign_id, row["seed"], row["provider"], row["tool_versions"], template, resumed, took_over
    )


@dataclass
class Outcome:
    """How the monitor ended: exit code 0 (stopped or done, nothing firing), 1 (done with an alert
    firing or the last run failed)."""

    code: int
    reason: str
    runs: int = 0


class _RunProgress(Observer):
    """The run's progress as the store has it (what a dashboard in another process reads too): written
    when a step starts (every earlier step is committed by then) and after the run."""

    def __init__(self, mstore: MonitorStore, campaign_id: str, run: int, plan: Plan) -> None:
        self.mstore, self.campaign_id, self.run, self.plan = mstore, campaign_id, run, plan
        self.flows_ok = self.flows_failed = 0

    def refresh(self) -> list[Step]:
        """Write steps done (every flow stored, ok or failed) and flow counts; return the steps to do.
        NotOwner (nothing written) once another monitor has taken the campaign over."""
        stored, ok, failed = self.mstore.stored_flows(self.campaign_id, self.run)
        done = sum(all(f.key in stored for f in s.flows) for s in self.plan.steps)
        self.flows_ok, self.flows_failed = len(ok), failed
        self.mstore.step_done(
            self.campaign_id, self.run, done, self.flows_ok, self.flows_failed, owner=os.getpid()
        )
        return pending_steps(self.plan, ok)

    def on_step_start(self, running: RunningStep) -> None:
        with contextlib.suppress(*STORE_ERRORS):  # progress is no reason to fail a measurement
            self.refresh()

    def on_step_end(self, running: RunningStep, records: list[Any]) -> None:
        # before the runner stores the step: a monitor taken over while it measured (suspended past
        # the stale limit) stores no result into the new owner's run (NotOwner stops the run)
        try:
            self.mstore.heartbeat(self.campaign_id, os.getpid())
        except STORE_ERRORS:
            return  # the store is away: the runner's own write of the step waits for it
        except NotOwner:
            for flow in running.flows:  # the runner kills them after this call, which raising skips
                for proc in (flow.client, flow.server):
                    if proc is not None:
                        proc.kill()
            raise


class _Heartbeat:
    """Writes the monitor's heartbeat every HEARTBEAT_S from a daemon thread, so it goes on while the
    main thread waits for a slot or is inside a run (a step may take minutes)."""

    def __init__(self, mstore: MonitorStore, campaign_id: str, on_lost: Any) -> None:
        self.mstore, self.campaign_id, self.on_lost = mstore, campaign_id, on_lost
        self.done = threading.Event()
        self.thread = threading.Thread(target=self._beat, name="vnb-heartbeat", daemon=True)

    def __enter__(self) -> _Heartbeat:
        self.thread.start()
        return self

    def __exit__(self, *_exc: object) -> None:
        self.done.set()
        self.thread.join(HEARTBEAT_S)

    def _beat(self) -> None:
        while not self.done.wait(HEARTBEAT_S):
            try:
                self.mstore.heartbeat(self.campaign_id, os.getpid())
            except STORE_ERRORS:
                continue  # the store is away: the main thread says so and waits for it
            except NotOwner as lost:  # its beats stopped for long enough to be taken over
                self.on_lost(lost.owner)
                return


class Monitor:
    """Runs one monitored campaign in this process's main thread."""

    def __init__(
        self,
        store: Store,
        monitored: Monitored,
        limits: Limits,
        webhook: str | None = None,
        console: Console | None = None,
    ) -> None:
        self.store = store
        self.mstore = MonitorStore(store)
        self.m = monitored
        self.limits = limits
        self.webhook = webhook
        self.console = console or Console(stderr=True)
        self.stopping = False
        self._in_run = False
        self.taken_over: dict[str, Any] | None = None  # the row naming the monitor that took over
        self.warned_rules: set[str] = set()  # alert rules said to match no stored metric
        schedule = monitored.loaded.campaign.monitor
        assert schedule is not None
        self.schedule = schedule

    # ------------------------------------------------------------------ signals

    def _on_signal(self, signum: int, _frame: Any) -> None:
        self.stopping = True
        if self._in_run:  # outside the runner's own handler (before or after its loop): stop this run
            raise Interrupted(signal.Signals(signum).name)

    def _lost(self, owner: dict[str, Any] | None) -> None:
        """From the heartbeat thread: another monitor holds the campaign now. Stop: between runs at the
        next poll; during a run as SIGTERM stops it (the step in flight is abandoned, the topology torn
        down), the signal sent to the main thread so that a wait there returns at once."""
        self.taken_over = owner or {"pid": None, "hostname": None}
        self.stopping = True
        if self._in_run:
            signal.pthread_kill(threading.main_thread().ident or 0, signal.SIGTERM)

    def _update_campaign(self, **values: Any) -> None:
        """The campaign row's status and pid, written only while this monitor holds the claim; one that
        finds the campaign taken over writes nothing and stops as `_lost` says (the runner's status
        write as its run ends would else mark the new owner's campaign interrupted, with no pid)."""
        try:
            self.mstore.update_campaign(self.m.campaign_id, owner=os.getpid(), **values)
        except NotOwner as err:
            self._lost(err.owner)

    def _say(self, text: str) -> None:
        self.console.print(f"{self.m.name}/{self.m.campaign_id}: {text}", highlight=False, soft_wrap=True)

    # ------------------------------------------------------------------ the loop

    def run(self) -> Outcome:
        previous = {sig: signal.signal(sig, self._on_signal) for sig in (signal.SIGTERM, signal.SIGINT)}
        try:
            with _Heartbeat(self.mstore, self.m.campaign_id, self._lost):
                return self._loop()
        except NotOwner as lost:  # a write found the row naming another monitor: it wrote nothing
            return self._taken_over_outcome(lost.owner)
        except Exception as err:  # a bug or an unexpected failure: say so where /health reads it
            with contextlib.suppress(*STORE_ERRORS, NotOwner):
                self._set_state("failed", message=f"{type(err).__name__}: {err}", next_run_utc_ns=None)
            raise
        finally:
            for sig, handler in previous.items():
                signal.signal(sig, handler)

    def _loop(self) -> Outcome:
        runs = 0
        cleaned = False
        while not self.stopping:
            try:
                if not cleaned:
                    self._clean_leftovers()
                    cleaned = True
                outcome = self._one_cycle()
                if outcome is not None:
                    outcome.runs = runs
                    return outcome
                runs += 1
            except STORE_ERRORS as err:
                self._say(
                    f"[yellow]the store is unreachable[/yellow] ({str(err).splitlines()[0]}); "
                    f"waiting for it, the run is finished when it is back"
                )
                self._wait_for_store()
                cleaned = False  # the run's teardown may not have been recorded
        if self.taken_over is not None:
            raise NotOwner(self.m.campaign_id, self.taken_over)
        self._set_state("stopped", message="stopped by a signal", next_run_utc_ns=None)
        self._update_campaign(status="stopped", pid=None)
        self._say("stopped; start the monitor again to continue this campaign")
        return Outcome(0, "stopped", runs)

    def _taken_over_outcome(self, owner: dict[str, Any] | None) -> Outcome:
        who = "nobody" if owner is None else f"process {owner['pid']} on {owner['hostname']}"
        self._say(
            f"[red]taken over[/red]: the store names {who} as this campaign's monitor now (this "
            f"monitor's heartbeat did not reach it for over {HEARTBEAT_STALE_S:.0f} s: suspended, or cut "
            f"off from the store); stopping without writing to the campaign again (exit {TAKEN_OVER}): "
            "the steps stored stay stored, the new monitor finishes the run"
        )
        return Outcome(TAKEN_OVER, "taken over")

    def _one_cycle(self) -> Outcome | None:
        """Wait for and measure one run; an Outcome when monitoring is over."""
        last = self.mstore.last_run(self.m.campaign_id)
        upcoming = next_run(last)
        now = now_utc_ns()
        if upcoming.resumed:  # finish it now, in its own slot
            slot, start = upcoming.scheduled_utc_ns or now, now
        else:
            previous_slot = None if last is None else int(last["scheduled_utc_ns"])
            slot = next_slot(self.schedule, previous_slot, now)
            start = slot + slip_ns(self.schedule, self.m.seed, upcoming.run)
        # `until` bounds when a run starts, its slip included (a run resumed now was due at its slot)
        reason = self.limits.reached(upcoming.run, slot if upcoming.resumed else start)
        if reason is not None:
            return self._finish(reason)
        self._set_state("waiting", next_run_utc_ns=start)
        if not self._sleep_until(start):
            return None  # stopping
        self._measure(upcoming.run, slot)
        return None

    def _finish(self, reason: str) -> Outcome:
        firing = self.mstore.open_episodes(self.m.campaign_id)
        last = self.mstore.last_run(self.m.campaign_id)
        self._set_state("finished", message=reason, next_run_utc_ns=None)
        self._update_campaign(status="finished", pid=None)
        problems = []
        if firing:
            problems.append(
                f"{len(firing)} alert(s) firing: " + ", ".join(sorted({e["rule"] for e in firing}))
            )
        if last is not None and last["status"] == "failed":
            problems.append(f"the last run ({last['run']}) had failed measurements")
        self._say(f"done: {reason}" + (f"; {'; '.join(problems)}" if problems else ""))
        return Outcome(1 if problems else 0, reason)

    def _sleep_until(self, deadline_utc_ns: int) -> bool:
        while not self.stopping and (left := deadline_utc_ns - now_utc_ns()) > 0:
            time.sleep(min(0.2, left / 1e9))
        return not self.stopping

    def _wait_for_store(self) -> None:
        while not self.stopping:
            try:
                self.mstore.last_run(self.m.campaign_id)
                return
            except STORE_ERRORS:
                time.sleep(STORE_POLL_S)

    def _clean_leftovers(self) -> None:
        result = clean(self.store, self.m.campaign_id)
        if result.removed:
            self._say(f"removed {len(result.removed)} objects left by an interrupted run")
        for problem in result.problems:
            self._say(f"[yellow]could not remove[/yellow] {problem}")

    def _set_state(self, state: str, **values: Any) -> None:
        if state in ENDED:  # its server goes with it: no address of a server that is gone
            values.setdefault("url", None)
        # only while this monitor holds the campaign: NotOwner (nothing written) once taken over
        self.mstore.set_state(self.m.campaign_id, owner=os.getpid(), state=state, pid=os.getpid(), **values)

    # ------------------------------------------------------------------ one run

    def _measure(self, run: int, slot: int) -> None:
        cid = self.m.campaign_id
        plan = run_plan(self.m.template, run)
        self.mstore.start_run(cid, run, slot, len(plan.steps), owner=os.getpid())
        progress = _RunProgress(self.mstore, cid, run, plan)
        pending = progress.refresh()
        self._set_state("running", next_run_utc_ns=None)
        resumed = len(pending) < len(plan.steps)
        self._say(f"run {run}: {len(pending)} steps" + (" (the rest are stored)" if resumed else ""))
        status, message = "ok", None
        self._in_run = True
        try:
            if self.stopping:
                raise Interrupted("SIGTERM")
            provider = make_provider(self.m.provider, cid, self.store)
            runner = Runner(
                self.store,
                cid,
                plan,
                provider,
                self.m.tool_versions,
                Console(stderr=True, quiet=True),
                observers=[*standard_observers(provider, self.store, cid), progress],
                step_guard=self._guard,
                update_campaign=self._update_campaign,
            )
            summary = runner.run(now_utc_ns())
            self.stopping = self.stopping or summary.stop_requested  # a signal during its teardown
            if summary.interrupted:
                status, message = "interrupted", "stopped by a signal during the run"
            elif summary.flows_failed:
                status = "failed"
                message = f"{summary.flows_failed} measurements failed; first: {summary.failures[0]}"
        except Interrupted:
            status, message = "interrupted", "stopped by a signal during the run"
        except STORE_ERRORS:
            if not self.stopping:
                raise  # the store is unreachable: _loop waits for it, then this run is resumed
            # a stop that still came out as a database error (store.db turns the usual case back
            # into the Interrupted): the run is interrupted, not left "running"
            status, message = "interrupted", "stopped by a signal during the run"
        except ProviderError as err:
            status, message = "failed", f"could not build the topology: {err}"
        finally:
            self._in_run = False
        if self.taken_over is not None:  # the new owner finishes this run: nothing more is written
            raise NotOwner(cid, self.taken_over)
        if status == "interrupted":
            self.stopping = True
        progress.refresh()
        self.mstore.finish_run(cid, run, status, message, owner=os.getpid())
        self._update_campaign(status="monitoring", pid=os.getpid())
        self._say(
            f"run {run} {status}: {progress.flows_ok} measurements ok, {progress.flows_failed} failed"
            + (f" — {message}" if message and status != "interrupted" else "")
        )
        if status != "interrupted":
            self._check_alerts(run)

    def _guard(self, step: Step) -> Any:
        variant = self.m.template.variants[step.variant]
        return locks.holding(locks.resources(variant, step))

    def _check_alerts(self, run: int) -> None:
        rules = self.m.loaded.campaign.alerts
        # a metric no kind can produce was refused at the start; one its kind can produce but this
        # campaign's measurements do not store (e.g. run_packets_sent without omit) shows only here
        stored = self.mstore.run_metrics(self.m.campaign_id, run)
        names = self.mstore.run_metrics(self.m.campaign_id, run, valued=False)
        kinds = {m.name: m.kind for m in self.m.loaded.campaign.measurements}
        for rule, problem in alerts.unproduced_rules(rules, stored, run, kinds, names).items():
            if rule not in self.warned_rules:  # once per rule and start (the spec is read at a start)
                self.warned_rules.add(rule)
                self._say(f"[yellow]{problem}[/yellow]")
        for change in alerts.evaluate(self.mstore, self.m.campaign_id, rules, run):
            s = change.series
            colour = "red" if change.state == "firing" else "green"
            detail = alerts.value_detail(change.metric, change.value, change.run)
            self._say(
                f"alert [{colour}]{change.state}[/{colour}]: {change.rule} on {s.measurement} "
                f"{s.src}→{s.dst}: {change.condition} {detail or '(rule no longer in the spec)'}"
            )
        for problem in alerts.notify(self.mstore, self.m.campaign_id, self.m.name, self.webhook):
            self._say(f"[yellow]{problem}[/yellow] (retried after the next run)")
