"""E-divisive means with a permutation test on synthetic periodic series (issue #14)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from vnetbench.analysis.changepoints import _best_split, change_points
from vnetbench.analysis.inputs import DataError


@pytest.mark.parametrize(("seed", "noise"), [(1, 0.01), (2, 0.02), (3, 0.03)])
def test_a_ten_percent_step_at_120_of_240_is_one_change_point(seed: int, noise: float) -> None:
    """240 hourly runs at 9.4 Gbit/s with 1–3 % noise, −10 % from run 120 on: exactly one change
    point, within ±2 runs of 120, with its time and a relative change near −10 %."""
    g = np.random.default_rng(seed)
    x = 9.4e9 * (1 + g.normal(0, noise, 240))
    x[120:] *= 0.9
    times = pd.date_range("2026-11-01", periods=240, freq="h", tz="UTC")
    found = change_points(x, times)
    assert len(found) == 1
    cp = found[0]
    assert abs(cp.index - 120) <= 2 and cp.time == times[cp.index]
    assert cp.relative_change == pytest.approx(-0.10, abs=0.02)
    assert cp.p_value <= 0.01


@pytest.mark.parametrize(("seed", "noise"), [(4, 0.01), (5, 0.03)])
def test_a_flat_series_has_none(seed: int, noise: float) -> None:
    g = np.random.default_rng(seed)
    assert change_points(9.4e9 * (1 + g.normal(0, noise, 240))) == []


def test_two_steps_are_both_found() -> None:
    g = np.random.default_rng(6)
    x = 100 * (1 + g.normal(0, 0.01, 300))
    x[100:] *= 0.9
    x[200:] *= 1.2
    assert [abs(c.index - t) <= 2 for c, t in zip(change_points(x), (100, 200), strict=True)] == [True, True]


def test_energy_statistic_by_hand() -> None:
    """x = (0, 0, 1, 1), min_size 2, τ = 2: between-sum Σ|X_i − Y_j| = 4 → 2·4/(2·2) = 2, both
    within-sums 0, Q = 2·2/4 · 2 = 2."""
    assert _best_split(np.array([0.0, 0.0, 1.0, 1.0]), 2) == (2.0, 2)


def _q_by_definition(x: np.ndarray, tau: int) -> float:
    """Matteson & James (2014) eq. for α = 1, summed pair by pair (no prefix sums)."""
    left, right = x[:tau], x[tau:]
    m, k = left.size, right.size
    between = sum(abs(a - b) for a in left for b in right)
    within_left = sum(abs(left[i] - left[j]) for i in range(m) for j in range(i + 1, m))
    within_right = sum(abs(right[i] - right[j]) for i in range(k) for j in range(i + 1, k))
    e = 2 * between / (m * k) - within_left / (m * (m - 1) / 2) - within_right / (k * (k - 1) / 2)
    return m * k / (m + k) * e


@pytest.mark.parametrize("n", [10, 17, 40])
def test_best_split_is_the_definitions_maximum(n: int) -> None:
    """The prefix-sum shortcut gives the same Q and split as the statistic written out pair by pair."""
    g = np.random.default_rng(n)
    x = g.normal(0, 1, n) + (np.arange(n) >= n // 3) * 1.5
    qs = {tau: _q_by_definition(x, tau) for tau in range(5, n - 5 + 1)}
    best = max(qs, key=qs.__getitem__)
    q, tau = _best_split(x, 5)
    assert tau == best
    assert q == pytest.approx(qs[best], rel=1e-12)


def test_permutations_stop_once_the_split_cannot_be_significant(monkeypatch: pytest.MonkeyPatch) -> None:
    """At 0.01 with 199 permutations a second permutation Q ≥ the observed one already makes p ≥
    3/200: a flat series' search stops after a few permutations, not 199; a real step still gets
    all 199 (p = 1/200)."""
    import vnetbench.analysis.changepoints as module

    calls = []
    strongest = module._strongest
    monkeypatch.setattr(module, "_strongest", lambda *a: calls.append(1) or strongest(*a))
    g = np.random.default_rng(4)
    assert change_points(100 * (1 + g.normal(0, 0.01, 240))) == []
    assert len(calls) < 40
    calls.clear()
    x = 100 * (1 + g.normal(0, 0.01, 240))
    x[120:] *= 0.9
    [cp] = change_points(x)
    assert cp.p_value == pytest.approx(1 / 200)
    assert len(calls) >= 200  # the observed split and its 199 permutations, then the next search


def test_bad_series() -> None:
    with pytest.raises(DataError, match="finite"):
        change_points([1.0, float("nan")])
    with pytest.raises(DataError, match="one time per value"):
        change_points([1.0, 2.0], times=[1])
