"""The measurement-kind interface: what the plan, the runner, telemetry and the report ask of a kind.

A kind (tcp, udp, rtt, pps, …) is one object that knows its spec model, the driver (tool) that
measures it, how long it runs, the points of a sweep, the rate it offers, the overhead-model maximum
it can reach on a path, and the extra flows it brings to a step. Everything has a default that fits
"a flow that runs `duration`": a kind overrides only what is special about it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar, NamedTuple

from vnetbench.drivers.base import Driver

Params = Mapping[str, Any]  # one point of a sweep (plan.Step.params); {} for a plain step


@dataclass(frozen=True)
class PathFacts:
    """What the layout says of one flow's path (plan.path_facts)."""

    rate_bps: int | None  # the slowest shaped link on the path (None: no link with a rate)
    mtu: int = 1500
    rtt_s: float = 0.0  # the configured round trip: twice the links' one-way delays (+ jitter)
    queue_bytes: int | None = None  # the shortest shaper queue on the path (None: nothing shaped)


class Offered(NamedTuple):
    """The payload rate a sender offers, and the payload of one datagram."""

    bps: float
    payload_bytes: int


class SweepPoint(NamedTuple):
    """One step of a sweep: its key suffix and its parameters."""

    suffix: str
    params: dict[str, Any]


# Summary metrics the runner adds to a flow of any kind: a switch's packet-rate capacity on its path.
RUNNER_METRICS = frozenset({"path_pps_limit"})


def quantiles(prefix: str, qs: tuple[str, ...], unit: str) -> frozenset[str]:
    """'send_lateness', ('min', 'p50'), 'ns' -> {send_lateness_min_ns, send_lateness_p50_ns}."""
    return frozenset(f"{prefix}_{q}_{unit}" for q in qs)


class Kind:
    """A measurement kind. Subclasses set `name` and `driver` and override what differs."""

    name: ClassVar[str]  # the spec's `kind:` value
    driver: ClassVar[Driver]  # the tool that measures it (drivers/)
    spec: ClassVar[type]  # its pydantic model in spec/models.py
    # Every summary metric its driver's parse can store for it (docs/drivers.md): what an alert rule may
    # name. tests/unit/drivers/test_summary_metrics.py parses every captured tool output, and
    # tests/e2e/test_monitor.py checks a real run's stored names, against it, so the list cannot drift.
    summary_metrics: ClassVar[frozenset[str]] = frozenset()

    def stored_metrics(self) -> frozenset[str]:
        """The summary metrics a measurement of this kind can store: its driver's and the runner's."""
        return self.summary_metrics | RUNNER_METRICS

    def planned_ns(self, m: Any) -> int:
        """How long the tools run (the plan's ETA and a step's default timeout)."""
        return int(m.duration)

    def flow_timing(self, m: Any) -> tuple[int, int]:
        """(duration_ns, omit_ns) handed to the driver for one flow."""
        return int(m.duration), 0

    def sweep(self, m: Any) -> list[SweepPoint]:
        """The steps one pattern step becomes: one, unless the kind sweeps (pps: sizes × rates)."""
        return [SweepPoint("", {})]

    def offered(self, m: Any, path: PathFacts | None, params: Params) -> Offered | None:
        """The payload rate the sender offers (None: the tool finds its own rate, or none applies)."""
        return None

    def expected_max_bps(self, m: Any, path: PathFacts, params: Params) -> float | None:
        """The overhead-model maximum goodput on this path (None: not a throughput, or unshaped)."""
        return None

    def path_problem(self, m: Any, path: PathFacts, src: str, dst: str) -> tuple[str, str] | None:
        """(spec field, message): why m cannot run from src to dst, found at plan time (None: it can)."""
        return None

    def unfragmented_sizes(self, m: Any) -> tuple[str, list[int]] | None:
        """(spec field, UDP payload sizes) its tool refuses to send when the path would fragment them
        (vnb-probe: its frame counts assume one frame per packet); None: any size goes."""
        return None

    def datagram_bytes(self, m: Any) -> int | None:
        """UDP payload per datagram when telemetry must count IPv4 fragments per datagram."""
        return None

    def background_pairs(self, m: Any) -> list[tuple[str, str]]:
        """(src, dst) of the flows this measurement adds to every step it runs beside (background)."""
        return []
