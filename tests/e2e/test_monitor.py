"""`vnetbench monitor` end to end, on SQLite and on PostgreSQL (a real server from tests/helpers/postgres.py):
a 2 s repeat killed with SIGKILL after its 3rd run and started again ends with exactly 5 runs; an alert
fires once per episode at a webhook receiver on 127.0.0.1; /metrics and /health show the store; SIGTERM
exits 0 and leaves nothing behind; a PostgreSQL restart during a campaign loses nothing."""

from __future__ import annotations

import itertools
import json
import os
import signal
import subprocess
import time
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from prometheus_client.parser import text_string_to_metric_families

from tests.helpers.http import WebhookReceiver, http_get
from tests.helpers.integration.cli import cli_argv, leftovers, vnb
from tests.helpers.postgres import PostgresServer
from tests.helpers.specs import FOUR_NODE_STAR
from tests.helpers.timing import wait_until
from vnetbench.store.db import Store
from vnetbench.store.monitoring import MonitorStore

pytestmark = [pytest.mark.root, pytest.mark.slow(seconds=110)]

SPEC = """\
name: e2e-monitor
topology:
  nodes: [{name: a}, {name: b}]
  links:
    - {endpoints: [a, b], rate: 100mbit}
measurements:
  - {name: rtt, kind: rtt, count: 3, interval: 0.1s}
  - {name: tcp, kind: tcp, duration: 1s}
patterns:
  - {name: p, kind: pairs, pairs: [[a, b]], measurements: [rtt, tcp]}
monitor:
  repeat: PT2S
"""
# always true on a real path (RTT > 1 ns): one episode that never clears; never true: RTT > 1 h
ALERTS = """\
alerts:
  - {name: rtt-seen, measurement: rtt, metric: rtt_mean_ns, op: ">", threshold: 1ns, for_runs: 2}
  - {name: rtt-hour, measurement: rtt, metric: rtt_mean_ns, op: ">", threshold: 1h, severity: critical}
"""
KEYS_PER_RUN = 2


def wait_for(
    condition: Callable[[], Any], timeout_s: float, what: str, proc: subprocess.Popen | None = None
) -> Any:
    """Poll condition() until it is truthy (returning it); fail early if the monitor exits meanwhile."""
    exited, value = wait_until(
        lambda: (None if proc is None else proc.poll(), condition()),
        lambda seen: bool(seen[1]) or seen[0] is not None,
        timeout_s,
        interval=0.2,
    )
    assert value, f"{what}: not within {timeout_s} s" + (
        f" (the monitor exited {exited})" if exited is not None else ""
    )
    return value


def runs(db: str, name: str = "e2e-monitor") -> list[dict]:
    store = Store(db)
    try:
        cid = MonitorStore(store).find(name)
        return MonitorStore(store).runs(cid) if cid else []
    finally:
        store.close()


def finished_runs(db: str, status: str = "ok") -> int:
    return sum(r["status"] == status for r in runs(db))


def start_monitor(spec: Path, db: str, *extra: str, log: Path) -> subprocess.Popen:
    return subprocess.Popen(
        [*cli_argv(), "monitor", str(spec), "--db", db, *extra],
        cwd=spec.parent,
        stdout=log.open("a"),
        stderr=subprocess.STDOUT,
        start_new_session=True,  # its own process group, killed whole
    )


def stop_and_clean(procs: list[subprocess.Popen], db: str, cwd: Path) -> list[str]:
    """SIGKILL the monitors still running; return what they left behind (then remove it, by the store)."""
    for proc in procs:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(10)
    left = leftovers(db)
    if left:
        vnb("clean", "--db", db, cwd=cwd, timeout=60)
    return left


@pytest.fixture
def monitored(tmp_path: Path, store_url: str) -> Iterator[tuple[Path, str, list[subprocess.Popen]]]:
    """A spec file, a store (SQLite or PostgreSQL) and a list of monitors to stop and clean up after."""
    procs: list[subprocess.Popen] = []
    yield tmp_path, store_url, procs
    left = stop_and_clean(procs, store_url, tmp_path)
    assert left == [], f"left behind: {left}"


