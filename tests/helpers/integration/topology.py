"""The local provider's integration tests' topologies: real namespaces built from fixture YAML files.

Every test campaign id starts with "it", so its kernel objects are named vnbit…; `leftovers()` finds
anything of this session's campaigns (ISSUED: other sessions on a shared machine use "it" too), and
any child process or namespace fd of ours, still on the machine.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from pyroute2 import IPRoute

from tests.helpers.stores import campaign_store
from vnetbench.layout import Layout, build_layout, link_emulation
from vnetbench.providers.local import LocalProvider, cgroups, delaynode, kernel, runtime
from vnetbench.providers.local.netns import NETNS_DIR, netlink_socket
from vnetbench.providers.local.procs import package_of
from vnetbench.spec import load_spec
from vnetbench.store.db import Store

FIXTURES = Path(__file__).resolve().parents[2] / "integration" / "providers" / "fixtures"
TEST_PREFIX = "vnbit"
TOOL_NAMES = {"iperf3", "ping", "sleep", "sh", "ovs-vswitchd", "ovsdb-server", "python3"}


def need(*tools: str) -> None:
    for tool in tools:
        if shutil.which(tool) is None and not os.path.exists(f"/usr/sbin/{tool}"):
            pytest.skip(f"{tool} is not installed (apt-get install {package_of(tool)})")


ISSUED: set[str] = set()  # campaign ids of this session: the machine is shared, other sessions use "it" too


def new_campaign_id() -> str:
    cid = "it" + secrets.token_hex(3)
    ISSUED.add(cid)
    return cid


def _ours(name: str, prefix: str = "vnb") -> bool:
    return any(name.startswith(prefix + cid) for cid in ISSUED)


def load_layout(name: str, campaign_id: str) -> Layout:
    return build_layout(load_spec(FIXTURES / name).campaign, campaign_id)


def make_store(path: Path, campaign_id: str) -> Store:
    return campaign_store(path, campaign_id)


class Built:
    def __init__(self, provider: LocalProvider, layout: Layout, store: Store, build_id: int) -> None:
        self.provider, self.layout, self.store, self.build_id = provider, layout, store, build_id

    def ipr(self, ns: str):  # a pyroute2 IPRoute bound to our namespace, without forking
        sock = kernel.in_netns(self.provider.namespaces[ns].fd, netlink_socket)
        return IPRoute(fileno=sock.detach())


@contextlib.contextmanager
def built_topology(tmp: Path, fixture: str, tools: tuple[str, ...] = ()) -> Iterator[Built]:
    cid = new_campaign_id()
    layout = load_layout(fixture, cid)
    store = make_store(tmp / f"{cid}.db", cid)
    provider = LocalProvider(cid, store.location, tools=tools)
    build_id = store.start_build(cid, "t", {})
    try:
        provider.build(layout, build_id, lambda items: store.record_objects(cid, build_id, items))
        yield Built(provider, layout, store, build_id)
    finally:
        store.mark_removed(provider.teardown())
        store.close()


@contextlib.contextmanager
def seeded_delay_topology(tmp: Path, fixture: str, seed: int) -> Iterator[Built]:
    """A fixture topology whose delay nodes draw from `seed` (reproducible jitter and loss)."""
    need("ping")
    if delaynode.binary() is None:
        pytest.skip("vnb-probe is not built (pip install -e .)")
    command = link_emulation.command
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(link_emulation, "command", lambda node, binary: command(node, binary, seed=seed))
        with built_topology(tmp, fixture, ("ping",)) as built:
            mp.undo()
            yield built


def leftovers() -> list[str]:
    """Anything of our test campaigns still on the machine."""
    found = []
    if os.path.isdir(NETNS_DIR):
        found += [f"netns {n}" for n in os.listdir(NETNS_DIR) if _ours(n)]
    controller = cgroups.detect()
    if controller:
        for dirpath, dirnames, _ in os.walk(controller.root):
            found += [f"cgroup {dirpath}/{d}" for d in dirnames if _ours(d)]
    if os.path.isdir(runtime.RUN_ROOT):
        found += [f"rundir {n}" for n in os.listdir(runtime.RUN_ROOT) if _ours(n, "")]
    if os.path.isdir(runtime.ACTIVE_DIR):  # registry files, and half-written ones (NAME.tmpPID)
        found += [f"registry {n}" for n in os.listdir(runtime.ACTIVE_DIR) if n.split(".")[0] in ISSUED]
    me = str(os.getpid())
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/stat") as f:
                stat = f.read()
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                cmdline = f.read().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        comm = stat[stat.index("(") + 1 : stat.rindex(")")]
        fields = stat[stat.rindex(")") + 2 :].split()
        if fields[1] == me and fields[0] != "Z" and comm in TOOL_NAMES:
            found.append(f"child process {pid} {cmdline}")
        if any(f"/run/vnetbench/{cid}" in cmdline for cid in ISSUED):
            found.append(f"OVS process {pid} {cmdline}")
    for fd in os.listdir("/proc/self/fd"):
        with contextlib.suppress(OSError):
            if os.readlink(f"/proc/self/fd/{fd}").startswith("net:"):
                found.append(f"open namespace fd {fd}")
    return found
