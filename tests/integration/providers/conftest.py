"""Fixtures for the local provider's integration tests: real namespaces, real tools, root.

Every test campaign id starts with "it", so its kernel objects are named vnbit…; the session
check at the end asserts that none of this session's (ISSUED; other sessions on a shared machine use
"it" too), and no child process or namespace fd of ours, is left.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.requirements import missing
from tests.stores import campaign_store
from vnetbench.layout import Layout, build_layout
from vnetbench.providers.local import LocalProvider, cgroups, kernel, runtime
from vnetbench.providers.local.netns import NETNS_DIR, netlink_socket
from vnetbench.spec import load_spec
from vnetbench.store.db import Store

FIXTURES = Path(__file__).parent / "fixtures"
TEST_PREFIX = "vnbit"
TOOL_NAMES = {"iperf3", "ping", "sleep", "sh", "ovs-vswitchd", "ovsdb-server", "python3"}


SKIP = missing()
pytestmark = pytest.mark.root


def need(*tools: str) -> None:
    from vnetbench.providers.local.procs import package_of

    for tool in tools:
        if shutil.which(tool) is None and not os.path.exists(f"/usr/sbin/{tool}"):
            pytest.skip(f"{tool} is not installed (apt-get install {package_of(tool)})")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if SKIP is None:
        return
    here = str(Path(__file__).parent)
    for item in items:
        if str(item.fspath).startswith(here):
            item.add_marker(pytest.mark.skip(reason=SKIP))


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
        from pyroute2 import IPRoute

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
    from vnetbench import delaynodes
    from vnetbench.providers.local import delaynode

    need("ping")
    if delaynode.binary() is None:
        pytest.skip("vnb-probe is not built (pip install -e .)")
    command = delaynodes.command
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(delaynodes, "command", lambda node, binary: command(node, binary, seed=seed))
        with built_topology(tmp, fixture, ("ping",)) as built:
            mp.undo()
            yield built


@pytest.fixture(scope="module")
def every_link(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Built]:
    need("ovs-vswitchd", "ovsdb-server", "ovs-vsctl", "ovsdb-tool", "iperf3", "ping")
    with built_topology(tmp_path_factory.mktemp("every"), "every_link.yaml", ("iperf3", "ping")) as built:
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


@pytest.fixture(scope="session", autouse=True)
def nothing_left_behind() -> Iterator[None]:
    yield
    if SKIP is None:
        left = leftovers()
        assert not left, f"the integration tests left these behind: {left}"
