"""Remove what a killed run left behind — only objects the store records as ours and not yet removed.

Nothing is ever matched by a name pattern. In order:
1. processes recorded with pid + start time (tools, OVS daemons): killed if both still match;
2. any process whose network namespace is one of our recorded namespaces (a tool's orphaned
   children), and any process in one of our recorded cgroups;
3. our namespaces: unmounted and unlinked (the kernel deletes their links);
4. our cgroups (their processes are gone by now), deepest first;
5. our runtime directory under /run/vnetbench;
6. rows marked removed (also rows whose object had already disappeared), and the campaign's
   registry file /run/vnetbench/active/<id> once nothing of it is left.
A campaign whose controlling vnetbench process is still alive is left alone.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import time
from dataclasses import dataclass, field
from typing import Any

from vnetbench.providers.local import cgroups, netns, procs, runtime
from vnetbench.store.db import Store

KILL_WAIT_S = 3.0


@dataclass
class CleanReport:
    removed: list[str] = field(default_factory=list)  # what was found and removed, one line each
    problems: list[str] = field(default_factory=list)  # what could not be removed, and why
    ids: list[int] = field(default_factory=list)  # object rows marked removed
    skipped: list[str] = field(default_factory=list)  # campaigns left alone (still running)


def active_campaigns() -> list[tuple[str, str]]:
    """(campaign_id, store location) of every build registered as live on this machine."""
    return runtime.active()


def _comm(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/comm") as f:
            return f.read().strip()
    except OSError:
        return "?"


def _still_running(store: Store, campaign_id: str) -> int | None:
    """The pid of the campaign's controlling vnetbench process if it is alive (and not us)."""
    row = store.campaign(campaign_id)
    if not row or row.get("status") != "running" or not row.get("pid"):
        return None
    pid = int(row["pid"])
    if pid == os.getpid():
        return None
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            cmdline = f.read()
    except OSError:
        return None
    return pid if b"vnetbench" in cmdline else None


def _kill(pid: int, group: bool) -> bool:
    try:
        if group and os.getpgid(pid) == pid:
            os.killpg(pid, signal.SIGKILL)
        else:
            os.kill(pid, signal.SIGKILL)
        return True
    except (ProcessLookupError, PermissionError):
        return False


def _wait_gone(pids: list[int]) -> list[int]:
    """Wait until the pids have exited (reaping our own children); returns those still there."""
    deadline = time.monotonic() + KILL_WAIT_S
    left = list(pids)
    while left:
        for pid in list(left):
            with contextlib.suppress(ChildProcessError, OSError):
                os.waitpid(pid, os.WNOHANG)
            try:
                with open(f"/proc/{pid}/stat", "rb") as f:
                    zombie = f.read().rsplit(b")", 1)[-1].split()[0] == b"Z"
            except OSError:
                zombie = True
            if zombie:
                left.remove(pid)
        if not left or time.monotonic() > deadline:
            break
        time.sleep(0.01)
    return left


def _safe_netns_path(row: dict[str, Any]) -> str | None:
    name = row["name"]
    path = row["details"].get("path") or netns.path_of(name)
    if path != netns.path_of(name) or "/" in name or not name.startswith("vnb"):
        return None
    return path


def _safe_cgroup_path(row: dict[str, Any]) -> str | None:
    path = os.path.normpath(row["details"].get("path", ""))
    if not path.startswith("/sys/fs/cgroup/") or not os.path.basename(path).startswith("vnb"):
        return None
    return path


def _safe_rundir(row: dict[str, Any]) -> str | None:
    path = os.path.normpath(row["details"].get("path", row["name"]))
    if os.path.dirname(path) != runtime.RUN_ROOT or os.path.basename(path) in ("", "active"):
        return None
    return path