def _log(tmp: Path) -> str:
    return (tmp / "monitor.log").read_text()[-4000:]


def test_sigkill_after_the_third_run_and_a_restart_end_with_exactly_five_runs(monitored) -> None:
    tmp, db, procs = monitored
    spec = tmp / "mon.yaml"
    spec.write_text(SPEC)
    log = tmp / "monitor.log"
    first = start_monitor(spec, db, "--max-runs", "5", "--no-dashboard", log=log)
    procs.append(first)
    wait_for(lambda: finished_runs(db) >= 3, 120, "3 runs stored", first)
    os.killpg(first.pid, signal.SIGKILL)
    first.wait(10)
    assert first.returncode == -signal.SIGKILL
    killed_at = runs(db)
    assert 3 <= len([r for r in killed_at if r["status"] == "ok"]) <= 4, killed_at

    second = start_monitor(spec, db, "--max-runs", "5", "--no-dashboard", log=log)
    procs.append(second)
    assert second.wait(180) == 0, _log(tmp)
    assert "continuing campaign e2e-monitor" in _log(tmp)

    done = runs(db)
    assert [r["run"] for r in done] == [1, 2, 3, 4, 5], done
    assert {r["status"] for r in done} == {"ok"}, done
    assert all(r["steps_done"] == r["steps_total"] == KEYS_PER_RUN for r in done), done
    store = Store(db)
    try:
        assert len(store.campaigns()) == 1  # one campaign: the runs are its repetitions
        cid = store.campaigns()[0]["id"]
        frame = store.measurements_frame(cid, latest_only=False)
    finally:
        store.close()
    ok = frame[frame["status"] == "ok"]
    counts = Counter(ok["key"])
    assert len(counts) == 5 * KEYS_PER_RUN and set(counts.values()) == {1}, counts
    assert sorted(set(ok["repetition"])) == [1, 2, 3, 4, 5]
    assert sorted(Counter(ok["repetition"]).values()) == [KEYS_PER_RUN] * 5
    # runs before the kill kept their measurements as they were
    before = {r["run"]: r["started_utc_ns"] for r in killed_at if r["status"] == "ok"}
    assert {r["run"]: r["started_utc_ns"] for r in done if r["run"] in before} == before


