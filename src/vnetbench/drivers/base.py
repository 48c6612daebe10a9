"""The driver interface. A driver never runs anything: providers run the commands it builds."""

from __future__ import annotations

from dataclasses import dataclass, field

from vnetbench.store.db import Event, Sample


@dataclass(frozen=True)
class FlowParams:
    """What a driver needs to build one flow's commands."""

    src: str
    dst: str
    dst_address: str
    port: int
    duration_ns: int
    omit_ns: int = 0


@dataclass
class Commands:
    client: list[str]
    server: list[str] | None = None  # started first, on the destination node
    server_proto: str = "tcp"  # what the server listens on (for the readiness check)


@dataclass
class Parsed:
    """A tool's output turned into numbers. Metric names carry units (throughput_bps, rtt_ns, loss_ratio)."""

    summary: dict[str, float | None] = field(default_factory=dict)
    samples: list[Sample] = field(default_factory=list)
    events: list[Event] = field(default_factory=list)
    error: str | None = None  # the tool reported a failure: the measurement is stored as failed
    started_utc_ns: int | None = None  # when the tool says the test started, where it says so
