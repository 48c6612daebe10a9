"""Which steps run n measures, and which run comes next: derived from what the store has committed.

A monitored campaign's spec has one repetition; its plan (`r001/...` keys) is the template of every
run, and run n is that plan with `r{n:03d}` in its keys and n as its repetition. The keys are stable,
so a run cut short (SIGKILL, a database restart) is finished on restart without measuring again
anything already stored, and no run is measured twice.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from vnetbench.plan import Flow, Plan, Step

TEMPLATE_REPETITION = "r001"


def _rekey(key: str, run: int) -> str:
    parts = key.split("/")
    # the repetition is the first component (r001/...) or, with factors, the second (t001/r001/...)
    for i in range(min(2, len(parts))):
        if parts[i] == TEMPLATE_REPETITION:
            parts[i] = f"r{run:03d}"
            return "/".join(parts)
    raise ValueError(f"plan key {key!r} has no repetition component {TEMPLATE_REPETITION}")


def run_plan(template: Plan, run: int) -> Plan:
    """The template plan (one repetition) as run `run`: keys, repetition and order of that run."""
    if run < 1:
        raise ValueError(f"runs are numbered from 1, not {run}")
    per_run = len(template.steps)
    steps = [
        dataclasses.replace(
            step,
            key=_rekey(step.key, run),
            seq=(run - 1) * per_run + step.seq,
            repetition=run,
            flows=tuple(Flow(_rekey(f.key, run), f.src, f.dst) for f in step.flows),
            rebuild_before=False,
            not_before_ns=0,  # the monitor starts the run on its schedule; its steps follow at once
        )
        for step in template.steps
    ]
    return dataclasses.replace(template, steps=steps)


@dataclass(frozen=True)
class NextRun:
    run: int
    resumed: bool  # a run that was cut short: finish it (its stored steps are skipped)
    scheduled_utc_ns: int | None  # the slot of a resumed run, as first recorded


def next_run(last: dict | None) -> NextRun:
    """From the newest `monitor_runs` row: finish it if it never ended, else the one after it."""
    if last is None:
        return NextRun(1, False, None)
    if last["status"] in ("running", "interrupted"):
        return NextRun(int(last["run"]), True, int(last["scheduled_utc_ns"]))
    return NextRun(int(last["run"]) + 1, False, None)


def pending_steps(plan: Plan, done_keys: set[str]) -> list[Step]:
    return [s for s in plan.steps if any(f.key not in done_keys for f in s.flows)]
