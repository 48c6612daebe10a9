"""A SIGTERM that arrives while a run measures or tears down is never lost: the teardown finishes,
and the caller (a monitor between runs) learns that it was asked to stop. A CI run of the monitor's test lost
a SIGTERM this way and ran on for 40 more runs."""

from __future__ import annotations

import contextlib
import os
import signal

from vnetbench.run.runner import _signals_deferred, _signals_raise_interrupted


def test_a_signal_during_teardown_is_recorded_and_the_previous_handler_comes_back() -> None:
    seen: list[int] = []
    before = signal.signal(signal.SIGTERM, lambda signum, _f: seen.append(signum))
    try:
        with _signals_deferred() as received:
            os.kill(os.getpid(), signal.SIGTERM)
            finished_teardown = True  # the signal did not interrupt the block
        assert finished_teardown and received == ["SIGTERM"]
        assert seen == []  # deferred, not passed on during the teardown
        os.kill(os.getpid(), signal.SIGTERM)
        assert seen == [signal.SIGTERM]  # the caller's own handler is back
    finally:
        signal.signal(signal.SIGTERM, before)


def test_no_signal_no_request() -> None:
    with _signals_deferred() as received:
        pass
    assert received == []


def test_a_signal_during_the_run_is_recorded_even_when_its_exception_is_swallowed() -> None:
    # contextlib.suppress: what a retry loop around a database write does with the exception
    with _signals_raise_interrupted() as received, contextlib.suppress(Exception):
        os.kill(os.getpid(), signal.SIGTERM)
    assert received == ["SIGTERM"]