def clean(store: Store, campaign_id: str | None = None) -> CleanReport:
    report = CleanReport()
    rows = store.live_objects(campaign_id)
    campaigns = sorted({r["campaign_id"] for r in rows})
    for cid in campaigns:
        pid = _still_running(store, cid)
        if pid is not None:
            report.skipped.append(cid)
            report.problems.append(
                f"campaign {cid} is still running (vnetbench pid {pid}): stop it (Ctrl-C / kill {pid}), "
                "it tears its topology down itself"
            )
    rows = [r for r in rows if r["campaign_id"] not in report.skipped]
    by_kind: dict[str, list[dict[str, Any]]] = {}
    for row in rows:
        by_kind.setdefault(row["kind"], []).append(row)
    done: list[int] = []

    # 1. recorded processes, by pid + start time
    killed: list[int] = []
    for row in by_kind.get("process", []):
        details = row["details"]
        pid, start = details.get("pid"), details.get("starttime")
        if pid and start is not None and procs.starttime(int(pid)) == int(start):
            comm = _comm(int(pid))
            if _kill(int(pid), group=True):
                killed.append(int(pid))
                report.removed.append(f"process {pid} ({comm}, {row['name']})")
        done.append(row["id"])

    # 2. anything inside our namespaces or our cgroups
    ns_rows = by_kind.get("netns", [])
    identities = {}
    for row in ns_rows:
        path = _safe_netns_path(row)
        ident = netns.identity(path) if path else None
        if ident:
            identities[ident] = row["name"]
    cg_rows = by_kind.get("cgroup", [])
    for _ in range(3):
        strays = [
            (pid, f"in namespace {identities.get(_ns_of(pid), '?')}")
            for pid in netns.processes_in(set(identities))
        ]
        for row in cg_rows:
            path = _safe_cgroup_path(row)
            if path:
                for sub, _dirs, _files in os.walk(path):
                    strays += [(pid, f"in cgroup {row['name']}") for pid in cgroups.pids(sub)]
        strays = [(pid, where) for pid, where in strays if pid != os.getpid()]
        if not strays:
            break
        for pid, where in strays:
            comm = _comm(pid)
            if _kill(pid, group=False):
                killed.append(pid)
                report.removed.append(f"process {pid} ({comm}) {where}")
        _wait_gone([pid for pid, _ in strays])
    leftover = _wait_gone(killed)
    if leftover:
        report.problems.append(f"processes did not exit after SIGKILL: {leftover}")

    # 3. namespaces
    for row in ns_rows:
        path = _safe_netns_path(row)
        if path is None:
            report.problems.append(f"netns row {row['id']} ({row['name']}): not a path of ours, left alone")
            continue
        try:
            if netns.remove(path):
                report.removed.append(f"network namespace {row['name']}")
            done.append(row["id"])
        except OSError as err:
            report.problems.append(f"network namespace {row['name']}: {err}")

    # 4. cgroups, deepest first
    for row in sorted(cg_rows, key=lambda r: len(r["details"].get("path", "")), reverse=True):
        path = _safe_cgroup_path(row)
        if path is None:
            report.problems.append(f"cgroup row {row['id']} ({row['name']}): not a path of ours, left alone")
            continue
        try:
            if cgroups.remove(path):
                report.removed.append(f"cgroup {path}")
            done.append(row["id"])
        except OSError as err:
            report.problems.append(f"cgroup {path}: {err}")

    # 5. runtime directories
    for row in by_kind.get("rundir", []):
        path = _safe_rundir(row)
        if path is None:
            report.problems.append(f"rundir row {row['id']} ({row['name']}): not a path of ours, left alone")
            continue
        try:
            if os.path.exists(path):
                shutil.rmtree(path)
                report.removed.append(f"runtime directory {path}")
            done.append(row["id"])
        except OSError as err:
            report.problems.append(f"runtime directory {path}: {err}")

    # 6. processes and run directories on remote hosts (SSH provider)
    remote_rows = [r for kind in ("ssh-process", "ssh-rundir") for r in by_kind.get(kind, [])]
    if remote_rows:
        from vnetbench.providers.ssh.cleanup import clean_remote

        gone, trouble, ids = clean_remote(store, remote_rows)
        report.removed += gone
        report.problems += trouble
        done += ids

    # Kinds this version does not know are left for a version that does.
    for kind, kind_rows in by_kind.items():
        if kind not in ("process", "netns", "cgroup", "rundir", "ssh-process", "ssh-rundir"):
            report.problems.append(f"{len(kind_rows)} objects of unknown kind {kind!r} left alone")

    store.mark_removed(done)
    report.ids = done
    for cid in campaigns:
        if cid not in report.skipped and not store.live_objects(cid):
            with contextlib.suppress(OSError, ValueError):
                runtime.unmark_active(cid)
    if campaign_id is not None and campaign_id not in campaigns and not store.live_objects(campaign_id):
        with contextlib.suppress(OSError, ValueError):
            runtime.unmark_active(campaign_id)
    return report


def _ns_of(pid: int) -> tuple[int, int]:
    try:
        st = os.stat(f"/proc/{pid}/ns/net")
        return (st.st_dev, st.st_ino)
    except OSError:
        return (0, 0)
