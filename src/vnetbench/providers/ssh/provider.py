"""The SSH provider: a campaign's nodes are existing hosts from the inventory, reached over SSH.

build: map every node to its inventory host and its placement labels, connect to all hosts in
parallel (a bounded number at once), make a private run directory on each (recorded before it is
made) and check the tools are there. An unreachable host does not stop the build: it is recorded
as down, and each measurement that needs it fails with the reason (and is retried per policy)
while the others go on.

spawn/gate/wait_listening: see procs.py. udp_handshake_state: the UDP handshake watchdog's view,
one round trip per host per poll. teardown: kill the recorded remote pids, remove the run
directories, close the connections. Host availability changes are stored as `host_state` events.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import shlex
import threading
from collections.abc import Sequence
from typing import Any

from vnetbench.drivers import ALL as ALL_DRIVERS
from vnetbench.layout import Layout
from vnetbench.layout.objects import DEFAULT_SITE
from vnetbench.providers import procnet
from vnetbench.providers.base import Gate, Provider, ProviderError, Recorder, TelemetryReader, ToolProcess
from vnetbench.providers.ssh import remote
from vnetbench.providers.ssh.connect import HostUnreachable, Pool
from vnetbench.providers.ssh.loop import LoopThread
from vnetbench.providers.ssh.procs import PID_TIMEOUT_S, SshGate, SshToolProcess
from vnetbench.providers.ssh.telemetry import SshTelemetryReader
from vnetbench.spec.inventory import Inventory, ResolvedHost
from vnetbench.store.records import now_utc_ns

log = logging.getLogger("vnetbench.providers.ssh")
LISTEN_STEP_S = 0.01
UDP_STATE_TIMEOUT_S = 5.0
INSTALL_HINT = {
    "iperf3": "apt-get install -y iperf3 (Debian/Ubuntu) or dnf install -y iperf3",
    "ping": "apt-get install -y iputils-ping (Debian/Ubuntu) or dnf install -y iputils",
    "vnb-probe": "vnetbench doctor --inventory FILE --install-probe",
}
HOST_STATE_EVENT = "host_state"
HOST_TOOLS_EVENT = "host_tools"


def _lacking(missing: list[str], host: ResolvedHost, tools: Sequence[str]) -> str:
    """What PREPARE found missing, each with its fix: a path the inventory's `tools` gives is named as
    such (installing the tool elsewhere would not help)."""
    tool_of = {host.tool(t): t for t in tools}
    parts = []
    for path in missing:
        name = tool_of.get(path, os.path.basename(path))
        if path != name:
            parts.append(  # resume runs the stored inventory: a corrected path needs a new run
                f"{name} at {path} (its hosts[].tools path): install it there, or correct the path in the "
                "inventory and run the campaign again"
            )
        else:
            parts.append(f"{name} — install with: {INSTALL_HINT.get(name, 'install it')}")
    return "; ".join(parts)


class SshProvider(Provider):
    name = "ssh"
    shapes_links = False  # measured as they are: nothing is emulated on existing hosts

    def __init__(
        self,
        campaign_id: str,
        inventory: Inventory,
        store: Any = None,
        tools: Sequence[str] = ("iperf3", "ping"),
    ) -> None:
        self.campaign_id = campaign_id
        self.inventory = inventory
        self.store = store
        self.tools = tuple(tools)
        self.loop = LoopThread()
        self._events: list[tuple[int, str, bool, str]] = []
        self._facts: list[tuple[str, dict[str, str]]] = []
        self._events_lock = threading.Lock()
        self.pool = Pool(inventory, on_state=self._on_state)
        self.hosts: dict[str, ResolvedHost] = dict(self.pool.hosts)
        self.teardown_problems: list[str] = []
        self._removed: list[int] = []
        self._reset()

    def _reset(self) -> None:
        self.layout: Layout | None = None
        self.build_id: int | None = None
        self._record: Recorder | None = None
        self.node_host: dict[str, str] = {}  # campaign node -> inventory host
        self._rundirs: dict[str, str] = {}  # host -> run directory (made)
        self._rundir_ids: dict[str, int] = {}
        self._procs: list[SshToolProcess] = []

    # ------------------------------------------------------------------ availability

    def _on_state(self, host: str, up: bool, reason: str) -> None:
        with self._events_lock:
            self._events.append((now_utc_ns(), host, up, reason))
        (log.info if up else log.warning)("host %s %s %s", host, "up" if up else "down:", reason)

    def flush_events(self) -> None:
        """Store the availability changes seen so far (from the caller's thread, not the loop's)."""
        with self._events_lock:
            events, self._events = self._events, []
            facts, self._facts = self._facts, []
        if self.store is None:
            return
        for host, versions in facts:
            detail = {"host": host, "versions": versions}
            self.store.add_event(self.campaign_id, HOST_TOOLS_EVENT, json.dumps(detail))
        for t_ns, host, up, reason in events:
            detail = {"host": host, "up": up, "reason": reason, "t_ns": t_ns}
            self.store.add_event(self.campaign_id, HOST_STATE_EVENT, json.dumps(detail))

    # ------------------------------------------------------------------ checks

    def preflight(self, layout: Layout) -> list[str]:
        problems = []
        for node in layout.node_ns:
            if self.inventory.host_of(node) is None:
                problems.append(
                    f"node {node!r} has no inventory host: name a host {node!r} or map it under "
                    f"inventory.nodes ({node}: HOST)"
                )
        # Existing hosts are measured as they are: nothing is emulated on them.
        for link in layout.links:
            emulated = [
                f for f in ("delay", "jitter", "delay_cdf", "loss", "overlay") if getattr(link, f) is not None
            ]
            if emulated:
                problems.append(
                    f"link {link.label}: {', '.join(emulated)} cannot be emulated on existing hosts "
                    "over SSH; remove it (a link's rate is kept only as the nominal capacity "
                    "for the overhead model)"
                )
        if layout.cpu_quota:
            problems.append(
                "CPU quotas (hosts[].cpu / nodes[].cpu) are not applied on existing hosts over SSH; "
                "remove them"
            )
        return problems

    def address_of(self, layout: Layout, dst: str, seen_from: str) -> str:
        return self.hosts[self.node_host[dst]].data_address

    def telemetry_reader(self, node: str) -> TelemetryReader | None:
        host = self.node_host.get(node)
        return None if host is None else SshTelemetryReader(self.loop, self.pool, host)

    def environment(self) -> dict[str, Any]:
        return {"provider": "ssh", "hosts": {h.name: f"{h.address}:{h.port}" for h in self.hosts.values()}}

    # ------------------------------------------------------------------ build

    def build(self, layout: Layout, build_id: int, record: Recorder) -> None:
        problems = self.preflight(layout)
        if problems:
            raise ProviderError("\n".join(problems))
        if self.layout is not None:
            raise ProviderError("a topology is already built; tear it down first")
        self._removed = []
        self.layout, self.build_id, self._record = layout, build_id, record
        for node in layout.node_ns:
            host = self.inventory.host_of(node)
            assert host is not None
            self.node_host[node] = host.name
            # Placement comes from the inventory's labels: the machine under the VM and its site.
            physical = host.physical_host or host.name
            layout.node_host[node] = physical
            layout.host_site[physical] = host.site or DEFAULT_SITE
        hosts = sorted(set(self.node_host.values()))
        try:
            results = self.loop.run(self._prepare_all(hosts))
        finally:
            self.flush_events()
        missing = [r for r in results if isinstance(r, ProviderError) and not isinstance(r, HostUnreachable)]
        if missing:
            self.teardown()
            raise ProviderError("\n".join(str(m) for m in missing))

    async def _prepare_all(self, hosts: list[str]) -> list[BaseException | None]:
        results = await asyncio.gather(*(self._prepare(h) for h in hosts), return_exceptions=True)
        return [r if isinstance(r, BaseException) else None for r in results]

    async def _prepare(self, host: str) -> None:
        """Connect, make the run directory (recorded first) and check the tools; idempotent."""
        if host in self._rundirs:
            await self.pool.connection(host)
            return
        resolved = self.hosts[host]
        await self.pool.connection(host)
        path = f"/tmp/vnb-{self.campaign_id}-{self.build_id}"
        if host not in self._rundir_ids:
            assert self._record is not None
            (self._rundir_ids[host],) = await asyncio.to_thread(
                self._record, [("ssh-rundir", f"{host}:{path}", {"host": host, "path": path})]
            )
        tools = [resolved.tool(t) for t in self.tools]
        done = await self.pool.run(host, remote.sh(remote.PREPARE, path, *tools, sudo=resolved.sudo), 30)
        if done.exit_status != 0:  # stdout too: a nologin shell says why there (sshd warns on stderr)
            said = " ".join(f"{done.stderr} {done.stdout}".split())[-300:]
            raise ProviderError(
                f"host {host}: cannot make {path} (exit {done.exit_status}: {said}); "
                "`vnetbench doctor --inventory FILE` checks that commands run as the login user"
            )
        self._rundirs[host] = path
        missing = str(done.stdout).split()
        if missing:
            raise ProviderError(f"host {host} lacks {_lacking(missing, resolved, self.tools)}")
        await self._record_versions(host, resolved)

    async def _record_versions(self, host: str, resolved: ResolvedHost) -> None:
        """The hosts' own tool versions, kept as a `host_tools` event (provenance: the campaign row
        holds this machine's)."""
        drivers = {d.tool: d for d in ALL_DRIVERS if d.tool in self.tools}
        versions: dict[str, str] = {}
        for tool, driver in sorted(drivers.items()):
            argv = [resolved.tool(tool), *driver.version_command()[1:]]
            try:
                done = await self.pool.run(host, shlex.join(argv), 15)
            except ProviderError:
                continue
            versions[tool] = driver.parse_version(str(done.stdout) + str(done.stderr))
        with self._events_lock:
            self._facts.append((host, versions))

    # ------------------------------------------------------------------ processes

    def gate(self) -> Gate:
        self.flush_events()
        sudo = {h: r.sudo for h, r in self.hosts.items()}
        return SshGate(self.loop, self.pool, self._rundirs, sudo)

    def spawn(self, node: str, argv: list[str], gate: Gate | None = None) -> ToolProcess:
        if self.layout is None:
            raise ProviderError("no topology is built")
        if node not in self.node_host:
            raise ProviderError(f"unknown node {node!r}")
        if gate is not None and not isinstance(gate, SshGate):
            raise ProviderError("this gate does not belong to the SSH provider")
        host = self.node_host[node]
        resolved = self.hosts[host]
        argv = [self._host_binary(resolved, argv[0]), *argv[1:]]
        proc = SshToolProcess(self.loop, self.pool, host, node, argv, resolved.sudo)
        proc.on_gone = self._gone
        try:
            self.loop.run(self._prepare(host))
            fifo = gate.fifo_for(host) if gate is not None else None
            if gate is not None:
                gate.procs.append(proc)
            self._procs.append(proc)
            self.loop.run(proc.start(fifo))
        finally:
            self.flush_events()
        assert self._record is not None
        details = {
            "host": host,
            "pid": proc.pid,
            "starttime": proc.starttime,
            "argv": list(argv),
            "node": node,
        }
        (proc.object_id,) = self._record([("ssh-process", f"{node}:{os.path.basename(argv[0])}", details)])
        if proc.poll() is not None:
            self._gone(proc)
        return proc

    def _host_binary(self, resolved: ResolvedHost, argv0: str) -> str:
        """The host's own copy of a campaign tool: a driver names this machine's binary (vnb-probe
        by its path in this virtualenv), which a remote host does not have; the host runs the one
        `build` checked — the inventory's `tools` path, else the name on its login PATH."""
        name = os.path.basename(argv0)
        return resolved.tool(name) if name in self.tools else resolved.tool(argv0)

    def _gone(self, proc: SshToolProcess) -> None:
        if proc.object_id is not None and proc.object_id not in self._removed and not proc.lost:
            self._removed.append(proc.object_id)

    def wait_listening(self, proc: ToolProcess, port: int, proto: str, timeout_s: float) -> bool:
        assert isinstance(proc, SshToolProcess)
        tries = max(1, int(timeout_s / LISTEN_STEP_S))
        command = remote.listening_command(proc.pid, port, proto, tries, proc.sudo)
        try:
            done = self.loop.run(self.pool.run(proc.host, command, timeout_s + 10), timeout_s + 20)
        except HostUnreachable:
            raise
        except (ProviderError, TimeoutError):
            return False  # not listening in time: the runner fails this flow with the server's output
        finally:
            self.flush_events()
        return done.exit_status == 0

    def udp_handshake_state(
        self, client: ToolProcess, port: int, server: ToolProcess
    ) -> tuple[bool, int] | None:
        assert isinstance(client, SshToolProcess) and isinstance(server, SshToolProcess)
        if not client.pid or not server.pid:
            return None
        # One command per host, both hosts at once; the two processes may share a host.
        if server.host == client.host:
            asks = {client.host: (client.pid, server.pid, client.sudo or server.sudo)}
        else:
            asks = {
                client.host: (client.pid, None, client.sudo),
                server.host: (None, server.pid, server.sudo),
            }
        try:
            answers = self.loop.run(self._udp_state(asks), UDP_STATE_TIMEOUT_S + 5)
        except (ProviderError, TimeoutError):
            return None  # no verdict this time: the tool's own timeout still applies
        finally:
            self.flush_events()
        parts = {name: text for answer in answers for name, text in answer.items()}
        sockets, snmp = parts.get("udp"), parts.get("snmp")
        received = None if snmp is None else procnet.udp_datagrams(snmp)
        if sockets is None or received is None:
            return None
        return procnet.connected_to_port(procnet.socket_rows(sockets), port), received

    async def _udp_state(
        self, asks: dict[str, tuple[int | None, int | None, bool]]
    ) -> list[dict[str, str | None]]:
        async def ask(
            host: str, client_pid: int | None, server_pid: int | None, sudo: bool
        ) -> dict[str, str | None]:
            command = remote.udp_state_command(client_pid, server_pid, sudo)
            done = await self.pool.run(host, command, UDP_STATE_TIMEOUT_S)
            return remote.parse_udp_state(str(done.stdout))

        return list(await asyncio.gather(*(ask(host, *a) for host, a in asks.items())))

    # ------------------------------------------------------------------ teardown

    def teardown(self) -> list[int]:
        problems: list[str] = []
        try:
            self.loop.run(self._teardown(problems), 120)
        except (TimeoutError, ProviderError) as err:
            problems.append(str(err))
        self.flush_events()
        for problem in problems:
            log.warning("teardown: %s", problem)
        self.teardown_problems = problems
        removed = sorted(set(self._removed))
        # What could not be removed (a host that is down) stays recorded as live in the store for
        # `vnetbench clean`; the provider itself starts afresh, so a rebuild is never blocked.
        self._reset()
        return removed

    async def _teardown(self, problems: list[str]) -> None:
        # A spawn interrupted while it waited for the start (SIGINT during a run) left the start
        # running on this loop: its process is about to exist. Kill it too, once its pid is known.
        await asyncio.gather(*(p.until_started(PID_TIMEOUT_S) for p in self._procs))
        live: dict[str, list[SshToolProcess]] = {}
        for proc in self._procs:
            if proc.poll() is None or proc.lost:
                live.setdefault(proc.host, []).append(proc)

        async def stop(host: str, procs: list[SshToolProcess]) -> None:
            pids = [(p.pid, p.starttime) for p in procs if p.pid]
            try:
                if pids:
                    await self.pool.run(host, remote.kill_command(pids, "KILL", self.hosts[host].sudo), 15)
            except ProviderError as err:
                problems.append(f"could not kill {pids} on {host}: {err}")
                return
            for p in procs:
                p.killed = True
                if p._proc is not None:
                    p._proc.close()
                if p.object_id is not None:
                    self._removed.append(p.object_id)
            self._procs = [p for p in self._procs if p not in procs]

        await asyncio.gather(*(stop(h, ps) for h, ps in live.items()))
        self._procs = [p for p in self._procs if p.poll() is None and p.object_id not in self._removed]

        async def rmdir(host: str, path: str) -> None:
            try:
                done = await self.pool.run(
                    host, remote.sh(remote.RMRUNDIR, path, sudo=self.hosts[host].sudo), 15
                )
            except ProviderError as err:
                problems.append(f"could not remove {path} on {host}: {err}")
                return
            if done.exit_status == 0:
                self._rundirs.pop(host, None)
                if host in self._rundir_ids:
                    self._removed.append(self._rundir_ids.pop(host))
            else:
                problems.append(f"could not remove {path} on {host}: {str(done.stderr).strip()}")

        await asyncio.gather(*(rmdir(h, p) for h, p in list(self._rundirs.items())))
        await self.pool.close()

    def close(self) -> None:
        """Close every connection and stop the event loop (after teardown)."""
        try:
            self.loop.run(self.pool.close(), 10)
        finally:
            self.loop.stop()
