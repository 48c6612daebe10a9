"""The provider interface: build a laid-out topology, run tools on its nodes, tear it down.

Providers are the only code (with the tool drivers' commands they run) that touches a kernel or a
remote host. The runner talks to them only through this interface.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from vnetbench.layout import Layout

# record(kind, name, details) -> object id; called before an object is created (ownership registry).
Recorder = Callable[[Sequence[tuple[str, str, dict[str, Any]]]], list[int]]


EMULATOR_EVENT = "link_emulator"  # event kind: a delay node's own report at a build's teardown


class ProviderError(RuntimeError):
    """A build or run problem a user can act on (missing kernel feature, missing tool, ...)."""


@dataclass
class Finished:
    """What a tool process left behind."""

    returncode: int | None  # None: killed on timeout
    stdout: str
    stderr: str
    started_utc_ns: int
    ended_utc_ns: int
    timed_out: bool = False


class ToolProcess(ABC):
    """A tool started on a node (a server, a client, a probe)."""

    node: str
    argv: list[str]
    pid: int

    @abstractmethod
    def poll(self) -> int | None: ...

    @abstractmethod
    def wait(self, timeout_s: float) -> Finished:
        """Wait up to timeout_s; on timeout kill the process (and its group) and return timed_out=True."""

    @abstractmethod
    def kill(self) -> None: ...


class Gate(ABC):
    """A start barrier: processes spawned behind it wait until release(), then start together."""

    @abstractmethod
    def release(self) -> list[int]:
        """Open the gate; return each gated process's measured start time (UTC ns), in spawn order."""

    @abstractmethod
    def close(self) -> None: ...


class TelemetryReader(ABC):
    """Raw kernel counters of a node's host, for telemetry on providers without namespace handles.

    One read() is one round trip; nodes on the same host share its counters (and `host` names them).
    """

    host: str

    @abstractmethod
    def read(self, pids: Sequence[int], qdiscs: bool) -> dict[str, str]:
        """Raw text by name: stat, softnet, snmp, netstat, dev (the /proc files), pid:N (/proc/N/stat,
        absent when the process has gone), tc (`tc -s -j qdisc show`, absent when not asked for or
        when the host has no tc; then notc is present)."""

    @abstractmethod
    def route(self, peer: str) -> tuple[str, str]:
        """Raw JSON of `ip -j route get PEER` (empty if there is no route) and of `ip -j addr show`."""

    def reachable(self) -> bool:
        """False when the host is known to be down (then it is not read: no waiting on it)."""
        return True


class OvsDaemons(Protocol):
    """A userspace Open vSwitch a provider runs: where its sockets are and the environment to reach them."""

    rundir: str

    def env(self) -> dict[str, str]: ...


class NamespaceAccess(ABC):
    """Handles to what a provider built on this machine: telemetry reads counters through them."""

    @abstractmethod
    def namespace_fd(self, ns: str) -> int | None:
        """An open fd of one of the provider's network namespaces (None: not one of its own)."""

    @abstractmethod
    def ovs_instance(self, ns: str) -> OvsDaemons | None:
        """The OVS daemons serving host namespace `ns` (None: no userspace OVS there)."""


class Provider(ABC):
    name: str
    # Whether the layout's shapers are built (their queues exist): the runner's late-start check needs
    # a queue of ours to overflow. Existing hosts (SSH) keep a link's rate only as its nominal capacity.
    shapes_links: bool = True

    @abstractmethod
    def preflight(self, layout: Layout) -> list[str]:
        """Problems that would stop a build (missing kernel feature or tool), each with the fix."""

    @abstractmethod
    def build(self, layout: Layout, build_id: int, record: Recorder) -> None:
        """Create everything in the layout. Each object is passed to `record` before it is created."""

    @abstractmethod
    def teardown(self) -> list[int]:
        """Delete everything this provider built; returns the ids of the objects removed."""

    @abstractmethod
    def gate(self) -> Gate: ...

    @abstractmethod
    def spawn(self, node: str, argv: list[str], gate: Gate | None = None) -> ToolProcess:
        """Start argv on a node (inside its namespace, its host's and its own cgroup)."""

    @abstractmethod
    def wait_listening(self, proc: ToolProcess, port: int, proto: str, timeout_s: float) -> bool:
        """Wait until proc listens on port (tcp/udp) in its node; False if it died or the time ran out."""

    def udp_handshake_state(
        self, client: ToolProcess, port: int, server: ToolProcess
    ) -> tuple[bool, int] | None:
        """For the UDP handshake watchdog (run/handshake.py): whether client has a UDP socket connected
        to port, and how many UDP datagrams have reached sockets in server's node so far. None: this
        provider cannot tell (then the tool's own timeout applies)."""
        return None

    def namespace_access(self) -> NamespaceAccess | None:
        """Local handles to the built namespaces (None: the build is elsewhere; see telemetry_reader)."""
        return None

    def telemetry_reader(self, node: str) -> TelemetryReader | None:
        """A reader of the counters of node's host (remote providers); None: no telemetry this way."""
        return None

    def environment(self) -> dict[str, Any]:
        """Facts recorded with the campaign (kernel, CPU count ...)."""
        return {}

    def emulator_reports(self) -> dict[str, dict[str, Any]]:
        """What the last teardown's link emulators said of themselves (link -> report: frames,
        drops by cause, release-time error, CPU); {} where none ran."""
        return {}

    def address_of(self, layout: Layout, dst: str, seen_from: str) -> str:
        """The address a tool on seen_from uses to reach dst (existing hosts have their own)."""
        return layout.address_of(dst, seen_from)