def test_alert_fires_once_per_episode_metrics_health_and_sigterm(monitored) -> None:
    tmp, db, procs = monitored
    spec = tmp / "mon.yaml"
    spec.write_text(SPEC + ALERTS)
    receiver = WebhookReceiver()
    try:
        proc = start_monitor(spec, db, "--webhook", receiver.url, "--port", "0", log=tmp / "monitor.log")
        procs.append(proc)
        wait_for(lambda: finished_runs(db) >= 4, 120, "4 runs stored", proc)
        store = Store(db)
        mstore = MonitorStore(store)
        cid = mstore.find("e2e-monitor")
        base = mstore.monitored(cid)["url"]

        # the episode opened at run 2 (for_runs: 2) and stays open: exactly one message, whatever came after
        wait_for(lambda: receiver.bodies, 30, "the webhook message")
        assert len(receiver.bodies) == 1, receiver.bodies
        message = receiver.bodies[0]
        assert message["status"] == "firing" and message["alert"] == "rtt-seen"
        assert (message["src"], message["dst"], message["measurement"]) == ("a", "b", "rtt")
        assert message["opened_run"] == 2 and message["value"] > 1
        episodes = mstore.episodes(cid)
        assert [(e["rule"], e["opened_run"], e["closed_run"]) for e in episodes] == [("rtt-seen", 2, None)]

        status, text = http_get(f"{base}/metrics")
        assert status == 200
        families = {f.name: f for f in text_string_to_metric_families(text)}
        latest = store.measurements_frame(cid)
        newest = latest[latest["measurement"] == "rtt"].sort_values("repetition").iloc[-1]
        rtt = [s for s in families["vnetbench_rtt_mean_ns"].samples if s.labels["campaign_id"] == cid]
        # the scrape and the frame may straddle a run: the scraped value is one of the stored runs'
        stored = set(latest.loc[latest["measurement"] == "rtt", "rtt_mean_ns"]) | {newest["rtt_mean_ns"]}
        assert len(rtt) == 1 and rtt[0].labels["src"] == "a" and rtt[0].labels["dst"] == "b"
        assert rtt[0].value in stored
        by_status = {
            s.labels["status"]: s.value
            for s in families["vnetbench_monitor_runs"].samples
            if s.name.endswith("_total")
        }
        assert by_status["ok"] >= 4
        success = families["vnetbench_monitor_last_success_timestamp_seconds"].samples[0].value
        assert abs(success - time.time()) < 120  # a run ended within the last two minutes (wide: load)
        firing = {s.labels["severity"]: s.value for s in families["vnetbench_monitor_alerts_firing"].samples}
        assert firing == {"warning": 1, "critical": 0}

        status, text = http_get(f"{base}/health")
        health = json.loads(text)
        assert status == 200 and health["status"] == "warning", health
        assert [a["rule"] for a in health["alerts_firing"]] == ["rtt-seen"]
        status, text = http_get(f"{base}/api/alerts")
        assert status == 200 and [e["rule"] for e in json.loads(text)] == ["rtt-seen"]
        store.close()

        proc.send_signal(signal.SIGTERM)
        assert proc.wait(60) == 0, _log(tmp)
        assert len(receiver.bodies) == 1, receiver.bodies  # still one: the episode never ended
    finally:
        receiver.close()
    state = runs(db)
    assert state and state[-1]["status"] in ("ok", "interrupted")
    store = Store(db)
    try:
        stopped = MonitorStore(store).monitored(cid)
        assert stopped["state"] == "stopped"
        assert stopped["url"] is None  # the address of a server that is gone is not kept
    finally:
        store.close()


def test_a_postgresql_restart_during_a_campaign_loses_no_measurement(
    tmp_path: Path, postgres: PostgresServer
) -> None:
    db = postgres.create_database()
    spec = tmp_path / "mon.yaml"
    spec.write_text(SPEC.replace("duration: 1s", "duration: 3s"))
    log = tmp_path / "monitor.log"
    proc = start_monitor(spec, db, "--max-runs", "3", "--no-dashboard", log=log)
    try:
        # restart while run 2 measures (its row says running, its TCP step is in flight)
        wait_for(
            lambda: any(r["run"] == 2 and r["status"] == "running" for r in runs(db)), 120, "run 2", proc
        )
        postgres.restart()
        assert proc.wait(240) == 0, log.read_text()[-4000:]
    finally:
        left = stop_and_clean([proc], db, tmp_path)
    assert left == [], left
    done = runs(db)
    assert [(r["run"], r["status"]) for r in done] == [(1, "ok"), (2, "ok"), (3, "ok")], done
    store = Store(db)
    try:
        frame = store.measurements_frame(store.campaigns()[0]["id"], latest_only=False)
    finally:
        store.close()
    ok = frame[frame["status"] == "ok"]
    assert len(ok) == 3 * KEYS_PER_RUN and ok["key"].is_unique, ok[["key", "status"]]


