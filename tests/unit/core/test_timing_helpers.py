"""tests/helpers/timing.py's judge of a best-of claim: when a failed claim may be excused by a machine
that had no CPU to spare, and when it may not."""

from __future__ import annotations

import math
import os
import time
from pathlib import Path

import pytest

from tests.helpers.timing import (
    SPARE_CPUS,
    IdleCpus,
    cpu_idle_ns,
    idle_cpus,
    met_or_machine_bound,
    with_idle,
)

# (value, idle CPUs during the attempt): the claim is value >= 0.98, the floor value >= 0.85
BUSY = SPARE_CPUS / 2
IDLE = 1.0


def judge(met: bool, attempts: list[tuple[float, float]]) -> None:
    met_or_machine_bound(
        met,
        attempts,
        idle=lambda a: a[1],
        floor=lambda a: a[0] >= 0.85,
        numbers=lambda rs: ", ".join(f"{v:.2f}" for v, _ in rs),
    )


def test_a_met_claim_passes_whatever_the_load() -> None:
    judge(True, [(0.90, BUSY), (0.99, IDLE)])


def test_a_missed_claim_on_a_machine_busy_every_time_skips_with_the_numbers() -> None:
    with pytest.raises(pytest.skip.Exception, match=r"0\.90, 0\.93") as skipped:
        judge(False, [(0.90, BUSY), (0.93, 0.0)])
    assert f"idle CPUs {BUSY:.2f}, 0.00" in str(skipped.value)


def test_a_missed_claim_fails_when_one_attempt_had_a_spare_cpu() -> None:
    with pytest.raises(AssertionError, match=r"0\.90, 0\.93"):
        judge(False, [(0.90, BUSY), (0.93, SPARE_CPUS)])


def test_a_missed_claim_fails_under_the_floor_however_busy_the_machine() -> None:
    with pytest.raises(AssertionError, match=r"0\.80, 0\.84"):
        judge(False, [(0.80, 0.0), (0.84, 0.0)])


def test_an_attempt_without_a_cpu_reading_is_never_excused() -> None:
    with pytest.raises(AssertionError):
        judge(False, [(0.90, BUSY), (0.93, math.nan)])


def test_idle_cpus_counts_every_cpu_of_this_machine() -> None:
    assert idle_cpus(0.75) == pytest.approx(0.25 * (os.cpu_count() or 1))
    assert idle_cpus(1.0) == 0.0
    assert math.isnan(idle_cpus(None)) and math.isnan(idle_cpus(math.nan))


def test_idle_time_is_the_idle_field_without_iowait(tmp_path: Path) -> None:
    # proc(5): the "cpu" line is user nice system idle iowait irq softirq steal ..., in clock ticks
    stat = tmp_path / "stat"
    stat.write_text("cpu  10 20 30 400 50 6 7 8 0 0\ncpu0 5 10 15 200 25 3 3 4 0 0\n")
    tick_ns = 10**9 // os.sysconf("SC_CLK_TCK")
    assert cpu_idle_ns(str(stat)) == 400 * tick_ns


def test_idle_cpus_over_a_block_are_between_none_and_every_cpu() -> None:
    with IdleCpus() as idle:
        assert math.isnan(idle.cpus)
        time.sleep(0.3)  # some time for the block to measure; nothing is waited for
    assert 0 <= idle.cpus <= (os.cpu_count() or 1) * 1.05, idle.cpus


def test_with_idle_returns_the_result_and_the_idle_cpus_while_it_ran() -> None:
    def spin() -> str:
        # keeps this CPU busy for 0.3 s, so at most the machine's other CPUs were idle meanwhile
        end = time.monotonic() + 0.3
        while time.monotonic() < end:
            pass
        return "measured"

    value, idle = with_idle(spin)
    assert value == "measured"
    assert 0 <= idle <= (os.cpu_count() or 1) - 0.8, idle
