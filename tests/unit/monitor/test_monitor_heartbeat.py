"""Two monitors on two hosts sharing a PostgreSQL store: the second is refused while the first one's
heartbeat is fresh, and takes the campaign over once it is stale. The check looked at local processes
only: a campaign monitored on another host (a pid that is no process here) was run by a second monitor
at once. Real monitor processes on a real PostgreSQL server; "another host" is its row as a monitor
there writes it (hostname, pid, heartbeat), since there is no second machine."""

from __future__ import annotations

import re
import signal
import socket
import subprocess
import time
from pathlib import Path

import pytest

from tests.helpers.cli import cli_quick
from tests.helpers.monitor_procs import (
    WAITING_SPEC,
    claim_as,
    monitored_row,
    start_monitor,
    stop,
    wait_for_state,
)
from tests.helpers.postgres import PostgresServer
from tests.helpers.timing import wait_until
from vnetbench.monitor.service import HEARTBEAT_S, HEARTBEAT_STALE_S, TAKEN_OVER

pytestmark = pytest.mark.slow(seconds=90)  # three monitors and a few heartbeats

OTHER_HOST, OTHER_PID = "vnb-test-elsewhere", 4242  # no host of this machine; a pid not checked here
CLAIM = ("state", "pid", "hostname", "updated_utc_ns", "message", "url", "next_run_utc_ns")


def _age_said(text: str, what: str) -> int:
    found = re.search(what, " ".join(text.split()))
    assert found, text
    return int(found.group(1))


def _heartbeat_goes_on_while_waiting(db: str, proc: subprocess.Popen[bytes], log: Path) -> None:
    first = wait_for_state(db, "waits", proc, "waiting", log)["updated_utc_ns"]
    beats = [first]
    for _ in range(2):  # two beats after the start, each within a few periods (a loaded machine)
        row = wait_until(
            lambda: monitored_row(db, "waits"),
            lambda r, last=beats[-1]: r is not None and r["updated_utc_ns"] > last,
            4 * HEARTBEAT_S,
            interval=0.5,
        )
        assert row is not None and row["updated_utc_ns"] > beats[-1], (row, log.read_text())
        assert (row["state"], row["pid"], row["hostname"]) == ("waiting", proc.pid, socket.gethostname())
        beats.append(row["updated_utc_ns"])
    # written every HEARTBEAT_S by the thread (its Event.wait never returns early): not more often
    assert beats[2] - beats[1] >= HEARTBEAT_S * 1e9 * 0.9, beats


