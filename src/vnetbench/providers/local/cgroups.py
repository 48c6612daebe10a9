"""CPU quotas through cgroups: v1's `cpu` controller (cfs_quota_us) or v2's cpu.max, whichever has cpu.

For each key of layout.cpu_quota: "host:h1" -> <root>/<host namespace name>, "node:vm1" ->
<root>/<host ns>/<node ns> when its host has a cgroup, else <root>/<node ns>. The names are the
layout's namespace names, so they carry vnb<campaign_id>.
cgroup v2 forbids processes in a cgroup whose children have controllers enabled, so there a host
that has node cgroups keeps its other processes in a leaf `<host>/<host ns>-rest`.
"""

from __future__ import annotations

import contextlib
import errno
import os
import time
from dataclasses import dataclass

from vnetbench.layout import Layout

PERIOD_US = 100_000


@dataclass(frozen=True)
class CpuController:
    version: int  # 1 or 2
    root: str  # mount point whose hierarchy has the cpu controller


def detect() -> CpuController | None:
    """The mounted hierarchy that has the cpu controller: v2 if its root offers cpu, else v1."""
    v1 = v2 = None
    try:
        with open("/proc/self/mounts") as f:
            mounts = [line.split() for line in f]
    except OSError:
        return None
    for fields in mounts:
        if len(fields) < 4:
            continue
        mnt, fstype, options = fields[1], fields[2], fields[3].split(",")
        if fstype == "cgroup2" and v2 is None:
            try:
                with open(os.path.join(mnt, "cgroup.controllers")) as f:
                    if "cpu" in f.read().split():
                        v2 = mnt
            except OSError:
                pass
        elif fstype == "cgroup" and "cpu" in options and v1 is None:
            v1 = mnt
    if v2:
        return CpuController(2, v2)
    if v1:
        return CpuController(1, v1)
    return None


@dataclass(frozen=True)
class Group:
    key: str  # "host:h1", "node:vm1", or "rest:h1" (v2 leaf)
    rel: str  # path below the controller's root
    quota: float | None  # fraction of a core; None for a leaf without its own quota


def plan_groups(layout: Layout, controller: CpuController) -> list[Group]:
    """Cgroups to create, parents first."""
    groups: list[Group] = []
    host_rel: dict[str, str] = {}
    for key, quota in layout.cpu_quota.items():
        kind, name = key.split(":", 1)
        if kind == "host":
            rel = layout.host_ns[name]
            host_rel[name] = rel
            groups.append(Group(key, rel, quota))
    nested_hosts = set()
    for key, quota in layout.cpu_quota.items():
        kind, name = key.split(":", 1)
        if kind == "node":
            host = layout.node_host[name]
            if host in host_rel:
                groups.append(Group(key, f"{host_rel[host]}/{layout.node_ns[name]}", quota))
                nested_hosts.add(host)
            else:
                groups.append(Group(key, layout.node_ns[name], quota))
    if controller.version == 2:
        for host in sorted(nested_hosts):
            groups.append(Group(f"rest:{host}", f"{host_rel[host]}/{layout.host_ns[host]}-rest", None))
    return groups


def group_for(layout: Layout, groups: list[Group], node: str | None, host: str) -> Group | None:
    """The cgroup a process joins: its node's, else its host's (or the host's leaf under v2)."""
    by_key = {g.key: g for g in groups}
    if node is not None and f"node:{node}" in by_key:
        return by_key[f"node:{node}"]
    return by_key.get(f"rest:{host}") or by_key.get(f"host:{host}")


def _write(path: str, value: str) -> None:
    with open(path, "w") as f:
        f.write(value)


def path_of(controller: CpuController, group: Group) -> str:
    """The directory of a cgroup under the controller's root."""
    return os.path.join(controller.root, group.rel)


def create(controller: CpuController, group: Group) -> str:
    """Create the cgroup and set its quota; returns its absolute path."""
    path = path_of(controller, group)
    if controller.version == 2:
        # Children get the cpu controller only if every ancestor enables it for its subtree.
        parent = os.path.dirname(path)
        chain = []
        while os.path.normpath(parent) != os.path.normpath(controller.root) and parent.startswith(
            controller.root
        ):
            chain.append(parent)
            parent = os.path.dirname(parent)
        for ancestor in [controller.root, *reversed(chain)]:
            control = os.path.join(ancestor, "cgroup.subtree_control")
            with open(control) as f:
                enabled = f.read().split()
            if "cpu" not in enabled:
                _write(control, "+cpu")
    os.mkdir(path)
    if group.quota is not None:
        quota_us = max(1000, round(group.quota * PERIOD_US))
        if controller.version == 2:
            _write(os.path.join(path, "cpu.max"), f"{quota_us} {PERIOD_US}")
        else:
            _write(os.path.join(path, "cpu.cfs_period_us"), str(PERIOD_US))
            _write(os.path.join(path, "cpu.cfs_quota_us"), str(quota_us))
    return path


def procs_file(path: str) -> str:
    return os.path.join(path, "cgroup.procs")


def pids(path: str) -> list[int]:
    """The pids in a cgroup ([] when it is gone)."""
    try:
        with open(procs_file(path)) as f:
            return [int(line) for line in f if line.strip()]
    except OSError:
        return []


def remove(path: str, wait_s: float = 2.0) -> bool:
    """rmdir the cgroup and any child cgroups (deepest first); retries while exiting tasks leave.

    Returns False if it was not there. Raises OSError if it stays busy.
    """
    if not os.path.isdir(path):
        return False
    children = []
    for dirpath, dirnames, _ in os.walk(path):
        children.extend(os.path.join(dirpath, d) for d in dirnames)
    deadline = time.monotonic() + wait_s
    for target in [*sorted(children, key=len, reverse=True), path]:
        while True:
            try:
                os.rmdir(target)
                break
            except FileNotFoundError:
                break
            except OSError as err:
                if err.errno != errno.EBUSY or time.monotonic() > deadline:
                    raise
                time.sleep(0.01)
    return True


def join(path: str, pid: int) -> None:
    """Move a process into a cgroup (a process that already exited is ignored)."""
    with contextlib.suppress(ProcessLookupError):
        _write(procs_file(path), str(pid))
