"""The local provider: a laid-out topology as network namespaces on this machine.

build: preflight -> registry file -> record namespaces -> create them (netns.py) -> two rounds of
batched netlink requests per namespace (links.py, shaping.py) -> TX checksum offload off where the
layout says (offload.py) -> cgroups with CPU quotas (cgroups.py) -> userspace OVS per host that has
an OVS switch (ovs.py). Every object is recorded before it is created; a process right after its
fork, with pid + start time (a gated child cannot have exec'd yet then; an ungated one may already
run, which is still kill-safe).

teardown: kill our processes (tools, then OVS daemons, then anything else still inside our
namespaces), unmount + unlink the namespaces (the kernel deletes their links), remove cgroups and
the runtime directory, unregister. Idempotent, re-entrant, raises nothing of its own: what it
could not remove stays recorded as live for `vnetbench clean`. Returns every id removed since the
last build, on every call.
"""

from __future__ import annotations

import contextlib
import gc
import logging
import os
import platform
import shutil
import signal
import threading
import time
from collections import defaultdict
from collections.abc import Iterator, Sequence
from typing import Any

from vnetbench.layout import Layout
from vnetbench.layout import link_emulation as emulation
from vnetbench.providers.base import Gate, NamespaceAccess, Provider, ProviderError, Recorder, ToolProcess
from vnetbench.providers.local import (
    cgroups,
    delaynode,
    features,
    limits,
    links,
    netns,
    netshaping,
    offload,
    procs,
    runtime,
    signals,
)
from vnetbench.providers.local.netlink import Batch
from vnetbench.providers.local.ovs import OvsInstance
from vnetbench.providers.local.preflight import problems as preflight_problems

log = logging.getLogger("vnetbench.providers.local")
LISTEN_POLL_S = 0.002


