"""Remove what a killed run left behind — only objects the store records as ours and not yet removed.

Nothing is ever matched by a name pattern. A campaign whose controlling process is still
alive is left alone. Local objects (processes, namespaces, cgroups, run directories) are the local
provider's to remove (providers/local/cleanup.py), remote ones the SSH provider's
(providers/ssh/cleanup.py). Rows are then marked removed (also rows whose object had already
disappeared), and a campaign's registry file /run/vnetbench/active/<id> is removed once nothing of
it is left.
"""

from __future__ import annotations

import contextlib
import os
from dataclasses import dataclass, field
from typing import Any

from vnetbench.providers.local import runtime
from vnetbench.providers.local.cleanup import KINDS as LOCAL_KINDS
from vnetbench.providers.local.cleanup import clean_local
from vnetbench.providers.local.procs import starttime
from vnetbench.providers.ssh.cleanup import KINDS as REMOTE_KINDS
from vnetbench.providers.ssh.cleanup import clean_remote
from vnetbench.store.db import Store


@dataclass
class CleanReport:
    removed: list[str] = field(default_factory=list)  # what was found and removed, one line each
    problems: list[str] = field(default_factory=list)  # what could not be removed, and why
    ids: list[int] = field(default_factory=list)  # object rows marked removed
    skipped: list[str] = field(default_factory=list)  # campaigns left alone (still running)


def active_campaigns() -> list[tuple[str, str]]:
    """(campaign_id, store location) of every build registered as live on this machine."""
    return runtime.active()


def pid_host(row: dict[str, Any]) -> str | None:
    """The machine whose process the campaign's `pid` is: the one that last started running it (a
    resume on another machine records itself as `pid_hostname`), else the one that created it; None
    for a row that names none (written before hostnames were recorded)."""
    env = row.get("environment") or {}
    return env.get("pid_hostname") or env.get("hostname")


def running_elsewhere(row: dict[str, Any]) -> tuple[str, int] | None:
    """(host, pid) of a campaign stored as running by a process (vnetbench, a script using the API) on
    another machine (a shared store): whether it still runs cannot be known from here; None otherwise."""
    host = pid_host(row)
    if row.get("status") != "running" or not row.get("pid") or host in (None, os.uname().nodename):
        return None
    return str(host), int(row["pid"])


def still_running(store: Store, campaign_id: str) -> int | None:
    """The pid of the campaign's controlling process if it is alive on this machine (and not us).
    None too for a campaign run from another machine, whose pid means nothing here (it could be a
    local vnetbench's): callers ask `running_elsewhere` about it."""
    row = store.campaign(campaign_id)
    if not row or row.get("status") != "running" or not row.get("pid") or running_elsewhere(row):
        return None
    pid = int(row["pid"])
    if pid == os.getpid():
        return None
    started = (row.get("environment") or {}).get("pid_start_ticks")
    if started is not None:  # the process that recorded itself, whatever its command line (a script, pytest)
        return pid if starttime(pid) == started else None
    try:  # rows written before the start time was recorded: a vnetbench command line, as then
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            cmdline = f.read()
    except OSError:
        return None
    return pid if b"vnetbench" in cmdline else None


def process_gone(store: Store, row: dict[str, Any]) -> bool:
    """A campaign stored as 'running' whose controlling process, started on this machine, no longer
    exists (killed with SIGKILL, or the machine rebooted): nothing is left that could set its end."""
    on_this_machine = pid_host(row) == os.uname().nodename
    running = row.get("status") == "running" and bool(row.get("pid"))
    return running and on_this_machine and still_running(store, row["id"]) is None


def elsewhere_message(row: dict[str, Any], host: str, pid: int, command: str) -> str:
    """Why `command` (resume, clean) leaves a campaign run from another machine alone, and what to do."""
    return (
        f"campaign {row['id']} ({row['name']}) is stored as running on {host} (its controlling process, pid "
        f"{pid}), not on this machine ({os.uname().nodename}): whether it still runs cannot be checked from "
        f"here; run `vnetbench {command}` on {host}, which checks that process (no option overrides this "
        "check here)"
    )


