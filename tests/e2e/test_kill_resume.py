"""kill -9 of `vnetbench run` mid-campaign, then `vnetbench clean --db`, then `vnetbench resume --db`:
every planned measurement ends up in the store exactly once and nothing of ours is left behind —
on SQLite and on PostgreSQL (the `store_url` fixture)."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from collections import Counter
from pathlib import Path

import pytest

from tests.helpers.integration.cli import clean_up, cli_argv, leftovers, only_campaign, vnb
from vnetbench.run.campaign import load_plan
from vnetbench.store.db import Store

pytestmark = [pytest.mark.root, pytest.mark.slow(seconds=65)]

SPEC = """\
name: e2e-kill
topology:
  nodes: [{name: a}, {name: b}, {name: c}]
  switches: [{name: sw, kind: linux-bridge}]
  links:
    - {endpoints: [a, sw], rate: 100mbit}
    - {endpoints: [b, sw], rate: 100mbit}
    - {endpoints: [c, sw], rate: 100mbit}
measurements:
  - {name: tcp, kind: tcp, duration: 1s}
  - {name: rtt, kind: rtt, count: 5, interval: 0.1s}
patterns:
  - {name: pairs, kind: pairs, pairs: [[a, b], [a, c]], measurements: [tcp, rtt]}
  - {name: star, kind: star, source: a, destinations: [b, c], alone: false, measurements: [tcp]}
schedule:
  repetitions: 3
"""


def _ok_rows(db: str) -> list[tuple[int, str]]:
    store = Store(db)
    try:
        rows = [store.table_frame("measurements", c["id"]) for c in store.campaigns()]
    finally:
        store.close()
    return [(int(r.id), r.key) for frame in rows for r in frame.itertuples() if r.status == "ok"]


def _wait_for_commits(db: str, proc: subprocess.Popen, at_least: int, timeout_s: float) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        assert proc.poll() is None, f"vnetbench run ended early ({proc.returncode})"
        if len(_ok_rows(db)) >= at_least:
            return
        time.sleep(0.2)
    raise AssertionError(f"fewer than {at_least} measurements committed after {timeout_s} s")


def test_kill_9_clean_resume_stores_every_planned_measurement_once(tmp_path: Path, store_url: str) -> None:
    spec, db = tmp_path / "kill.yaml", store_url
    spec.write_text(SPEC)
    log = (tmp_path / "run.log").open("w")
    proc = subprocess.Popen(
        [*cli_argv(), "run", str(spec), "--db", str(db), "--no-report"],
        cwd=tmp_path,
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,  # its own process group, killed whole below
    )
    try:
        _wait_for_commits(db, proc, at_least=3, timeout_s=90)
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(10)
        assert proc.returncode == -signal.SIGKILL
        before = dict(_ok_rows(db))  # id -> key, committed before the kill
        campaign = only_campaign(db)
        assert campaign["status"] == "running"  # killed: it never got to say otherwise
        left = leftovers(db)
        assert any(item.startswith("netns") for item in left), f"killed mid-run, yet nothing was left: {left}"

        cleaned = vnb("clean", "--db", str(db), cwd=tmp_path, timeout=60)
        assert cleaned.returncode == 0, cleaned.stderr
        assert "objects removed" in cleaned.stdout
        assert leftovers(db) == []

        resumed = vnb("resume", "--db", str(db), "--no-report", cwd=tmp_path, timeout=180)
        assert resumed.returncode == 0, resumed.stderr[-3000:]
        assert f"{len(before)} already in the store" in resumed.stderr
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(10)
        log.close()
        left = leftovers(db)
        if left:
            clean_up(db, tmp_path)
    assert left == [], f"left behind after resume: {left}"

    store = Store(db)
    try:
        cid = only_campaign(db)["id"]
        planned = [f.key for step in load_plan(store, cid).steps for f in step.flows]
        assert store.campaign(cid)["status"] == "finished"
    finally:
        store.close()
    assert len(planned) == 18 and len(set(planned)) == 18
    after = _ok_rows(db)
    counts = Counter(key for _, key in after)
    assert set(counts) == set(planned), (
        f"missing {set(planned) - set(counts)}, extra {set(counts) - set(planned)}"
    )
    assert all(n == 1 for n in counts.values()), {k: n for k, n in counts.items() if n != 1}
    # what was committed before the kill was kept as it was, not measured again
    assert {mid: key for mid, key in after if mid in before} == before