class LocalProvider(Provider, NamespaceAccess):
    name = "local"

    def __init__(
        self,
        campaign_id: str,
        store_location: str | None = None,
        tools: Sequence[str] = ("iperf3", "ping"),
    ) -> None:
        self.campaign_id = campaign_id
        self.store_location = store_location
        self.tools = tuple(tools)
        self._lock = threading.RLock()
        # Ids of the objects removed since the last build. teardown() returns all of them, every
        # time: a return value lost to an interrupt is returned again by the next call (marking a
        # row removed twice is harmless). The next build() starts a new list.
        self._removed: list[int] = []
        self.link_emulation: dict[str, str] = {}  # link -> "netem" | "delay-node" (provenance)
        # delay node namespace -> its JSON report at teardown, with "link" and "sides" added
        self.delay_reports: dict[str, Any] = {}
        self._reset()

    def _reset(self) -> None:
        self.layout: Layout | None = None
        self.build_id: int | None = None
        self._record: Recorder | None = None
        self.namespaces: dict[str, netns.Namespace] = {}
        self._ns_ids: dict[str, int] = {}
        self._controller: cgroups.CpuController | None = None
        self._groups: list[cgroups.Group] = []
        self._cgroup_paths: dict[str, str] = {}  # group key -> absolute path (created)
        self._cgroup_ids: dict[str, int] = {}
        self._ovs: dict[str, OvsInstance] = {}
        self._rundir: str | None = None
        self._rundir_id: int | None = None
        self._procs: list[procs.LocalToolProcess] = []
        self._active = False
        # delay node namespace -> (its process, the link, which end of the link is on each side)
        self._delay_procs: dict[str, procs.LocalToolProcess] = {}
        self._delay_nodes: dict[str, tuple[str, dict[str, str]]] = {}

    # ------------------------------------------------------------------ checks

    def preflight(self, layout: Layout) -> list[str]:
        realised, choice = self._realise(layout)
        return preflight_problems(realised, self.tools, choice)

    def _realise(self, layout: Layout) -> tuple[Layout, dict[str, str]]:
        """Splice in delay nodes where netem is missing or not wanted (see layout/link_emulation.py)."""
        has_netem = os.geteuid() == 0 and features.probe().has("netem")
        realised, choice = emulation.realise(layout, has_netem)
        return realised, dict(choice)

    def environment(self) -> dict[str, Any]:
        uname = platform.uname()
        found = features.probe() if os.geteuid() == 0 else None
        controller = cgroups.detect()
        return {
            "kernel_release": uname.release,
            "kernel_version": uname.version,
            "kernel_features": dict(found.kinds) if found else None,
            "cgroup_cpu": f"v{controller.version}:{controller.root}" if controller else None,
            "ovs_datapath": "netdev (userspace)",
            "link_emulation": dict(self.link_emulation),
        }

    # ------------------------------------------------------------------ build

    def build(self, layout: Layout, build_id: int, record: Recorder) -> None:
        with self._lock:
            if self.layout is not None:
                raise ProviderError("a topology is already built; tear it down first")
            found = self.preflight(layout)
            if found:
                raise ProviderError("\n".join(found))
            layout, self.link_emulation = self._realise(layout)
            self.delay_reports = {}
            self._removed = []
            self.layout, self.build_id, self._record = layout, build_id, record
            try:
                with _no_cyclic_gc():
                    self._build(layout, record)
            except BaseException:
                self.teardown()  # what it removed is returned again by the caller's teardown()
                raise

    def _build(self, layout: Layout, record: Recorder) -> None:
        if self.store_location:
            self._active = True  # set first: an interrupt must not leave the file unknown
            runtime.mark_active(self.campaign_id, self.store_location)
        self._build_namespaces(layout, record)
        self._build_links(layout)

        by_ns: dict[str, list[str]] = defaultdict(list)
        for iface in layout.interfaces():
            if iface.tx_offload_off:
                by_ns[iface.ns].append(iface.name)
        for name, ifnames in by_ns.items():
            offload.tx_checksum_off(self.namespaces[name].fd, name, ifnames)

        if layout.cpu_quota:
            self._build_cgroups(layout, record)

        ovs_bridges = [br for br in layout.bridges if br.kind == "ovs"]
        if ovs_bridges:
            self._build_ovs(layout, record, ovs_bridges)

        for node in layout.delay_nodes:
            binary = delaynode.binary()
            if binary is None:
                raise ProviderError("vnb-probe is not installed: `pip install .` builds and ships it")
            argv = emulation.command(node, binary)
            proc = self._spawn(node.ns, f"delay:{node.link}", argv, None, None, "delay-node")
            # keyed by namespace: a link between hosts has a node at each end (two per link)
            self._delay_procs[node.ns] = proc
            self._delay_nodes[node.ns] = (node.link, emulation.sides(layout, node))
            delaynode.wait_ready(proc, node.link)

    def _build_namespaces(self, layout: Layout, record: Recorder) -> None:
        names = list(layout.namespaces)
        before, after = limits.raise_descriptor_limit(len(names))
        if after != before:
            log.info(
                "open descriptors: soft limit raised from %d to %d for %d namespaces",
                before,
                after,
                len(names),
            )
        # Recorded and remembered in one piece: an interrupt between the two would leave rows that
        # teardown() can never report as removed.
        with signals.deferred():
            ids = record(
                [("netns", n, {"path": netns.path_of(n), "role": layout.namespaces[n]}) for n in names]
            )
            self._ns_ids = dict(zip(names, ids, strict=True))
        try:
            netns.create(names, lambda ns: self.namespaces.__setitem__(ns.name, ns))
        except FileExistsError as err:
            raise ProviderError(
                f"network namespace {err.filename} already exists (left by a killed run?): "
                f"run `vnetbench clean`, or remove it with `ip netns delete`"
            ) from err
        except OSError as err:
            raise ProviderError(f"could not create network namespaces: {err}") from err

    def _build_links(self, layout: Layout) -> None:
        """Two rounds of netlink batches per namespace (links, then what needs both ends)."""
        plans = links.plan_requests(layout, {n: ns.fd for n, ns in self.namespaces.items()})
        for round_name in ("round1", "round2"):
            for name, plan in plans.items():
                nl = self.namespaces[name].nl
                assert nl is not None  # open from creation until the build is done with it
                batch = Batch(name, nl)
                batch.extend(getattr(plan, round_name))
                batch.commit()
        # behind a shaper that forwards, its peer receives in a queue of its own (netshaping.py)
        for end, peer in netshaping.own_receive_queue(layout):
            for iface, flag, on in ((end, offload.TSO, False), (peer, offload.GRO, True)):
                nl = self.namespaces[iface.ns].nl
                assert nl is not None
                offload.set_flag(nl, iface.ns, iface.name, flag, on)
        for ns in self.namespaces.values():
            ns.close_netlink()

    def _build_cgroups(self, layout: Layout, record: Recorder) -> None:
        controller = cgroups.detect()
        if controller is None:
            raise ProviderError("CPU quotas need the cgroup cpu controller, which is not mounted")
        self._controller = controller
        self._groups = cgroups.plan_groups(layout, controller)
        items = [
            (
                "cgroup",
                g.rel,
                {
                    "path": os.path.join(controller.root, g.rel),
                    "version": controller.version,
                    "key": g.key,
                    "quota": g.quota,
                },
            )
            for g in self._groups
        ]
        with signals.deferred():
            ids = record(items)
            self._cgroup_ids.update({g.key: oid for g, oid in zip(self._groups, ids, strict=True)})
        for group in self._groups:
            self._cgroup_paths[group.key] = cgroups.path_of(controller, group)  # before mkdir
            try:
                cgroups.create(controller, group)
            except FileExistsError as err:
                raise ProviderError(
                    f"cgroup {err.filename} already exists (left by a killed run?): run `vnetbench clean`"
                ) from err
            except OSError as err:
                raise ProviderError(f"could not set up cgroup {group.rel}: {err}") from err

    def _build_ovs(self, layout: Layout, record: Recorder, bridges: list) -> None:
        rundir = runtime.rundir(self.campaign_id)
        with signals.deferred():
            (self._rundir_id,) = record([("rundir", rundir, {"path": rundir})])
            self._rundir = rundir
        os.makedirs(rundir, exist_ok=True)
        hosts = {ns: h for h, ns in layout.host_ns.items()}
        for br in bridges:
            instance = self._ovs.get(br.ns)
            if instance is None:
                host = hosts.get(br.ns, br.ns)
                instance = OvsInstance(br.ns, f"{rundir}/ovs-{host}")
                self._ovs[br.ns] = instance

                def spawn_daemon(
                    argv: list[str], role: str, env: dict[str, str], host: str = host, ns: str = br.ns
                ) -> procs.LocalToolProcess:
                    return self._spawn(ns, f"host:{host}", argv, None, env, role, host=host)

                instance.start(spawn_daemon)
            ports = [i.name for i in layout.interfaces() if i.ns == br.ns and i.master == br.name]
            instance.add_bridge(br.name, ports)

    def emulator_reports(self) -> dict[str, dict[str, Any]]:
        """The delay nodes' own reports, collected when the last teardown stopped them."""
        return dict(self.delay_reports)

    def namespace_access(self) -> NamespaceAccess:
        return self

    def namespace_fd(self, name: str) -> int | None:
        """The open fd of one of our namespaces (telemetry reads its counters through it)."""
        ns = self.namespaces.get(name)
        return None if ns is None or ns.closed else ns.fd

    def ovs_instance(self, ns: str) -> OvsInstance | None:
        """Our OVS daemons in host namespace `ns` (telemetry reads their port statistics)."""
        return self._ovs.get(ns)

    # ------------------------------------------------------------------ processes

    def gate(self) -> Gate:
        return procs.LocalGate()

    def spawn(self, node: str, argv: list[str], gate: Gate | None = None) -> ToolProcess:
        with self._lock:
            if self.layout is None:
                raise ProviderError("no topology is built")
            if node not in self.layout.node_ns:
                raise ProviderError(f"unknown node {node!r}")
            if gate is not None and not isinstance(gate, procs.LocalGate):
                raise ProviderError("this gate does not belong to the local provider")
            return self._spawn(
                self.layout.node_ns[node],
                node,
                argv,
                gate,
                None,
                "tool",
                node=node,
                host=self.layout.node_host[node],
            )

    def _spawn(
        self,
        ns_name: str,
        label: str,
        argv: list[str],
        gate: procs.LocalGate | None,
        env: dict[str, str] | None,
        role: str,
        node: str | None = None,
        host: str | None = None,
    ) -> procs.LocalToolProcess:
        ns = self.namespaces.get(ns_name)
        if ns is None or ns.closed:
            raise ProviderError(f"namespace {ns_name} is not built")
        group = cgroups.group_for(self.layout, self._groups, node, host) if self._groups and host else None
        cg_procs = cgroups.procs_file(self._cgroup_paths[group.key]) if group else None
        proc = procs.spawn(
            label, argv, ns.fd, cg_procs, gate, env, on_reaped=self._reaped, register=self._procs.append
        )
        details = {
            "pid": proc.pid,
            "starttime": proc.starttime,
            "netns": ns_name,
            "argv": list(argv),
            "role": role,
            "cgroup": group.rel if group else None,
        }
        try:
            assert self._record is not None
            with signals.deferred():
                (proc.object_id,) = self._record(
                    [("process", f"{label}:{os.path.basename(argv[0])}", details)]
                )
        except BaseException:
            proc.kill()
            raise
        finally:
            if proc.reaped:  # reaped before its record existed (its _reaped saw no id), or killed above
                self._reaped(proc)
        return proc

    def _reaped(self, proc: procs.LocalToolProcess) -> None:
        # Reaped processes are forgotten at once: a long campaign spawns thousands. Removed from
        # the list only once its record is marked, so an interrupt between the two leaves it
        # listed, and teardown marks it (calling this twice is harmless).
        if proc.object_id is not None:
            self._removed.append(proc.object_id)
        with contextlib.suppress(ValueError):
            self._procs.remove(proc)

    def wait_listening(self, proc: ToolProcess, port: int, proto: str, timeout_s: float) -> bool:
        deadline = time.monotonic() + timeout_s
        while True:
            if proc.poll() is not None:
                return False
            if procs.listening(proc.pid, port, proto):
                return True
            if time.monotonic() > deadline:
                return False
            time.sleep(LISTEN_POLL_S)

    def udp_handshake_state(
        self, client: ToolProcess, port: int, server: ToolProcess
    ) -> tuple[bool, int] | None:
        connected = procs.udp_connected_to(client.pid, port)
        received = procs.udp_datagrams_in(server.pid)
        return None if connected is None or received is None else (connected, received)

    # ------------------------------------------------------------------ teardown

    def teardown(self) -> list[int]:
        with self._lock:
            problems: list[str] = []
            for proc in self._delay_procs.values():
                delaynode.terminate(proc)  # all at once; each prints its report (drops, timing error)
            deadline = time.monotonic() + delaynode.STOP_TIMEOUT_S
            for ns, proc in list(self._delay_procs.items()):
                report = delaynode.report(proc, deadline)
                if report is not None:
                    link, sides = self._delay_nodes.get(ns, ("", {}))
                    self.delay_reports[ns] = {**report, "link": link, "sides": sides}
                self._delay_procs.pop(ns)
            self._stop_processes(problems)
            self._remove_namespaces(problems)
            self._remove_cgroups(problems)
            self._remove_rundir(problems)
            if self._active:
                with contextlib.suppress(OSError, ValueError):
                    runtime.unmark_active(self.campaign_id)
                self._active = False
            for problem in problems:
                log.warning("teardown: %s", problem)
            self.teardown_problems = problems
            removed = list(self._removed)
            if not (self.namespaces or self._cgroup_paths or self._ovs or self._rundir):
                self._reset()
            return sorted(set(removed))

    def _stop_processes(self, problems: list[str]) -> None:
        for proc in list(self._procs):
            try:
                proc.kill()  # reaping calls _reaped, which forgets it
            except OSError as err:
                problems.append(f"process {proc.pid} ({proc.argv[0]}): {err}")
            if proc.reaped:  # also when an interrupt cut its reaping short of _reaped
                self._reaped(proc)
        if self._procs:
            problems.append(f"processes that would not die: {[p.pid for p in self._procs]}")
        self._ovs.clear()  # their daemons were in _procs
        # Anything else still inside our namespaces (a tool's own children, ...) would keep the
        # namespace, and its links, alive.
        identities = {i for ns in self.namespaces.values() if (i := netns.identity(ns.path))}
        for _ in range(50):
            strays = netns.processes_in(identities)
            if not strays:
                break
            for pid in strays:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.kill(pid, signal.SIGKILL)
                with contextlib.suppress(ChildProcessError, OSError):
                    os.waitpid(pid, os.WNOHANG)
            time.sleep(0.01)
        else:
            problems.append(f"processes still in our namespaces: {netns.processes_in(identities)}")
        for proc in list(self._procs):  # one the sweep reaped: its poll() finds it gone, and marks it
            proc.poll()

    def _remove_namespaces(self, problems: list[str]) -> None:
        for name in list(self._ns_ids):
            ns = self.namespaces.get(name)
            try:
                if ns is not None:
                    ns.close()
                netns.remove(netns.path_of(name))
            except OSError as err:
                problems.append(f"namespace {name}: {err}")
                continue
            self.namespaces.pop(name, None)
            self._removed.append(self._ns_ids.pop(name))
        for name, ns in list(self.namespaces.items()):  # created but never recorded: cannot happen
            ns.close()
            with contextlib.suppress(OSError):
                netns.remove(ns.path)
            self.namespaces.pop(name, None)

    def _remove_cgroups(self, problems: list[str]) -> None:
        for group in reversed(self._groups):
            path = self._cgroup_paths.get(group.key)
            try:
                if path is not None:
                    cgroups.remove(path)
            except OSError as err:
                problems.append(f"cgroup {path}: {err}")
                continue
            self._cgroup_paths.pop(group.key, None)
            if group.key in self._cgroup_ids:
                self._removed.append(self._cgroup_ids.pop(group.key))
        if not self._cgroup_paths:
            self._groups = []

    def _remove_rundir(self, problems: list[str]) -> None:
        if self._rundir is None:
            return
        try:
            shutil.rmtree(self._rundir)
        except FileNotFoundError:
            pass
        except OSError as err:
            problems.append(f"runtime directory {self._rundir}: {err}")
            return
        if self._rundir_id is not None:
            self._removed.append(self._rundir_id)
        self._rundir, self._rundir_id = None, None


@contextlib.contextmanager
def _no_cyclic_gc() -> Iterator[None]:
    """Python's cyclic collector paused while a build runs: a 200-node build makes ~10^5 short-lived
    objects (requests, pyroute2 messages) beside the layout's, so full collections kept walking the
    same live objects — ~10 % of the build's time (benchmarks/build_teardown). Reference counting
    still frees everything; the collector resumes after."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()