def clean(store: Store, campaign_id: str | None = None) -> CleanReport:
    """Remove every live object of one campaign (or of all campaigns in the store) that is ours."""
    report = CleanReport()
    rows = store.live_objects(campaign_id)
    campaigns = sorted({r["campaign_id"] for r in rows})
    stored = {cid: store.campaign(cid) or {"id": cid, "name": "?"} for cid in campaigns}
    for cid, row in stored.items():
        if elsewhere := running_elsewhere(row):  # its pid means nothing here: its objects are left alone
            report.skipped.append(cid)
            report.problems.append(
                elsewhere_message(row, *elsewhere, f"clean --campaign {cid} --db {store.location}")
            )
            continue
        pid = still_running(store, cid)
        if pid is not None:
            report.skipped.append(cid)
            report.problems.append(
                f"campaign {cid} is still running (its controlling process, pid {pid}): stop it "
                f"(Ctrl-C / kill {pid}), it tears its topology down itself"
            )
    rows = [r for r in rows if r["campaign_id"] not in report.skipped]
    rows = _leave_other_machines_local_objects(store, stored, rows, report)
    by_kind: dict[str, list[dict[str, Any]]] = {}
    for row in rows:
        by_kind.setdefault(row["kind"], []).append(row)
    done = clean_local(by_kind, report)
    remote_rows = [r for kind in REMOTE_KINDS for r in by_kind.get(kind, [])]
    if remote_rows:
        gone, trouble, ids = clean_remote(store, remote_rows)
        report.removed += gone
        report.problems += trouble
        done += ids
    # Kinds this version does not know are left for a version that does.
    for kind, kind_rows in by_kind.items():
        if kind not in (*LOCAL_KINDS, *REMOTE_KINDS):
            report.problems.append(f"{len(kind_rows)} objects of unknown kind {kind!r} left alone")
    store.mark_removed(done)
    report.ids = done
    _unmark(store, campaigns, campaign_id, report)
    return report


def _leave_other_machines_local_objects(
    store: Store, stored: dict[str, dict[str, Any]], rows: list[dict[str, Any]], report: CleanReport
) -> list[dict[str, Any]]:
    """Rows without the local objects (namespaces, processes, cgroups) another machine made (a shared
    store): they are on that machine, and here they would be found missing and marked removed, so
    that machine's own clean would never see them. Remote objects stay: reachable from anywhere."""
    here = os.uname().nodename
    kept, elsewhere = [], {}  # elsewhere: (campaign, machine) -> how many of its local objects are there
    for row in rows:
        machine = made_on(row, stored[row["campaign_id"]])
        if row["kind"] in LOCAL_KINDS and machine not in (None, here):
            key = (row["campaign_id"], machine)
            elsewhere[key] = elsewhere.get(key, 0) + 1
        else:
            kept.append(row)
    for (cid, machine), left in sorted(elsewhere.items()):
        if cid not in report.skipped:
            report.skipped.append(cid)
        report.problems.append(
            f"campaign {cid}: {left} local objects (namespaces, processes, cgroups) were made on {machine}, "
            f"not on this machine ({here}), and are there; run `vnetbench clean --campaign {cid} "
            f"--db {store.location}` on {machine}"
        )
    return kept


def made_on(row: dict[str, Any], campaign: dict[str, Any]) -> str | None:
    """The machine an object was made on: the one its row names (recorded since objects carry it),
    else the campaign's process's (rows written before that); None when neither is known."""
    return (row.get("details") or {}).get("machine") or pid_host(campaign)


def _unmark(store: Store, campaigns: list[str], campaign_id: str | None, report: CleanReport) -> None:
    """Drop the registry file of every campaign that has nothing left."""
    for cid in campaigns:
        if cid not in report.skipped and not store.live_objects(cid):
            with contextlib.suppress(OSError, ValueError):
                runtime.unmark_active(cid)
    if campaign_id is not None and campaign_id not in campaigns and not store.live_objects(campaign_id):
        with contextlib.suppress(OSError, ValueError):
            runtime.unmark_active(campaign_id)
    # a run killed while registering, before it made anything, left only mark_active's temporary
    ids = {campaign_id} if campaign_id is not None else {str(c["id"]) for c in store.campaigns()}
    with contextlib.suppress(OSError):
        for name in runtime.remove_stale_temporaries(ids):
            report.removed.append(f"registry temporary {runtime.ACTIVE_DIR}/{name} (its writer is gone)")
