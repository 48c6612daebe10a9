"""Our paths under /run: per-campaign runtime directories and the registry of live builds.

/run/vnetbench/<campaign_id>/          runtime files (userspace OVS databases, sockets, logs)
/run/vnetbench/active/<campaign_id>    the store location, while a build of that campaign is live,
                                       so `vnetbench clean` without --db finds what a killed run left.
/run/vnetbench/active/<id>.tmp<pid>    that file while it is written (renamed at once; a SIGKILL can
                                       leave it: removed once its writer is gone)
"""

from __future__ import annotations

import contextlib
import os
import re
from pathlib import Path

from vnetbench.providers.local import signals

RUN_ROOT = "/run/vnetbench"
ACTIVE_DIR = f"{RUN_ROOT}/active"
CAMPAIGN_ID = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
TEMPORARY = re.compile(r"^(?P<id>[A-Za-z0-9_-]{1,64})\.tmp(?P<pid>[0-9]{1,7})$")  # pids < 2^22 (pid_max)


def rundir(campaign_id: str) -> str:
    """The campaign's runtime directory under /run/vnetbench."""
    _check(campaign_id)
    return f"{RUN_ROOT}/{campaign_id}"


def _check(campaign_id: str) -> None:
    if not CAMPAIGN_ID.match(campaign_id) or campaign_id == "active":
        raise ValueError(f"not a campaign id: {campaign_id!r}")


def store_location(location: str) -> str:
    """An absolute path for a SQLite file (the registry is read from another working directory)."""
    return location if "://" in location else str(Path(location).expanduser().resolve())


def mark_active(campaign_id: str, location: str) -> str:
    """Register the campaign's build as live on this machine (its store location); returns the file."""
    _check(campaign_id)
    os.makedirs(ACTIVE_DIR, exist_ok=True)
    path = f"{ACTIVE_DIR}/{campaign_id}"
    tmp = f"{path}.tmp{os.getpid()}"
    # One piece: an interrupt between writing and renaming would leave the temporary file behind.
    with signals.deferred():
        with open(tmp, "w") as f:
            f.write(store_location(location) + "\n")
        os.replace(tmp, path)
    return path


def unmark_active(campaign_id: str) -> bool:
    """Remove the campaign's registry file, and a temporary of it whose writer is gone; False when
    there was no registry file."""
    _check(campaign_id)
    remove_stale_temporaries({campaign_id})
    try:
        os.unlink(f"{ACTIVE_DIR}/{campaign_id}")
        return True
    except FileNotFoundError:
        return False


def remove_stale_temporaries(campaign_ids: set[str]) -> list[str]:
    """Delete these campaigns' registry temporaries (`ID.tmpPID`) whose writer no longer runs: a
    SIGKILL between mark_active's write and its rename leaves one (signals it can defer, it does).
    Returns their names. A live writer's is left: it is about to rename it."""
    removed = []
    with contextlib.suppress(FileNotFoundError):
        for name in sorted(os.listdir(ACTIVE_DIR)):
            found = TEMPORARY.match(name)
            if found and found["id"] in campaign_ids and not _running(int(found["pid"])):
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(f"{ACTIVE_DIR}/{name}")
                    removed.append(name)
    return removed


def _running(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's: running
        return True
    return True


def active() -> list[tuple[str, str]]:
    """(campaign_id, store location) of every build registered as live."""
    out = []
    with contextlib.suppress(FileNotFoundError):
        for name in sorted(os.listdir(ACTIVE_DIR)):
            if not CAMPAIGN_ID.match(name):
                continue
            try:
                with open(f"{ACTIVE_DIR}/{name}") as f:
                    location = f.read().strip()
            except OSError:
                continue
            if location:
                out.append((name, location))
    return out
