"""Real `vnetbench monitor` processes that wait for a far-off slot (nothing is built or measured), for
tests of how a monitor starts, restarts and refuses: start one, wait for its stored state, stop it."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

from tests.helpers.timing import wait_until
from vnetbench.store.db import Store
from vnetbench.store.monitoring import MonitorStore

# Two nodes, RTT only; the next slot is next 1 January (cron, UTC): a monitor started on it waits.
WAITING_SPEC = """\
name: waits
topology:
  nodes: [{name: a}, {name: b}]
  links: [{name: ab, endpoints: [a, b], rate: 100mbit}]
measurements:
  - {name: rtt, kind: rtt, count: 3}
patterns:
  - {name: p, kind: pairs, pairs: [[a, b]], measurements: [rtt]}
monitor: {cron: "0 0 1 1 *"}
"""


def monitor_env(extra: dict[str, str] | None = None) -> dict[str, str]:
    return {"PATH": "/usr/bin:/bin", "COLUMNS": "250", "PYTHONPATH": ":".join(sys.path), **(extra or {})}


def start_monitor(
    spec: Path, db: str, *args: str, log: Path, extra_env: dict[str, str] | None = None
) -> subprocess.Popen[bytes]:
    """`vnetbench monitor SPEC --db DB --no-dashboard ARGS` in the background, its output in `log`."""
    with log.open("a") as out:
        return subprocess.Popen(
            [
                sys.executable,
                "-m",
                "vnetbench.cli",
                "monitor",
                str(spec),
                "--db",
                db,
                "--no-dashboard",
                *args,
            ],
            stdout=out,
            stderr=subprocess.STDOUT,
            env=monitor_env(extra_env),
            cwd=spec.parent,
        )


def monitored_row(db: str, name: str) -> dict[str, Any] | None:
    """The monitored_campaigns row of the newest campaign named `name`, with its spec row's text."""
    store = Store(db)
    try:
        mstore = MonitorStore(store)
        cid = mstore.find(name)
        if cid is None:
            return None
        row = mstore.monitored(cid)
        campaign = store.campaign(cid)
        assert row is not None and campaign is not None
        return {**row, "campaign_spec_text": campaign["spec_text"]}
    finally:
        store.close()


def wait_for_state(
    db: str, name: str, proc: subprocess.Popen[bytes], state: str, log: Path, timeout_s: float = 60
) -> dict[str, Any]:
    """The campaign's row once `proc` has set `state` in it (the test fails if it exits first)."""
    row = wait_until(
        lambda: monitored_row(db, name),
        lambda r: proc.poll() is not None or (r is not None and r["state"] == state and r["pid"] == proc.pid),
        timeout_s,
        interval=0.2,
    )
    assert row is not None and row["state"] == state and row["pid"] == proc.pid, (row, log.read_text())
    return row


def stop(proc: subprocess.Popen[bytes], timeout_s: float = 60) -> int:
    """SIGTERM (the monitor's clean stop) and its exit code; SIGKILL if it is still there after that."""
    if proc.poll() is None:
        os.kill(proc.pid, signal.SIGTERM)
    try:
        return proc.wait(timeout_s)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(10)
        raise


def claim_as(db: str, campaign_id: str, host: str, pid: int, heartbeat_age_s: float) -> int:
    """Write the campaign's monitor row as a monitor on `host` writes it: waiting, its pid and host, its
    heartbeat `heartbeat_age_s` old. Returns the heartbeat written (ns)."""
    from sqlalchemy import update

    from vnetbench.store import schema as t
    from vnetbench.store.records import now_utc_ns

    beat = now_utc_ns() - int(heartbeat_age_s * 1e9)
    store = Store(db)
    try:
        with store.engine.begin() as conn:
            conn.execute(
                update(t.monitored_campaigns)
                .where(t.monitored_campaigns.c.campaign_id == campaign_id)
                .values(state="waiting", pid=pid, hostname=host, updated_utc_ns=beat, url=None, message=None)
            )
    finally:
        store.close()
    return beat