def test_a_monitor_on_another_host_is_refused_while_its_heartbeat_is_fresh(
    tmp_path: Path, postgres: PostgresServer
) -> None:
    spec = tmp_path / "waits.yaml"
    spec.write_text(WAITING_SPEC)
    db = postgres.create_database()
    log = tmp_path / "monitor.log"
    procs: list[subprocess.Popen[bytes]] = []
    try:
        procs.append(start_monitor(spec, db, log=log))
        _heartbeat_goes_on_while_waiting(db, procs[-1], log)
        cid = monitored_row(db, "waits")["campaign_id"]  # type: ignore[index]
        assert stop(procs[-1]) == 0, log.read_text()

        # a monitor on another host, its last heartbeat 5 s ago: refused, naming host, pid and age
        beat = claim_as(db, cid, OTHER_HOST, OTHER_PID, heartbeat_age_s=5)
        started = time.monotonic()
        refused = cli_quick("monitor", str(spec), "--db", db, "--no-dashboard")
        took_s = time.monotonic() - started
        assert refused.returncode == 2, refused.stderr
        age = _age_said(refused.stderr, rf"on {OTHER_HOST}, whose heartbeat is (\d+) s old")
        assert 4 <= age <= 6 + took_s, refused.stderr
        wait_s = _age_said(refused.stderr, r"\(in (\d+) s\)")
        assert HEARTBEAT_STALE_S - age <= wait_s <= HEARTBEAT_STALE_S - age + 1, refused.stderr
        assert " ".join(refused.stderr.split()) == (
            f"error: campaign 'waits' ({cid}) is already monitored by process {OTHER_PID} on {OTHER_HOST}, "
            f"whose heartbeat is {age} s old (a running monitor writes it every {HEARTBEAT_S:.0f} s); stop it "
            f"there (kill {OTHER_PID} on {OTHER_HOST}), or, if {OTHER_HOST} is down, start this monitor again "
            f"once that heartbeat is older than {HEARTBEAT_STALE_S:.0f} s (in "
            f"{wait_s} s) to take the campaign over"
        )
        row = monitored_row(db, "waits")
        assert row is not None and (row["pid"], row["hostname"], row["updated_utc_ns"]) == (
            OTHER_PID,
            OTHER_HOST,
            beat,
        )  # the refused start wrote nothing

        # its heartbeat older than the limit: that host is taken to be down; this one takes over
        claim_as(db, cid, OTHER_HOST, OTHER_PID, heartbeat_age_s=HEARTBEAT_STALE_S + 10)
        procs.append(start_monitor(spec, db, log=log))
        row = wait_for_state(db, "waits", procs[-1], "waiting", log)
        assert (row["campaign_id"], row["hostname"]) == (cid, socket.gethostname())
        # the claim itself says 'waiting'; the monitor's next write adds its next run, which the row is
        # compared with below: read it once that is there (read between the two, it was None: a CI miss)
        before = wait_until(
            lambda: monitored_row(db, "waits"),
            lambda r: procs[-1].poll() is not None or (r is not None and r["next_run_utc_ns"] is not None),
            60,
            interval=0.2,
        )
        assert before is not None and before["next_run_utc_ns"] is not None, log.read_text()
        said = log.read_text()
        age = _age_said(said, rf"from process {OTHER_PID} on {OTHER_HOST}: its heartbeat is (\d+) s old")
        assert HEARTBEAT_STALE_S + 10 <= age <= HEARTBEAT_STALE_S + 60, said
        assert (
            f"monitor: taking over campaign 'waits' ({cid}) from process {OTHER_PID} on {OTHER_HOST}: its "
            f"heartbeat is {age} s old (older than {HEARTBEAT_STALE_S:.0f} s), so that monitor is taken to "
            "be gone"
        ) in " ".join(said.split())

        # taken over in turn (its beats did not reach the store): it went on, only warning, and its
        # later state writes landed on the new owner's row. Now its next heartbeat finds the row naming
        # another monitor: it stops with exit 4 (which the systemd unit does not restart into a fight
        # for the campaign) and writes nothing more
        beat = claim_as(db, cid, OTHER_HOST, OTHER_PID, heartbeat_age_s=0)
        code = procs[-1].wait(4 * HEARTBEAT_S)
        said = " ".join(log.read_text().split())
        assert code == TAKEN_OVER == 4, said
        assert (
            f"waits/{cid}: taken over: the store names process {OTHER_PID} on {OTHER_HOST} as this "
            f"campaign's monitor now (this monitor's heartbeat did not reach it for over "
            f"{HEARTBEAT_STALE_S:.0f} s: suspended, or cut off from the store); stopping without writing to "
            "the campaign again (exit 4): the steps stored stay stored, the new monitor finishes the run"
        ) in said, said
        row = monitored_row(db, "waits")
        assert row is not None and {k: row[k] for k in CLAIM} == {
            "state": "waiting",
            "pid": OTHER_PID,
            "hostname": OTHER_HOST,
            "updated_utc_ns": beat,
            "message": None,
            "url": None,
            "next_run_utc_ns": before["next_run_utc_ns"],
        }, row  # not 'stopped', not its pid: the row is the new owner's as it wrote it
    finally:
        for proc in procs:
            if proc.poll() is None:
                proc.send_signal(signal.SIGKILL)  # a SIGTERM's 'stopped' would be written over the claim
                proc.wait(10)
