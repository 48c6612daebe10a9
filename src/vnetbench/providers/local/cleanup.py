"""Remove what a killed local run left behind: processes, namespaces, cgroups, run directories.

Only rows the store records as ours and not yet removed are looked at, and each path is checked to
be one of ours (under /run/netns, /sys/fs/cgroup, /run/vnetbench, named vnb…) before anything is
touched. In order:
1. processes recorded with pid + start time (tools, OVS daemons): killed if both still match;
2. any process whose network namespace is one of our recorded namespaces (a tool's orphaned
   children), and any process in one of our recorded cgroups;
3. our namespaces: unmounted and unlinked (the kernel deletes their links);
4. our cgroups (their processes are gone by now), deepest first;
5. our runtime directory under /run/vnetbench.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import time
from collections.abc import Callable
from typing import Any, Protocol

from vnetbench.providers.local import cgroups, netns, procs, runtime

KILL_WAIT_S = 3.0
KINDS = ("process", "netns", "cgroup", "rundir")
Rows = dict[str, list[dict[str, Any]]]  # object kind -> its live rows


class Report(Protocol):
    removed: list[str]  # what was found and removed, one line each
    problems: list[str]  # what could not be removed, and why


def clean_local(by_kind: Rows, report: Report) -> list[int]:
    """Remove the local objects of these rows; returns the ids of the rows now done."""
    done: list[int] = []
    killed = _kill_recorded(by_kind.get("process", []), report, done)
    identities = _namespace_identities(by_kind.get("netns", []))
    killed += _kill_strays(identities, by_kind.get("cgroup", []), report)
    leftover = _wait_gone(killed)
    if leftover:
        report.problems.append(f"processes did not exit after SIGKILL: {leftover}")
    _remove_namespaces(by_kind.get("netns", []), report, done)
    _remove_cgroups(by_kind.get("cgroup", []), report, done)
    _remove_rundirs(by_kind.get("rundir", []), report, done)
    return done


def _kill_recorded(rows: list[dict[str, Any]], report: Report, done: list[int]) -> list[int]:
    """1. Recorded processes, by pid + start time."""
    killed: list[int] = []
    for row in rows:
        details = row["details"]
        pid, start = details.get("pid"), details.get("starttime")
        if pid and start is not None and procs.starttime(int(pid)) == int(start):
            comm = _comm(int(pid))
            if _kill(int(pid), group=True):
                killed.append(int(pid))
                report.removed.append(f"process {pid} ({comm}, {row['name']})")
        done.append(row["id"])
    return killed


def _namespace_identities(ns_rows: list[dict[str, Any]]) -> dict[tuple[int, int], str]:
    identities = {}
    for row in ns_rows:
        path = _safe_netns_path(row)
        ident = netns.identity(path) if path else None
        if ident:
            identities[ident] = row["name"]
    return identities


def _kill_strays(
    identities: dict[tuple[int, int], str], cg_rows: list[dict[str, Any]], report: Report
) -> list[int]:
    """2. Anything inside our namespaces or our cgroups."""
    killed: list[int] = []
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
    return killed


def _remove_namespaces(ns_rows: list[dict[str, Any]], report: Report, done: list[int]) -> None:
    """3. Our namespaces."""
    _remove_each(
        ns_rows,
        "netns",
        _safe_netns_path,
        netns.remove,
        lambda r, p: f"network namespace {r['name']}",
        report,
        done,
    )


def _remove_cgroups(cg_rows: list[dict[str, Any]], report: Report, done: list[int]) -> None:
    """4. Our cgroups, deepest first."""
    rows = sorted(cg_rows, key=lambda r: len(r["details"].get("path", "")), reverse=True)
    _remove_each(rows, "cgroup", _safe_cgroup_path, cgroups.remove, lambda r, p: f"cgroup {p}", report, done)


def _remove_rundirs(rows: list[dict[str, Any]], report: Report, done: list[int]) -> None:
    """5. Our runtime directories."""

    def remove(path: str) -> bool:
        if not os.path.exists(path):
            return False
        shutil.rmtree(path)
        return True

    _remove_each(rows, "rundir", _safe_rundir, remove, lambda r, p: f"runtime directory {p}", report, done)


def _remove_each(
    rows: list[dict[str, Any]],
    kind: str,
    safe_path: Callable[[dict[str, Any]], str | None],
    remove: Callable[[str], bool],
    name: Callable[[dict[str, Any], str], str],
    report: Report,
    done: list[int],
) -> None:
    """Remove each row's object if its path is one of ours (`remove` says whether anything was there);
    a row is done once its object is gone."""
    for row in rows:
        path = safe_path(row)
        if path is None:
            report.problems.append(f"{kind} row {row['id']} ({row['name']}): not a path of ours, left alone")
            continue
        try:
            if remove(path):
                report.removed.append(name(row, path))
            done.append(row["id"])
        except OSError as err:
            report.problems.append(f"{name(row, path)}: {err}")


def _comm(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/comm") as f:
            return f.read().strip()
    except OSError:
        return "?"


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


def _ns_of(pid: int) -> tuple[int, int]:
    try:
        st = os.stat(f"/proc/{pid}/ns/net")
        return (st.st_dev, st.st_ino)
    except OSError:
        return (0, 0)