def test_two_campaigns_never_run_throughput_tests_at_once_and_sigterm_stops_both(
    tmp_path: Path, store_url: str
) -> None:
    """perfSONAR's rule across campaigns: two specs under one monitor (two writers to one store), each a
    1 s TCP test every second; their TCP tests take turns (the local machine is one throughput resource),
    their RTT probes need not."""
    db = store_url
    names = ("mon-a", "mon-b")
    for name in names:
        (tmp_path / f"{name}.yaml").write_text(SPEC.replace("e2e-monitor", name).replace("PT2S", "PT1S"))
    proc = subprocess.Popen(
        [*cli_argv(), "monitor", *(str(tmp_path / f"{n}.yaml") for n in names), "--db", db, "--no-dashboard"],
        cwd=tmp_path,
        stdout=(tmp_path / "monitor.log").open("w"),
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )

    def ok_runs() -> dict[str, int]:
        store = Store(db)
        try:
            mstore = MonitorStore(store)
            return {n: sum(r["status"] == "ok" for r in mstore.runs(mstore.find(n) or "-")) for n in names}
        finally:
            store.close()

    try:
        wait_for(lambda: min(ok_runs().values()) >= 3, 180, "3 runs of each campaign", proc)
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(60) == 0, _log(tmp_path)
    finally:
        left = stop_and_clean([proc], db, tmp_path)
    assert left == [], left
    store = Store(db)
    try:
        frames = [store.measurements_frame(c["id"]) for c in store.campaigns()]
        states = [MonitorStore(store).monitored(c["id"])["state"] for c in store.campaigns()]
    finally:
        store.close()
    assert len(frames) == 2 and states == ["stopped", "stopped"]
    tcp = sorted(
        (int(r.started_utc_ns), int(r.started_utc_ns + r.duration_ns), r.campaign_id)
        for f in frames
        for r in f[(f["measurement"] == "tcp") & (f["status"] == "ok")].itertuples()
    )
    assert len({c for _, _, c in tcp}) == 2 and len(tcp) >= 6
    overlaps = [(a, b) for a, b in itertools.pairwise(tcp) if b[0] < a[1]]
    assert overlaps == [], f"TCP tests of {len(overlaps)} pairs ran at the same time: {overlaps}"


def test_sigterm_during_a_step_abandons_it_cleanly_and_the_next_start_finishes_that_run(
    tmp_path: Path,
) -> None:
    db = str(tmp_path / "term.db")
    spec = tmp_path / "mon.yaml"
    spec.write_text(SPEC.replace("duration: 1s", "duration: 4s"))
    log = tmp_path / "monitor.log"
    proc = start_monitor(spec, db, "--max-runs", "2", "--no-dashboard", log=log)
    procs = [proc]
    try:
        # run 1's RTT step is stored and its 4 s TCP step is in flight
        wait_for(
            lambda: any(r["run"] == 1 and r["steps_done"] == 1 for r in runs(db)),
            120,
            "run 1's first step",
            proc,
        )
        time.sleep(1.0)  # well inside the TCP test (4 s): the step is abandoned, not finished
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(60) == 0, _log(tmp_path)
        assert leftovers(db) == []  # it tore down what it built before exiting
        assert [(r["run"], r["status"], r["steps_done"]) for r in runs(db)] == [(1, "interrupted", 1)]

        procs.append(start_monitor(spec, db, "--max-runs", "2", "--no-dashboard", log=log))
        assert procs[-1].wait(180) == 0, _log(tmp_path)
    finally:
        left = stop_and_clean(procs, db, tmp_path)
    assert left == [], left
    assert [(r["run"], r["status"], r["steps_done"]) for r in runs(db)] == [(1, "ok", 2), (2, "ok", 2)]
    store = Store(db)
    try:
        frame = store.measurements_frame(store.campaigns()[0]["id"], latest_only=False)
    finally:
        store.close()
    assert sorted(frame.loc[frame["status"] == "ok", "key"]) == [
        "r001/p/rtt/a>b",
        "r001/p/tcp/a>b",
        "r002/p/rtt/a>b",
        "r002/p/tcp/a>b",
    ]


