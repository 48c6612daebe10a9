"""The loss section's counter-over-time figure draws each counter delta over the interval it closed.
The store keeps a counter's non-zero deltas only; quickstart d1453f96's measurement 18 has readings at
the times below (s after the baseline, from its telemetry rows) and tbf drops at three of them (691,
36 and 101): the 101 belong to the 62 ms from 5.013 to 5.075 s, not to 0.8 s before 5.075."""

from __future__ import annotations

import numpy as np

from vnetbench.report.sections.loss import interval_starts

READINGS = np.array([1.006626048, 2.006256066, 3.025632301, 4.01005314, 5.013023593, 5.075182188])
DROPS_AT = np.array([3.025632301, 5.013023593, 5.075182188])


def test_each_delta_starts_at_the_reading_before_it() -> None:
    assert interval_starts(DROPS_AT, READINGS).tolist() == [2.006256066, 4.01005314, 5.013023593]


def test_the_first_reading_s_interval_starts_at_the_baseline() -> None:
    assert interval_starts(np.array([1.006626048, 4.01005314]), READINGS).tolist() == [0.0, 3.025632301]
    # without CPU readings, the counter's own times are the only ones known
    assert interval_starts(DROPS_AT, np.array([])).tolist() == [0.0, 3.025632301, 5.013023593]
