"""What the store keeps of one measurement, as plain data: the record every stage above fills in.

Drivers make `Sample`s and `Event`s, the runner builds a `MeasurementRecord` per flow, telemetry
attaches a `TelemetryRun`; `Store.save_measurements` writes all of it in one transaction. Nothing
here imports SQL or pandas, so every stage can use these types cheaply.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any


def now_utc_ns() -> int:
    """Wall-clock time (UTC) in integer nanoseconds, as every `*_utc_ns` column holds it."""
    return time.time_ns()


@dataclass
class Sample:
    t_ns: int
    metric: str
    value: float | None
    seq: int | None = None
    stream: int | None = None


@dataclass
class Event:
    kind: str
    detail: str
    t_ns: int | None = None


@dataclass
class CaptureFile:
    """A packet capture taken on one interface during a measurement (table `captures`)."""

    node: str
    interface: str
    file: str  # pcap path
    snaplen_bytes: int
    packet_cap: int
    size_bytes: int | None


@dataclass
class TelemetryRun:
    """What telemetry read around one measurement (tables `telemetry_runs`, `telemetry`, `captures`)."""

    started_utc_ns: int  # the baseline reading (t_ns = 0)
    interval_ns: int
    duration_ns: int
    readings: int
    sampler_cpu_ns: int
    path: dict[str, Any]  # layout.flowpath.FlowPath.to_json()
    fragments_per_datagram: int | None
    errors: list[str] = field(default_factory=list)
    rows: list[dict[str, Any]] = field(default_factory=list)  # t_ns, scope, metric, value
    captures: list[CaptureFile] = field(default_factory=list)


# Telemetry metrics stored as read (gauges), not as deltas since the previous reading: never summed.
TELEMETRY_GAUGES = frozenset({"backlog_bytes", "qlen_packets"})

# Fields of a record that are rows of other tables, not columns of `measurements`.
CHILD_FIELDS = frozenset({"summary", "samples", "events", "raw", "telemetry"})


@dataclass
class MeasurementRecord:
    """Everything known about one flow's measurement, written to the store at once."""

    campaign_id: str
    key: str
    step_key: str
    seq: int
    repetition: int
    pattern: str
    pattern_kind: str
    group_kind: str
    group_size: int
    measurement: str
    kind: str
    src: str
    dst: str
    placement: str
    status: str = "ok"
    reason: str | None = None
    attempt: int = 1
    build_id: int | None = None
    factors: dict[str, Any] = field(default_factory=dict)
    src_host: str | None = None
    dst_host: str | None = None
    link_rate_bps: int | None = None
    path_mtu: int | None = None
    expected_max_bps: float | None = None
    offered_bps: float | None = None
    tool: str | None = None
    tool_version: str | None = None
    command: dict[str, list[str]] | None = None
    started_utc_ns: int | None = None
    duration_ns: int | None = None
    start_skew_ns: int | None = None
    start_offset_ns: int | None = None
    summary: dict[str, float | None] = field(default_factory=dict)
    samples: list[Sample] = field(default_factory=list)
    events: list[Event] = field(default_factory=list)
    raw: dict[tuple[str, str], str] = field(default_factory=dict)  # (role, stdout|stderr) -> text
    telemetry: TelemetryRun | None = None

    def columns(self) -> dict[str, Any]:
        """The values of the record's `measurements` row."""
        return {k: v for k, v in self.__dict__.items() if k not in CHILD_FIELDS}
