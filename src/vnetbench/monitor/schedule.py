"""When the next run starts: every `repeat` from the previous slot, or the next `cron` time, plus a
random slip; never a burst of missed runs after the monitor was down (one catch-up run, then on)."""

from __future__ import annotations

import datetime as dt
import random
from dataclasses import dataclass

from vnetbench.spec.monitoring import MonitorSchedule


@dataclass(frozen=True)
class Limits:
    """Where monitoring ends: the spec's max_runs/until, or the command line's (which win)."""

    max_runs: int | None = None
    until_utc_ns: int | None = None

    @classmethod
    def of(cls, schedule: MonitorSchedule, max_runs: int | None, until: dt.datetime | None) -> Limits:
        until = until or schedule.until
        return cls(
            max_runs if max_runs is not None else schedule.max_runs,
            None if until is None else int(until.timestamp() * 10**9),
        )

    def reached(self, run: int, start_utc_ns: int) -> str | None:
        """Why run `run` starting at `start_utc_ns` is not started, or None if it is."""
        if self.max_runs is not None and run > self.max_runs:
            if run - 1 == self.max_runs:
                return f"{self.max_runs} runs done (max-runs)"
            # max-runs is the last run number, counted across restarts, not a number of runs to add
            return (
                f"the campaign has {run - 1} runs, more than max-runs {self.max_runs} (the last run "
                f"number); give --max-runs {run} or more to go on"
            )
        if self.until_utc_ns is not None and start_utc_ns > self.until_utc_ns:
            when = dt.datetime.fromtimestamp(self.until_utc_ns / 1e9, dt.UTC).isoformat(timespec="seconds")
            return f"the next run would start after {when} (until)"
        return None


def _utc(ns: int) -> dt.datetime:
    return dt.datetime.fromtimestamp(ns / 1e9, dt.UTC)


def next_slot(schedule: MonitorSchedule, previous_slot_utc_ns: int | None, now_utc_ns: int) -> int:
    """The slot of the next run; a slot already past (the monitor was down) is now."""
    if schedule.cron is not None:
        from croniter import croniter

        base = _utc(previous_slot_utc_ns if previous_slot_utc_ns is not None else now_utc_ns)
        slot = int(croniter(schedule.cron, base).get_next(dt.datetime).timestamp() * 10**9)
    elif previous_slot_utc_ns is None:
        slot = now_utc_ns
    else:
        assert schedule.repeat is not None
        slot = previous_slot_utc_ns + schedule.repeat
    return max(slot, now_utc_ns)


def slip_ns(schedule: MonitorSchedule, seed: int, run: int) -> int:
    """A random delay in [0, slip] for this run (seeded by campaign and run: the same after a restart)."""
    if schedule.slip <= 0:
        return 0
    return int(random.Random(f"{seed}/{run}").uniform(0, schedule.slip))
