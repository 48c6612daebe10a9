"""The plan's data: flows, steps (flows started together) and the plan (variants + ordered steps)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from vnetbench.layout import Layout
from vnetbench.spec.models import Campaign


@dataclass(frozen=True)
class Flow:
    key: str
    src: str
    dst: str


@dataclass(frozen=True)
class Step:
    key: str
    seq: int
    variant: int  # index into Plan.variants (the treatment)
    factors: dict[str, Any]
    repetition: int  # 1-based; the replication for designed experiments
    pattern: str
    pattern_kind: str
    group_kind: str  # single | alone | together | parallel
    measurement: str
    kind: str
    flows: tuple[Flow, ...]
    rebuild_before: bool
    not_before_ns: int  # earliest start, as an offset from the campaign's start
    planned_ns: int  # how long the tools will run (for the ETA)
    params: dict[str, Any] = field(default_factory=dict)  # one point of a sweep (pps: rate and size)

    def record_fields(self, flow: Flow, layout: Layout) -> dict[str, Any]:
        """What a flow's measurement record takes from its step and the layout (provenance)."""
        return {
            "key": flow.key,
            "step_key": self.key,
            "seq": self.seq,
            "repetition": self.repetition,
            "pattern": self.pattern,
            "pattern_kind": self.pattern_kind,
            "group_kind": self.group_kind,
            "group_size": len(self.flows),
            "measurement": self.measurement,
            "src": flow.src,
            "dst": flow.dst,
            "placement": layout.placement(flow.src, flow.dst),
            "factors": dict(self.factors),
            "src_host": layout.node_host[flow.src],
            "dst_host": layout.node_host[flow.dst],
        }


@dataclass
class Plan:
    variants: list[Campaign]
    topology_keys: list[str]
    steps: list[Step]
    seed: int
    layouts: list[Layout] = field(default_factory=list)
    background_count: int = 0  # background flows over all steps: measurements of their own (run/background)
    # (variant, measurement) -> why its steps are stored as failed, not run: a stored campaign's spec
    # that its tool cannot run (checked since it ran; planner._refused_measurements, run/runner.py)
    refused: dict[tuple[int, str], str] = field(default_factory=dict)

    @property
    def flow_count(self) -> int:
        """The measured flows of the steps (the background flows beside them not counted)."""
        return sum(len(s.flows) for s in self.steps)

    @property
    def measurement_count(self) -> int:
        """Every measurement the campaign stores: measured flows and background flows."""
        return self.flow_count + self.background_count

    def count_text(self) -> str:
        """'160 steps, 300 measurements (40 of them background flows)', as the run and validate print."""
        text = f"{_counted(len(self.steps), 'step')}, {_counted(self.measurement_count, 'measurement')}"
        n = self.background_count
        return text + (f" ({n} of them background flows)" if n else "")

    def planned_text(self) -> str:
        """'~1.5 min of measuring', or '~12 s' under a minute (not '~0.0 min' for a short plan)."""
        seconds = self.planned_ns / 1e9
        return f"~{seconds:.0f} s of measuring" if seconds < 60 else f"~{seconds / 60:.1f} min of measuring"

    @property
    def planned_ns(self) -> int:
        return sum(s.planned_ns for s in self.steps)


def _counted(n: int, noun: str) -> str:
    """'1 step', '4 steps'."""
    return f"{n} {noun}" + ("" if n == 1 else "s")
