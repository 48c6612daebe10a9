"""The observer interface, what it is shown of a running step, and `Interrupted`."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from vnetbench.layout import Layout
from vnetbench.plan import Plan, Step
from vnetbench.providers.base import ToolProcess
from vnetbench.spec.models import Campaign
from vnetbench.store.records import MeasurementRecord


class Interrupted(Exception):
    """SIGINT or SIGTERM: stop after cleaning up; the campaign can be resumed."""


@dataclass
class RunSummary:
    steps_run: int = 0
    flows_ok: int = 0  # measurements whose last attempt was ok / failed (a re-run one counts once)
    flows_failed: int = 0
    reruns: int = 0  # failed steps re-run under schedule.retries
    setup_failures: int = 0  # attempts whose tool setup failed; the step was re-run (run/runner.py)
    skipped: int = 0  # flows already in the store (resume)
    interrupted: bool = False
    # SIGTERM/SIGINT while the run tore down (it finished that first): whoever runs runs should stop
    stop_requested: bool = False
    failures: list[str] = field(default_factory=list)


@dataclass
class FlowProcesses:
    """One flow of a running step: its record and the processes measuring it."""

    record: MeasurementRecord
    client: ToolProcess | None
    server: ToolProcess | None


@dataclass
class RunningStep:
    """A step whose tools are started: what observers see of it."""

    step: Step
    variant: Campaign  # the treatment's spec
    layout: Layout  # what is built
    measurement: Any  # the spec model of step.measurement
    flows: list[FlowProcesses]  # every flow started, background flows too


class Observer:
    """Override what you need; every method does nothing by default."""

    def on_campaign_start(self, campaign_id: str, plan: Plan) -> None:
        """Before the first step of this run (a resumed campaign starts again here)."""

    def on_step_start(self, running: RunningStep) -> None:
        """The step's clients are spawned behind the start barrier; the barrier opens next."""

    def on_step_end(self, running: RunningStep, records: Sequence[MeasurementRecord]) -> None:
        """The step's tools ended; `records` (every flow of the step) are stored right after.

        Also called when no tool started (on_step_start was not) or when the step was interrupted."""

    def on_campaign_end(self, summary: RunSummary) -> None:
        """After the last step, or after an interruption (summary.interrupted)."""


class StepCallback(Observer):
    """`fn(step, records)` after every step (a test's or a script's hook)."""

    def __init__(self, fn: Callable[[Step, list[MeasurementRecord]], None]) -> None:
        self.fn = fn

    def on_step_end(self, running: RunningStep, records: Sequence[MeasurementRecord]) -> None:
        self.fn(running.step, list(records))
