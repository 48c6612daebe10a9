"""The sampler: a thread that reads every source each interval and keeps counter deltas.

start() starts the thread, which takes the baseline reading (before the tools are released) and
then reads every `interval`; stop() makes it take the final reading (after the tools ended) and
joins it. Every reading happens in that one thread (pyroute2 sockets must stay in the thread that
uses them). The result is a list of rows (t_ns after the baseline, scope, metric, value): counters
as deltas since the previous reading, zero deltas left out; gauges (queue backlog) as read. The
thread's own CPU time is measured (time.thread_time_ns), so the sampler's cost is known for every
measurement.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Protocol

from vnetbench.store.records import TELEMETRY_GAUGES
from vnetbench.telemetry.sources import Counters

log = logging.getLogger("vnetbench.telemetry")
ALWAYS_KEPT = {"cpu"}  # scopes (and cpu@HOST) whose zero deltas are stored too (they mark every reading)


class Source(Protocol):
    def read(self, out: Counters) -> None: ...


@dataclass
class Row:
    t_ns: int
    scope: str
    metric: str
    value: float


@dataclass
class Result:
    started_utc_ns: int
    interval_ns: int
    readings: int = 0
    duration_ns: int = 0
    sampler_cpu_ns: int = 0
    rows: list[Row] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)


class Sampler:
    def __init__(self, sources: Sequence[Source], interval_ns: int) -> None:
        self.sources = list(sources)
        self.interval_ns = interval_ns
        self.result = Result(time.time_ns(), interval_ns)
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._t0 = 0
        self._last: Counters = {}
        self._ready = threading.Event()

    def start(self) -> None:
        """Take the baseline reading (in the sampler's thread, which all reads use) and start sampling."""
        self._thread = threading.Thread(target=self._loop, name="vnb-telemetry", daemon=True)
        self._thread.start()
        self._ready.wait()

    def stop(self) -> Result:
        """Take the final reading and stop."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
            self._thread = None
        return self.result

    def _loop(self) -> None:
        cpu0 = time.thread_time_ns()
        try:
            self._t0 = time.monotonic_ns()
            self.result.started_utc_ns = time.time_ns()
            self._last = self._read_all()
        finally:
            self._ready.set()
        n = 1
        while not self._stop.wait(max(0.0, (self._t0 + n * self.interval_ns - time.monotonic_ns()) / 1e9)):
            self._take()
            n += 1
        self._take()
        self.result.duration_ns = time.monotonic_ns() - self._t0
        self.result.sampler_cpu_ns = time.thread_time_ns() - cpu0

    def _read_all(self) -> Counters:
        out: Counters = {}
        for source in self.sources:
            try:
                source.read(out)
            except Exception as err:  # a source that fails must not stop the others or the measurement
                self._note(f"{type(source).__name__}: {type(err).__name__}: {err}")
            for note in getattr(source, "notes", ()):  # what a source could not read, e.g. no tc
                self._note(note)
        return out

    def _note(self, message: str) -> None:
        if message not in self.result.errors:
            self.result.errors.append(message)
            log.warning("telemetry: %s", message)

    def _take(self) -> None:
        now = self._read_all()
        t_ns = time.monotonic_ns() - self._t0
        rows = self.result.rows
        for scope, metrics in now.items():
            before = self._last.get(scope, {})
            for metric, value in metrics.items():
                if metric in TELEMETRY_GAUGES:
                    if value:
                        rows.append(Row(t_ns, scope, metric, float(value)))
                    continue
                delta = value - before.get(metric, value)
                if delta or scope.split("@", 1)[0] in ALWAYS_KEPT:
                    rows.append(Row(t_ns, scope, metric, float(delta)))
        self._last = {**self._last, **now}
        self.result.readings += 1
