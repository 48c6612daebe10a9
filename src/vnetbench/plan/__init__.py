"""spec -> plan: variants (one per treatment) and the ordered steps to measure, as pure data.

- `steps`     Flow, Step, Plan
- `patterns`  which flows each pattern measures, alone or together (StepSpec)
- `sweeps`    a step per point of a kind's sweep (pps: sizes × rates)
- `planner`   `make_plan`: treatments, replications, randomised order, rebuilds, plan-time checks

The plan asks the measurement kinds (kinds/) how long a step runs, what it sweeps and what it
needs of a path; it touches nothing outside the process.
"""

from vnetbench.plan.planner import (
    make_plan,
    offered_bps,
    path_facts,
    planned_duration_ns,
    topology_key,
    treatments,
)
from vnetbench.plan.steps import Flow, Plan, Step

__all__ = [
    "Flow",
    "Plan",
    "Step",
    "make_plan",
    "offered_bps",
    "path_facts",
    "planned_duration_ns",
    "topology_key",
    "treatments",
]
