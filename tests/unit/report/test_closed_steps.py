"""The time-series figures draw each interval as a step from its start (the drivers' sample time);
the last interval ended at the last point, a bare vertical tick. Sample times and values of
quickstart d1453f96's measurement 12 (vm1→vm2 in the star, together; s and Mbit/s as stored)."""

from __future__ import annotations

import numpy as np

from vnetbench.report.figures import closed_steps

T = np.array([1.0, 2.000108, 3.000133, 4.001177, 5.000685])
V = np.array([42.4392, 30.7432, 51.3909, 30.2839, 22.2927])


def test_the_last_interval_ends_one_median_interval_after_its_start() -> None:
    t, v = closed_steps(T, V)
    # intervals 1.000108, 1.000025, 1.001044, 0.999508 s: median (1.000025 + 1.000108) / 2
    assert np.allclose(t, [*T, 5.000685 + 1.0000665], rtol=0, atol=1e-9)
    assert v.tolist() == [*V.tolist(), 22.2927]  # the last value held to its interval's end


def test_a_single_point_is_left_as_it_is() -> None:
    t, v = closed_steps(T[:1], V[:1])
    assert t.tolist() == [1.0] and v.tolist() == [42.4392]