# Every measurement kind, each one step (pps: one sweep point; bg beside it; cpushare on one node):
# 7 steps a run. Its alert rule names a metric udp can produce: refused otherwise (check_monitorable).
EVERY_KIND = (
    (
        "name: e2e-every-kind\n" + FOUR_NODE_STAR.replace(", cpu: 0.5", "")  # no node held to half a core
    )
    + """\
measurements:
  - {name: rtt, kind: rtt, count: 3, interval: 0.1s}
  - {name: prtt, kind: probe-rtt, count: 5, interval: 10ms}
  - {name: tcp, kind: tcp, duration: 1s}
  - {name: udp, kind: udp, duration: 1s, rate: 10mbit}
  - {name: tr, kind: trace, rate: 10mbit, duration: 1s, bin: 10ms}
  - {name: sweep, kind: pps, rates: [1000], sizes: [1472], duration: 1s}
  - {name: bg, kind: background, pps: 1000, size: 64, pairs: [[c, d]]}
  - {name: cpu, kind: cpushare, duration: 1s}
patterns:
  - {name: p, kind: pairs, pairs: [[a, b]], measurements: [rtt, prtt, tcp, udp, tr]}
  - {name: pb, kind: pairs, pairs: [[a, b]], measurements: [sweep], background: [bg]}
  - {name: n, kind: nodes, nodes: [a], measurements: [cpu]}
monitor: {repeat: PT1S}
alerts:
  - {name: lossy, measurement: udp, metric: loss_ratio, op: ">", threshold: 50%}
"""
)
STEPS_PER_RUN = 7


def _campaign_answers(url: str, proc: subprocess.Popen, timeout_s: float) -> list[dict]:
    """/api/campaigns' entry of the campaign every 0.3 s while the monitor runs (until it exits)."""
    seen: list[dict] = []
    deadline = time.monotonic() + timeout_s
    while proc.poll() is None and time.monotonic() < deadline:
        _, text = http_get(f"{url}/api/campaigns")
        seen.extend(c for c in json.loads(text)["campaigns"] if c["monitor_run"] is not None)
        time.sleep(0.3)
    return seen


def test_a_monitored_campaigns_progress_is_its_runs_and_every_kind_stores_only_listed_metrics(
    tmp_path: Path,
) -> None:
    """/api/campaigns gave steps_done over every run against one run's steps_total (6 of 2 after 3
    runs); now the newest run's steps_done of its steps_total, with runs and steps_stored beside them.
    And what a real run stores is within each kind's summary_metrics (what alert rules are checked
    against before the first run)."""
    from tests.helpers.browser import chromium_page, missing_browser
    from tests.helpers.dashboard_server import serving
    from vnetbench.dashboard import create_app
    from vnetbench.kinds import kind_of
    from vnetbench.spec.loader import parse_spec

    db = str(tmp_path / "kinds.db")
    spec = tmp_path / "mon.yaml"
    spec.write_text(EVERY_KIND)
    proc = start_monitor(spec, db, "--max-runs", "2", "--no-dashboard", log=tmp_path / "monitor.log")
    try:
        wait_for(lambda: os.path.exists(db) and runs(db, "e2e-every-kind"), 60, "run 1 recorded", proc)
        with serving(create_app(db)) as url:
            during = _campaign_answers(url, proc, 240)
            assert proc.wait(60) == 0, _log(tmp_path)
            (final,) = json.loads(http_get(f"{url}/api/campaigns")[1])["campaigns"]
            if missing_browser() is None:
                with chromium_page(tmp_path / "chromium") as page:
                    page.goto(url)
                    text = page.locator("#campaigns .progress-text")
                    text.wait_for(timeout=30_000)
                    assert text.inner_text() == "run 2: 7 / 7 · 14 steps stored in 2 runs"
                    width = page.locator("#campaigns .progress .fill").evaluate("e => e.style.width")
                    assert float(width.removesuffix("%")) == 100.0, width  # a full bar: run 2 is whole
    finally:
        left = stop_and_clean([proc], db, tmp_path)
    assert left == [], left
    # 2 runs of 7 steps, every one stored: the newest run's 7 of 7, 14 steps over the 2 runs
    assert (final["status"], final["steps_done"], final["steps_total"]) == ("finished", 7, 7), final
    assert (final["runs"], final["steps_stored"], final["monitor_run"]["run"]) == (2, 14, 2), final
    # while it ran: never more done than planned for a run, the stored steps those of the runs so far
    assert {c["runs"] for c in during} == {1, 2}, during
    for c in during:
        assert c["steps_total"] == STEPS_PER_RUN and 0 <= c["steps_done"] <= STEPS_PER_RUN, c
        assert (c["runs"] - 1) * STEPS_PER_RUN <= c["steps_stored"] <= c["runs"] * STEPS_PER_RUN, c
    progress = [(c["runs"], c["steps_done"]) for c in during]
    assert progress == sorted(progress), progress  # it only goes forward

    kinds = {m.name: m.kind for m in parse_spec(EVERY_KIND, "mon.yaml").campaign.measurements}
    store = Store(db)
    try:
        mstore = MonitorStore(store)
        cid = mstore.find("e2e-every-kind")
        stored = [mstore.run_metrics(cid, run, valued=False) for run in (1, 2)]  # NULLs too: names
    finally:
        store.close()
    for metrics in stored:
        assert set(metrics) == set(kinds), metrics  # every measurement stored an ok result
        for name, names in metrics.items():
            extra = names - kind_of(kinds[name]).stored_metrics()
            assert not extra, f"{name} ({kinds[name]}) stored metrics its kind does not list: {extra}"


