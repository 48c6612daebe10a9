"""Waiting and re-measuring without trusting the machine's speed.

CI runs on a 2-core machine that may be busy (another program, a hypervisor's steal). Two rules
follow, and these helpers are the only places tests implement them:

- A count that can lag (a counter read after traffic, a process that has yet to appear) is polled
  until it reaches the value or a deadline passes: `wait_until`. Never read once after a sleep.
- A precision claim about emulated timing or rate (an RTT's p99, a shaped link's goodput) can only
  be made worse by a stalled machine, never better: a descheduled sender sends late, a descheduled
  receiver reads late. `best_of` repeats such a measurement a bounded number of times and passes if
  one attempt meets the claim; every attempt's numbers go into the failure message. Bounds that the
  machine cannot move (never early, never above the shaper's rate) are asserted on every attempt by
  the caller, not here.
- When no attempt met such a claim and every attempt ran while the machine had no CPU to spare (less
  than a quarter CPU idle, as the campaign's own host-CPU telemetry read it), the claim could not be
  tested here: `met_or_machine_bound` skips, saying so with every attempt's numbers, provided one
  attempt still reached a floor far below the claim that no load takes a working link under (a
  shaper at a wrong rate fails it however busy the machine). Else it fails.
"""

from __future__ import annotations

import math
import os
import time
from collections.abc import Callable, Mapping
from typing import Any, Generic, NamedTuple, TypeVar

import pytest

T = TypeVar("T")

SPARE_CPUS = 0.25  # less idle than this (in CPUs) while a measurement ran: the machine had none to spare


def wait_until(read: Callable[[], T], done: Callable[[T], bool], timeout: float, interval: float = 0.05) -> T:
    """Call `read` until `done(value)` or `timeout` seconds pass; return the last value read.

    The caller asserts on the value, so a failure shows what was last seen."""
    deadline = time.monotonic() + timeout
    while True:
        value = read()
        if done(value) or time.monotonic() >= deadline:
            return value
        time.sleep(interval)


def first_then(first: T, again: Callable[[], T]) -> Callable[[], T]:
    """A `measure` for `best_of` whose first attempt is a result already taken (a test fixture's run)
    and whose further attempts call `again`."""
    pending = [first]
    return lambda: pending.pop() if pending else again()


def best_of(measure: Callable[[], T], meets: Callable[[T], bool], attempts: int = 3) -> tuple[bool, list[T]]:
    """Run `measure` until one result `meets` the claim, at most `attempts` times.

    Returns (met, every result) so the caller can assert `met` with all attempts in its message."""
    results: list[T] = []
    for _ in range(attempts):
        results.append(measure())
        if meets(results[-1]):
            return True, results
    return False, results


def idle_cpus(host_busy_ratio: float) -> float:
    """CPUs idle during a measurement, from the host's busy share of all its CPUs (analysis.cpu's
    host_busy_ratio, NaN when telemetry read none: then NaN, which never excuses). Iowait counts as
    idle there, as the report counts it; `cpu_idle_ns` leaves it out."""
    return math.nan if host_busy_ratio is None else (1 - float(host_busy_ratio)) * (os.cpu_count() or 1)


def row_idle_cpus(row: Mapping[str, Any]) -> float:
    """`idle_cpus` of one measurement row (a frame from measurements_with_host_cpu)."""
    return idle_cpus(row["host_busy_ratio"])


def cpu_idle_ns(stat: str = "/proc/stat") -> int:
    """Idle time of all CPUs since boot, in ns (/proc/stat). Iowait is left out, though it is CPU time
    nobody used: beside a disk writer (stress-ng --hdd 1 --cpu 1) the machine showed 0.26 CPUs idle
    counting iowait while a tbf link passed 93.5 % of its rate (its dequeue was held up); beside a
    CPU hog alone (no iowait) 0.31-0.43 idle CPUs kept it exact."""
    with open(stat) as f:
        fields = f.readline().split()  # "cpu" user nice system idle iowait irq softirq steal ... (proc(5))
    return int(fields[4]) * (10**9 // os.sysconf("SC_CLK_TCK"))


class IdleCpus:
    """The mean idle CPUs (`cpu_idle_ns`) over a `with` block: `.cpus`, NaN until it ends."""

    def __enter__(self) -> IdleCpus:
        self.cpus = math.nan
        self._start = (cpu_idle_ns(), time.monotonic_ns())
        return self

    def __exit__(self, *exc: object) -> None:
        idle, now = cpu_idle_ns(), time.monotonic_ns()
        self.cpus = (idle - self._start[0]) / max(1, now - self._start[1])


class WithIdle(NamedTuple, Generic[T]):
    """A measurement's result and the mean idle CPUs (`IdleCpus`) while it ran."""

    value: T
    idle: float


def with_idle(measure: Callable[[], T]) -> WithIdle[T]:
    """Run `measure` and read the idle CPUs around it: a `best_of` attempt that
    `met_or_machine_bound` can judge (`idle=lambda m: m.idle`)."""
    with IdleCpus() as idle:
        value = measure()
    return WithIdle(value, idle.cpus)


def met_or_machine_bound(
    met: bool,
    results: list[T],
    idle: Callable[[T], float],
    floor: Callable[[T], bool],
    numbers: Callable[[list[T]], str],
) -> None:
    """Judge a `best_of`: pass when it met its claim; else skip only when every attempt had less than
    SPARE_CPUS idle (`idle`: the least idle CPUs during an attempt's measurements) and one attempt
    still reached `floor`; else fail. `numbers` says every attempt's results."""
    if met:
        return
    idles = [idle(r) for r in results]
    shown = ", ".join(f"{x:.2f}" for x in idles)
    if all(x < SPARE_CPUS for x in idles) and any(floor(r) for r in results):
        pytest.skip(
            f"no attempt met the claim and none had a spare CPU (idle CPUs {shown}): {numbers(results)}"
        )
    raise AssertionError(f"{numbers(results)} (idle CPUs during the attempts: {shown})")
