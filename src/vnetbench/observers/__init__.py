"""The observer protocol: how the runner tells others what a campaign is doing, as it does it.

The runner calls every registered `Observer` at four moments:

    on_campaign_start(campaign_id, plan)      before the first step (also on resume)
    on_step_start(running)                    a step's clients are spawned behind the start
                                              barrier, not yet released (sample from here)
    on_step_end(running, records)             the step's tools ended; its records are final and
                                              about to be stored in one transaction (an observer
                                              may attach what it measured, e.g. `record.telemetry`).
                                              Called after every step attempt: also when no tool
                                              started (no on_step_start then) or on an interruption
                                              (then nothing is stored)
    on_campaign_end(summary)                  after the last step, or when interrupted

Telemetry is one observer (telemetry/observer.py); a live dashboard is another. An observer never
fails a measurement: it notes its own problems as events, and lets only `Interrupted` through.
The campaign registers the standard observers (run/campaign.py); anyone can add more.
"""

from vnetbench.observers.base import (
    FlowProcesses,
    Interrupted,
    Observer,
    RunningStep,
    RunSummary,
    StepCallback,
)

__all__ = ["FlowProcesses", "Interrupted", "Observer", "RunSummary", "RunningStep", "StepCallback"]
