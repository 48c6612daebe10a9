"""perfSONAR's rule: a node (and, on SSH, a host) is never in two throughput tests at once; RTT may overlap.

Inside one campaign the runner runs its steps one after another, so the rule matters between
campaigns measured at the same time (several specs under one monitor, or two monitors). Each
throughput step holds an exclusive flock(2) on a lock file per resource it loads, taken in sorted
order (no deadlock): the local machine for the local provider (every namespace shares its CPUs),
each physical host (or address) for SSH. The kernel drops a flock when its process dies, so a
SIGKILLed monitor never leaves a lock held.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import re
import tempfile
from collections.abc import Iterator

from vnetbench.plan import Step
from vnetbench.spec.models import Campaign

LOCK_DIR = "/run/vnetbench/locks"
# Latency probes load nothing: they may overlap each other and any throughput test.
OVERLAPPING_KINDS = frozenset({"rtt", "probe-rtt"})


def lock_dir() -> str:
    """/run/vnetbench/locks as root; a per-user directory otherwise (SSH campaigns need no root)."""
    if os.geteuid() == 0:
        return LOCK_DIR
    return os.path.join(tempfile.gettempdir(), f"vnetbench-locks-{os.geteuid()}")


def resources(campaign: Campaign, step: Step) -> list[str]:
    """The lock names a step must hold: none for RTT, else the machines its flows load."""
    if step.kind in OVERLAPPING_KINDS:
        return []
    inventory = campaign.inventory
    if inventory is None:
        return ["local"]
    names = set()
    for flow in step.flows:
        for node in (flow.src, flow.dst):
            host = inventory.host_of(node)
            names.add(f"ssh-{(host.physical_host or host.address) if host else node}")
    return sorted(names)


def _filename(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]", "_", name)[:200] + ".lock"


@contextlib.contextmanager
def holding(names: list[str], directory: str | None = None) -> Iterator[None]:
    """Hold an exclusive lock on every name (blocking until each is free); release on exit."""
    directory = directory or lock_dir()
    fds: list[int] = []
    try:
        if names:
            os.makedirs(directory, mode=0o755, exist_ok=True)
        for name in sorted(set(names)):
            fd = os.open(
                os.path.join(directory, _filename(name)), os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644
            )
            fds.append(fd)
            fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        for fd in reversed(fds):
            with contextlib.suppress(OSError):
                fcntl.flock(fd, fcntl.LOCK_UN)
            os.close(fd)
