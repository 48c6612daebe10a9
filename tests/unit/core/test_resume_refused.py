"""A stored campaign whose spec its tool cannot run (stored before the check, parsed with stored=True):
`vnetbench resume` stores those steps as failed with the field and the fix and runs the rest; it used
to die with a traceback (the iperf3 driver's ValueError from `runner._flows`), the campaign left
'running' and its remaining valid steps never run. Nothing already measured is touched.

The store is a real SQLite file; the provider is a stand-in that "runs" ping by returning a captured
output, so nothing is built on this machine."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from vnetbench.cli import app
from vnetbench.layout import Layout
from vnetbench.plan import make_plan
from vnetbench.providers.base import Finished, Gate, Provider, ToolProcess
from vnetbench.run.campaign import load_plan
from vnetbench.run.runner import Runner
from vnetbench.spec.errors import SpecInvalid
from vnetbench.spec.loader import parse_spec
from vnetbench.store.db import Store
from vnetbench.store.records import MeasurementRecord, now_utc_ns

PING = (Path(__file__).parents[2] / "data/tool_output/ping/ping_normal.stdout").read_text()

SPEC = """\
name: old
topology:
  nodes: [{name: vm1}, {name: vm2}]
  links:
    - {name: ab, endpoints: [vm1, vm2], rate: 100mbit}
measurements:
  - {name: ping, kind: rtt, count: 10, interval: 200ms}
  - {name: tcp, kind: tcp, duration: 0}
patterns:
  - {name: p, kind: pairs, pairs: [[vm1, vm2]], measurements: [ping, tcp]}
schedule: {repetitions: 2, prime: false}
telemetry: {enabled: false}
"""

REFUSED = (
    "not run: c.yaml:8: measurements[1].duration: duration 0 s: iperf3 3.12 takes whole seconds from 1 to "
    "86400; use e.g. duration: 2s (this campaign's stored spec "
    "predates the check; correct the spec and run it as a new campaign)"
)


class _Process(ToolProcess):
    def __init__(self, node: str, argv: list[str]) -> None:
        self.node, self.argv, self.pid = node, argv, 4242

    def poll(self) -> int | None:
        return 0

    def wait(self, timeout_s: float) -> Finished:
        now = now_utc_ns()
        return Finished(0, PING if self.argv[0] == "ping" else "", "", now - 2 * 10**9, now)

    def kill(self) -> None:
        pass


class _Gate(Gate):
    def __init__(self) -> None:
        self.spawned = 0

    def release(self) -> list[int]:
        return [now_utc_ns()] * self.spawned

    def close(self) -> None:
        pass


class PingOnlyProvider(Provider):
    """Builds nothing; runs only ping (anything else would be a test failure)."""

    name = "local"

    def __init__(self) -> None:
        self.spawned: list[list[str]] = []

    def preflight(self, layout: Layout) -> list[str]:
        return []

    def build(self, layout: Layout, build_id: int, record: Any) -> None:
        pass

    def teardown(self) -> list[int]:
        return []

    def gate(self) -> Gate:
        self._gate = _Gate()
        return self._gate

    def spawn(self, node: str, argv: list[str], gate: Gate | None = None) -> ToolProcess:
        assert argv[0] == "ping", argv
        self.spawned.append(argv)
        if isinstance(gate, _Gate):
            gate.spawned += 1
        return _Process(node, argv)

    def wait_listening(self, proc: ToolProcess, port: int, proto: str, timeout_s: float) -> bool:
        return True


def _stored_before_the_checks(
    store: Store, campaign_id: str, environment: dict | None = None, tools: dict | None = None
) -> None:
    """An interrupted campaign of SPEC, stored before its tcp step's check existed."""
    store.create_campaign(
        id=campaign_id, name="old", status="interrupted", provider="local", spec_text=SPEC,
        spec_sha256="-", spec_source="c.yaml", seed=0, environment=environment or {},
        tool_versions={"ping": "20221126"} if tools is None else tools,
    )  # fmt: skip


def test_a_new_campaign_with_that_spec_is_refused_before_it_runs() -> None:
    with pytest.raises(SpecInvalid) as err:
        make_plan(parse_spec(SPEC, "c.yaml"), "00000000", 0)
    assert [str(e) for e in err.value.errors] == [REFUSED.removeprefix("not run: ").split(" (this")[0]]


