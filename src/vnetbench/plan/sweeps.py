"""Sweeps: a measurement that stands for many steps (a `pps` sweep of rates × sizes).

The plan calls `expand` on one repetition's steps: each step becomes one step per point of its
kind's sweep (`Kind.sweep`), the point's suffix appended to its keys and its parameters in `params`.
A kind that does not sweep gives one point with no suffix and empty params: the step passes through.
Expanding before the plan's shuffle lets `order: random` mix the points too.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from vnetbench.kinds import kind_of
from vnetbench.plan.patterns import StepSpec
from vnetbench.spec.models import Campaign


def expand(campaign: Campaign, steps: list[StepSpec]) -> list[tuple[StepSpec, dict[str, Any]]]:
    """Every (step, sweep point) of one repetition, in order."""
    out: list[tuple[StepSpec, dict[str, Any]]] = []
    for spec in steps:
        m = campaign.measurement(spec.measurement)
        for suffix, params in kind_of(m.kind).sweep(m):
            if not suffix:
                out.append((spec, params))
                continue
            flows = tuple(replace(f, key=f.key + suffix) for f in spec.flows)
            out.append((spec._replace(key=spec.key + suffix, flows=flows), params))
    return out
