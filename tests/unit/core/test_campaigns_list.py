"""`vnetbench campaigns` on a campaign whose process was killed with SIGKILL: the store still says
'running' (nothing was left to record the end); the list says that its process is gone and how to
continue it, where the process ran on this machine."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from typer.testing import CliRunner

from tests.helpers.stores import campaign_store
from vnetbench.cli import app


def _dead_pid() -> int:
    child = subprocess.Popen(["true"])
    child.wait()
    return child.pid


def test_a_running_campaign_whose_process_is_gone_says_so(tmp_path: Path) -> None:
    db = tmp_path / "s.db"
    store = campaign_store(db, "dead0001")
    store.update_campaign("dead0001", pid=_dead_pid(), environment={"hostname": os.uname().nodename})
    live = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)", "vnetbench"])
    campaign_store(db, "live0001").update_campaign(
        "live0001", pid=live.pid, environment={"hostname": os.uname().nodename}
    )  # a vnetbench process that is still there
    campaign_store(db, "away0001").update_campaign(
        "away0001", pid=_dead_pid(), environment={"hostname": "another-machine"}
    )  # a store from elsewhere: its pid means nothing here
    try:
        _check_listing(db)
    finally:
        live.kill()
        live.wait()


def _check_listing(db: Path) -> None:
    res = CliRunner().invoke(app, ["campaigns", "--db", str(db)], env={"COLUMNS": "200"})
    assert res.exit_code == 0, res.output
    assert "running, process gone" in next(line for line in res.output.splitlines() if "dead0001" in line)
    assert f"`vnetbench resume dead0001 --db {db}` continues it" in res.output
    for other in ("live0001", "away0001"):
        line = next(line for line in res.output.splitlines() if other in line)
        assert "gone" not in line and "running" in line
    res = CliRunner().invoke(app, ["campaigns", "--db", str(db), "--json"])
    gone = {r["id"]: r["process_gone"] for r in json.loads(res.output)}
    assert gone == {"dead0001": True, "live0001": False, "away0001": False}
