"""Welch's t on a group without spread (analysis/contrasts.welch): the numbers of the textbook
formula, and no scipy "precision loss" warning in the middle of a user's output (it printed in a CI
run of `vnetbench analyze` on nearly equal throughputs, 2026-11-27)."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

from vnetbench.analysis.contrasts import welch


def test_welch_on_a_group_without_spread_is_the_formulas_and_says_nothing() -> None:
    a, b = np.array([10.0, 10.0, 10.0]), np.array([11.0, 12.0, 13.0])
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # any warning fails the test
        w = welch(b, a)
        ci = w.confidence_interval(0.95)
    # by hand: difference 2, s_b^2 = 1, s_a^2 = 0 -> se = sqrt(1/3), t = 2 sqrt(3) = 3.4641;
    # Welch-Satterthwaite df = (1/3)^2 / ((1/3)^2 / 2) = 2; t(0.975; 2) = 4.3027 (Jain, Table A.4)
    assert w.statistic == pytest.approx(2 * math.sqrt(3), rel=1e-9)
    assert w.df == pytest.approx(2.0, rel=1e-9)
    half = 4.302653 * math.sqrt(1 / 3)
    assert (ci.low, ci.high) == (pytest.approx(2 - half, rel=1e-5), pytest.approx(2 + half, rel=1e-5))


def test_scipy_itself_still_warns_there_so_the_test_above_can_fail() -> None:
    from scipy import stats

    with pytest.warns(RuntimeWarning, match="Precision loss"):
        stats.ttest_ind(np.array([11.0, 12.0, 13.0]), np.array([10.0, 10.0, 10.0]), equal_var=False)
