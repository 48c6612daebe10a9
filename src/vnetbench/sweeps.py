"""Sweeps: a measurement that stands for many steps (a `pps` sweep of rates × sizes).

The plan calls `expand` on one repetition's steps: a `pps` step becomes one step per
(size, rate), sizes outer and rates ascending inside (the OpenStack study's order), each with its
own key suffix `/s{size}/p{rate}` and its point in `params`. Every other step passes through with
empty params. Expanding before the plan's shuffle lets `order: random` mix the points too.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from vnetbench.spec.models import Campaign, PpsMeasurement

# (key, pattern, pattern_kind, group_kind, measurement, flows): plan.StepSpec
StepSpec = tuple[str, str, str, str, str, tuple[Any, ...]]


def points(m: PpsMeasurement) -> list[dict[str, int]]:
    """Every (size, rate) of a sweep, sizes as written, rates ascending."""
    return [{"size": size, "pps": pps} for size in m.sizes for pps in sorted(set(m.rates))]


def expand(campaign: Campaign, steps: list[StepSpec]) -> list[tuple[StepSpec, dict[str, Any]]]:
    out: list[tuple[StepSpec, dict[str, Any]]] = []
    for spec in steps:
        key, pattern, kind, group, mname, flows = spec
        m = campaign.measurement(mname)
        if not isinstance(m, PpsMeasurement):
            out.append((spec, {}))
            continue
        for point in points(m):
            suffix = f"/s{point['size']}/p{point['pps']}"
            new_flows = tuple(replace(f, key=f.key + suffix) for f in flows)
            out.append(((key + suffix, pattern, kind, group, mname, new_flows), dict(point)))
    return out
