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


@dataclass
class Plan:
    variants: list[Campaign]
    topology_keys: list[str]
    steps: list[Step]
    seed: int
    layouts: list[Layout] = field(default_factory=list)

    @property
    def flow_count(self) -> int:
        return sum(len(s.flows) for s in self.steps)

    @property
    def planned_ns(self) -> int:
        return sum(s.planned_ns for s in self.steps)