def test_resume_stores_the_refused_steps_as_failed_and_runs_the_rest(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    db = tmp_path / "s.db"
    store = Store(db)
    _stored_before_the_checks(store, "cafe0001")
    plan = load_plan(store, "cafe0001")
    assert plan.refused == {(0, "tcp"): REFUSED}
    # measured before the run was interrupted: the first repetition's ping
    first = plan.steps[0]
    assert first.measurement == "ping"
    (flow,) = first.flows
    measured = MeasurementRecord(
        campaign_id="cafe0001", **first.record_fields(flow, plan.layouts[0]), kind="rtt",
        summary={"rtt_mean_ns": 123456.0},
    )  # fmt: skip
    store.save_measurements([measured])
    provider = PingOnlyProvider()
    monkeypatch.setattr("vnetbench.providers.registry.make_provider", lambda *_: provider)

    result = CliRunner().invoke(app, ["resume", "cafe0001", "--db", str(db), "--no-report"])

    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    assert result.exit_code == 1, result.stderr  # some measurements failed
    assert f"warning: measurement 'tcp' {REFUSED}; its steps are stored as failed, the rest runs\n" in (
        result.stderr
    )
    assert "1 measurements ok, 2 failed, 1 already in the store\n" in result.stderr
    assert f"  failed r001/p/tcp/vm1>vm2: {REFUSED}\n" in result.stderr
    assert len(provider.spawned) == 1  # the second repetition's ping; no iperf3
    frame = store.measurements_frame("cafe0001").set_index("key")
    assert store.campaign("cafe0001")["status"] == "finished"
    tcp = frame[frame["measurement"] == "tcp"]
    assert list(tcp["status"]) == ["failed", "failed"]
    assert set(tcp["reason"]) == {REFUSED}
    assert tcp["build_id"].isna().all()  # nothing was built for them
    ping = frame[frame["measurement"] == "ping"]
    assert list(ping["status"]) == ["ok", "ok"]
    assert ping.loc[measured.key, "rtt_mean_ns"] == 123456.0  # what was measured before is kept


def test_a_flow_the_driver_refuses_fails_alone_without_a_traceback(tmp_path: Path) -> None:
    # what the plan did not catch (here: the plan's list emptied) is a failed flow, not a dead campaign
    store = Store(tmp_path / "s.db")
    _stored_before_the_checks(store, "cafe0002", tools={})
    plan = load_plan(store, "cafe0002")
    plan.refused.clear()
    provider = PingOnlyProvider()
    summary = Runner(store, "cafe0002", plan, provider, {}, observers=[]).run(now_utc_ns())
    assert (summary.flows_ok, summary.flows_failed, summary.interrupted) == (2, 2, False)
    frame = store.measurements_frame("cafe0002")
    assert set(frame[frame["measurement"] == "tcp"]["reason"]) == {
        "not run: the iperf3 driver refused it: measurement 'tcp': duration 0 s: iperf3 3.12 takes whole "
        "seconds from 1 to 86400; use e.g. duration: 2s"
    }
    assert store.campaign("cafe0002")["status"] == "finished"


def test_a_second_resume_does_not_store_the_refused_steps_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # was: every resume added one more failed attempt of each refused step (2, 4, 6 … rows)
    db = tmp_path / "s.db"
    store = Store(db)
    _stored_before_the_checks(store, "cafe0003")
    monkeypatch.setattr("vnetbench.providers.registry.make_provider", lambda *_: PingOnlyProvider())
    said = []
    for _ in range(2):
        # as after a resume stopped (Ctrl-C) once the refused steps were stored: it can be resumed again
        store.update_campaign("cafe0003", status="interrupted")
        result = CliRunner().invoke(app, ["resume", "cafe0003", "--db", str(db), "--no-report"])
        assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
        assert result.exit_code == 1, result.stderr  # the campaign still has failed measurements
        said.append(
            [line for line in result.stderr.splitlines() if line.startswith(("2 ", "0 ", "  failed"))]
        )
    assert said[0] == ["2 measurements ok, 2 failed", f"  failed r001/p/tcp/vm1>vm2: {REFUSED}",
                       f"  failed r002/p/tcp/vm1>vm2: {REFUSED}"]  # fmt: skip
    assert said[1] == ["0 measurements ok, 2 failed, 2 already in the store", *said[0][1:]]
    every = store.measurements_frame("cafe0003", latest_only=False)
    tcp = every[every["measurement"] == "tcp"]
    assert (len(tcp), set(tcp["attempt"]), set(tcp["reason"])) == (2, {1}, {REFUSED})
    assert store.latest_failures("cafe0003") == dict.fromkeys(tcp["key"], REFUSED)
    assert store.campaign("cafe0003")["status"] == "finished"


def test_a_resume_on_another_machine_records_where_its_pid_is(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the pid a resume stores is this machine's: checked here, not on the machine that created it
    store = Store(tmp_path / "s.db")
    _stored_before_the_checks(store, "cafe0004", environment={"hostname": "lab-a", "kernel": "6.1"})
    seen = []
    provider = PingOnlyProvider()
    monkeypatch.setattr(provider, "build", lambda *_: seen.append(dict(store.campaign("cafe0004") or {})))
    Runner(store, "cafe0004", load_plan(store, "cafe0004"), provider, {}, observers=[]).run(now_utc_ns())
    here = os.uname().nodename
    with open(f"/proc/{os.getpid()}/stat") as f:  # field 22: this process's start, as clean compares it
        started = int(f.read().rsplit(")", 1)[1].split()[19])
    assert seen[0]["environment"] == {
        "hostname": "lab-a", "kernel": "6.1", "pid_hostname": here, "pid_start_ticks": started
    }  # fmt: skip
    assert (seen[0]["status"], seen[0]["pid"]) == ("running", os.getpid())