def test_a_monitor_taken_over_during_a_step_abandons_it_tears_down_and_exits_4(tmp_path: Path) -> None:
    """A monitor taken over by another host (its heartbeat was stale: here the row is rewritten as that
    host writes it) went on measuring and wrote its run's end and state over the new owner's. Now its
    heartbeat (every HEARTBEAT_S) finds the row naming the other monitor: the 30 s TCP step in flight
    is abandoned, nothing more is stored (neither that step nor the run's end, nor the campaign row's
    status and pid as its run ended), what it built is torn down, and it exits 4."""
    from tests.helpers.monitor_procs import claim_as
    from vnetbench.monitor.service import HEARTBEAT_S, TAKEN_OVER

    db = str(tmp_path / "taken.db")
    spec = tmp_path / "mon.yaml"
    spec.write_text(SPEC.replace("duration: 1s", "duration: 30s"))
    log = tmp_path / "monitor.log"
    procs = [start_monitor(spec, db, "--no-dashboard", log=log)]
    try:
        # run 1's RTT step is stored and its TCP step is in flight
        wait_for(lambda: any(r["steps_done"] == 1 for r in runs(db)), 120, "run 1's first step", procs[0])
        store = Store(db)
        cid = store.campaigns()[0]["id"]
        stored = sorted(store.measurements_frame(cid, latest_only=False)["key"])
        store.close()
        store = Store(db)  # the new owner's run has started: the campaign row names it
        store.update_campaign(cid, status="running", pid=4242)
        store.close()
        beat = claim_as(db, cid, "vnb-test-elsewhere", 4242, heartbeat_age_s=0)
        assert procs[0].wait(3 * HEARTBEAT_S) == TAKEN_OVER == 4, _log(tmp_path)
        assert leftovers(db) == []  # it tore down what it built before exiting
        assert "taken over: the store names process 4242 on vnb-test-elsewhere" in " ".join(
            _log(tmp_path).split()
        )
    finally:
        left = stop_and_clean(procs, db, tmp_path)
    assert left == [], left
    # the run is as the new owner found it (its to finish), the TCP step unstored, the claim untouched
    assert [(r["run"], r["status"], r["steps_done"]) for r in runs(db)] == [(1, "running", 1)]
    store = Store(db)
    try:
        assert stored == ["r001/p/rtt/a>b"]
        assert sorted(store.measurements_frame(cid, latest_only=False)["key"]) == stored
        row = MonitorStore(store).monitored(cid)
        campaign = store.campaign(cid)
    finally:
        store.close()
    # its run's end did not mark the new owner's campaign interrupted with no pid
    assert campaign is not None and (campaign["status"], campaign["pid"]) == ("running", 4242)
    assert row is not None and (row["state"], row["pid"], row["hostname"], row["updated_utc_ns"]) == (
        "waiting",
        4242,
        "vnb-test-elsewhere",
        beat,
    )
