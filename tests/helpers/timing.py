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
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")


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
