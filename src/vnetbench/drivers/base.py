"""The driver interface. A driver never runs anything: providers run the commands it builds."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from vnetbench.store.records import Event, Sample


@dataclass(frozen=True)
class FlowParams:
    """What a driver needs to build one flow's commands."""

    src: str
    dst: str
    dst_address: str
    port: int
    duration_ns: int
    omit_ns: int = 0
    params: Mapping[str, Any] = field(default_factory=dict)  # a sweep point (plan.Step.params)


@dataclass(frozen=True)
class HandshakeWatch:
    """A UDP handshake the runner watches (run/handshake.py): the client connects a UDP socket to
    `port` and sends one datagram per stream, the server answers each; a datagram lost either way
    leaves the client waiting (iperf3 3.12: 30 s) though nothing will be measured."""

    port: int
    streams: int  # handshake datagrams: at most this many reach the server before any data
    grace_s: float  # no data at the server this long after the client's socket appeared: lost
    payload_bytes: int = 1460  # one datagram's payload (to tell a late start's burst in datagrams)


@dataclass
class Commands:
    client: list[str]
    server: list[str] | None = None  # started first, on the destination node
    server_proto: str = "tcp"  # what the server listens on (for the readiness check)
    port: int | None = None  # the port to check when the server's argv has no `-p PORT`
    handshake: HandshakeWatch | None = None  # a UDP handshake that can be lost on the path


@dataclass
class Parsed:
    """A tool's output turned into numbers. Metric names carry units (throughput_bps, rtt_ns, loss_ratio)."""

    summary: dict[str, float | None] = field(default_factory=dict)
    samples: list[Sample] = field(default_factory=list)
    events: list[Event] = field(default_factory=list)
    error: str | None = None  # the tool reported a failure: the measurement is stored as failed
    started_utc_ns: int | None = None  # when the tool says the test started, where it says so
    # The tool failed while setting the test up (e.g. iperf3's UDP handshake lost on a lossy path),
    # before it measured anything: not a result; the runner retries the step (bounded).
    setup_failed: bool = False


# ------------------------------------------------ additive: what drivers parse, and their shape


@runtime_checkable
class ToolOutput(Protocol):
    """What a finished tool process left behind; providers' `Finished` has these fields."""

    returncode: int | None  # None: killed (timeout)
    stdout: str
    stderr: str


@dataclass
class Output:
    """A ToolOutput built from strings (tests, re-parsing raw output from the store)."""

    stdout: str
    stderr: str = ""
    returncode: int | None = 0


class Driver(Protocol):
    """One tool: build its commands, parse its output. Never runs anything."""

    tool: str  # the executable's name, also the key for its recorded version

    def problems(self, m: Any) -> list[str]:
        """What the tool cannot do with this measurement (checked before a campaign starts)."""
        ...

    def spec_problems(self, m: Any) -> list[tuple[str, str]]:
        """(field, message): what the tool cannot do with the measurement's own fields, with the fix;
        the plan refuses them (validate, run) before anything is built. Nothing about this machine."""
        ...

    def commands(self, m: Any, flow: FlowParams, offered_bps: float | None) -> Commands: ...

    def parse(self, client: ToolOutput, server: ToolOutput | None = None) -> Parsed:
        """Never raises on bad output: a failure is Parsed.error."""
        ...

    def version_command(self) -> list[str]: ...

    def parse_version(self, text: str) -> str: ...
