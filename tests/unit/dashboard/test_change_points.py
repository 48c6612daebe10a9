"""The dashboard's change points: the statistics' finder on a pair's newest runs."""

from __future__ import annotations

import numpy as np

from vnetbench.dashboard.changepoints import LIVE_POINTS, change_points


def _series(n: int, step_at: int | None, seed: int = 3) -> list[float]:
    """100 Mbit/s with 1 % noise; from `step_at` on, 10 % less (the issue's synthetic series)."""
    rng = np.random.default_rng(seed)
    level = np.full(n, 100e6)
    if step_at is not None:
        level[step_at:] *= 0.9
    return list(level * (1 + 0.01 * rng.standard_normal(n)))


def test_a_step_is_found_where_it_is() -> None:
    (found,) = change_points(_series(240, 120))
    assert abs(found - 120) <= 2


def test_a_flat_series_has_none_and_a_short_one_is_not_searched() -> None:
    assert change_points(_series(240, None)) == []
    assert change_points(_series(6, None)) is None


def test_only_the_newest_runs_are_searched_and_indices_stay_in_the_whole_series() -> None:
    n = LIVE_POINTS + 100
    (found,) = change_points(_series(n, n - 60))  # a step inside the searched window
    assert abs(found - (n - 60)) <= 2
    assert change_points(_series(n, 50)) == []  # a step before the window is not looked for
