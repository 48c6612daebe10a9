"""The real `vnetbench` CLI in a subprocess, and what a campaign of it may have left on the machine."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pandas as pd

from tests.helpers.processes import command_lines
from vnetbench.analysis.cpu import cpu_frame, with_host_busy
from vnetbench.providers.local import cgroups, runtime
from vnetbench.providers.local.netns import NETNS_DIR
from vnetbench.store.db import Store


def cli_argv() -> list[str]:
    """The installed `vnetbench` entry point beside this interpreter, else `python -m vnetbench.cli`."""
    script = Path(sys.executable).parent / "vnetbench"
    return [str(script)] if script.exists() else [sys.executable, "-m", "vnetbench.cli"]


def vnb(*args: str, cwd: Path, timeout: float = 240) -> subprocess.CompletedProcess[str]:
    """Run the CLI to completion; its output is kept for the assertion messages."""
    return subprocess.run(
        [*cli_argv(), *args], cwd=cwd, capture_output=True, text=True, timeout=timeout, check=False
    )


def measurements_with_host_cpu(db: Path | str, campaign_id: str) -> pd.DataFrame:
    """The campaign's measurements (latest attempt per key) with the host's busy share of its CPUs
    during each (`host_busy_ratio`, from the campaign's telemetry as the report reads it; NaN where
    none was read)."""
    store = Store(db)
    try:
        frame = store.measurements_frame(campaign_id)
        return with_host_busy(frame, cpu_frame(store, campaign_id, frame))
    finally:
        store.close()


def only_campaign(db: Path | str) -> dict:
    store = Store(db)
    try:
        rows = store.campaigns()
        assert len(rows) == 1, f"expected one campaign in {db}, found {len(rows)}"
        return rows[0]
    finally:
        store.close()


def _alive(pid: int, starttime: int | None) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            stat = f.read()
    except OSError:
        return False
    fields = stat[stat.rindex(")") + 2 :].split()
    if fields[0] == "Z":
        return False
    return starttime is None or int(fields[19]) == int(starttime)


def leftovers(db: Path | str) -> list[str]:
    """Everything of the store's campaigns still on the machine, from the ownership records and by id."""
    store = Store(db)
    try:
        ids = [c["id"] for c in store.campaigns()]
        found = [f"object still live in the store: {o['kind']} {o['name']}" for o in store.live_objects()]
        for cid in ids:
            for o in store.table_frame("objects", cid).to_dict("records"):
                details = o["details"] or {}
                if o["kind"] == "process" and _alive(int(details["pid"]), details.get("starttime")):
                    found.append(f"process {details['pid']} {details.get('argv')}")
    finally:
        store.close()
    for cid in ids:
        prefix = f"vnb{cid}"
        if os.path.isdir(NETNS_DIR):
            found += [f"netns {n}" for n in os.listdir(NETNS_DIR) if n.startswith(prefix)]
        links = subprocess.run(["ip", "-o", "link"], capture_output=True, text=True, check=False).stdout
        found += [f"link {line.split(':')[1].strip()}" for line in links.splitlines() if prefix in line]
        controller = cgroups.detect()
        if controller:
            for dirpath, dirnames, _ in os.walk(controller.root):
                found += [f"cgroup {dirpath}/{d}" for d in dirnames if cid in d]
        if os.path.exists(runtime.rundir(cid)):
            found.append(f"rundir {runtime.rundir(cid)}")
        found += [f"registry {c}" for c, _ in runtime.active() if c == cid]
        for pid, cmdline in command_lines().items():
            if prefix in cmdline or runtime.rundir(cid) in cmdline:
                found.append(f"process {pid} {cmdline}")
    return found


@contextmanager
def ran_campaign(
    spec_text: str, tmp: Path, timeout: float = 240, db: str | None = None
) -> Iterator[tuple[Path | str, Path, subprocess.CompletedProcess[str]]]:
    """`vnetbench run` of a campaign file in tmp: (store, report directory, the finished process).
    The store is tmp/campaign.db unless `db` (a path or URL) is given. Afterwards nothing of it may be
    left on the machine (what is, is cleaned through its records)."""
    spec, report = tmp / "campaign.yaml", tmp / "report"
    store: Path | str = db if db is not None else tmp / "campaign.db"
    spec.write_text(spec_text)
    try:
        proc = vnb("run", str(spec), "--db", str(store), "--report", str(report), cwd=tmp, timeout=timeout)
        assert proc.returncode == 0, f"vnetbench run exited {proc.returncode}:\n{proc.stderr[-3000:]}"
        yield store, report, proc
    finally:
        left = leftovers(store) if "://" in str(store) or Path(store).exists() else []
        if left:
            clean_up(store, tmp)
    assert left == [], f"the campaign left these behind: {left}"


def clean_up(db: Path | str, cwd: Path) -> None:
    """Remove whatever a failed test left, through this store's records only (never a bare clean)."""
    if "://" in str(db) or Path(db).exists():
        vnb("clean", "--db", str(db), cwd=cwd, timeout=60)


def run_measurements(tmp: Path, name: str, text: str, timeout: float = 600) -> pd.DataFrame:
    """Run a campaign file through the CLI on a fresh SQLite store (no report) and return its
    measurements, latest attempt per key, with the host's CPU during each (measurements_with_host_cpu);
    asserts that it finished and left nothing behind."""
    tmp.mkdir(parents=True, exist_ok=True)
    spec, db = tmp / f"{name}.yaml", tmp / f"{name}.db"
    spec.write_text(text)
    try:
        proc = vnb("run", str(spec), "--db", str(db), "--no-report", cwd=tmp, timeout=timeout)
        assert proc.returncode == 0, f"vnetbench run exited {proc.returncode}:\n{proc.stderr[-3000:]}"
        frame = measurements_with_host_cpu(db, only_campaign(db)["id"])
    finally:
        left = leftovers(db) if db.exists() else []
        if left:
            clean_up(db, tmp)
    assert left == [], f"the campaign left these behind: {left}"
    return frame
