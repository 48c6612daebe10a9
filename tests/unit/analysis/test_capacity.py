"""Capacity recommendation on small hand-computed cases."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from vnetbench.analysis.capacity import recommend_capacity
from vnetbench.analysis.one_factor import OneFactorAnova, one_factor_anova

T4 = 2.7764451051977934  # t[0.975; 4]


def model(cells: dict[int, list[float]]) -> OneFactorAnova:
    frame = pd.DataFrame([{"tenants": k, "loss_ratio": v} for k, vs in cells.items() for v in vs])
    return one_factor_anova(frame, "loss_ratio", "tenants")


CELLS = {1: [0.001, 0.003], 2: [0.004, 0.006], 3: [0.008, 0.010], 4: [0.05, 0.07]}


def test_threshold_and_first_significant_increase() -> None:
    """Means 0.002, 0.005, 0.009, 0.06. SSE = 3 × 2 × 0.001² + 2 × 0.01² = 2.06e-4 on 4 DF,
    s_e = √(5.15e-5) = 0.0071764; a step has s = s_e √(2/2) = s_e, half-width t[0.975;4]·s_e = 0.019925.
    Steps 0.003, 0.004, 0.051: only 3 → 4 is significant (0.031, 0.071)."""
    rec = recommend_capacity(model(CELLS))  # threshold 0.01 of a ratio = 1 %
    s_e = np.sqrt(2.06e-4 / 4)
    last = rec.steps[2].contrast
    assert last.sd == pytest.approx(s_e)
    assert (last.ci_low, last.ci_high) == pytest.approx((0.051 - T4 * s_e, 0.051 + T4 * s_e))
    assert [s.contrast.significant for s in rec.steps] == [False, False, True]
    assert rec.max_level_under_threshold == 3
    assert rec.first_significant_increase == 4
    assert rec.last_level_before_increase == 3
    assert rec.recommended == 3
    assert "tenants ≤ 3 keeps the mean loss ≤ 1.00 %" in rec.text
    assert "from 3 to 4" in rec.text
    # the difference, its interval and s in percentage points: 5.1 ∓ 2.7764 · 0.71764 = (3.11, 7.09);
    # onl-udp-receivers read 'rises by +6.38 pp, 95 % interval (6.34, 6.43 %)'; the interval as the
    # report's Findings and tables write one, '(lo to hi)', its unit after it
    assert "the mean rises by +5.10 pp, 95 % interval (3.11 to 7.09) pp excludes 0" in rec.text
    assert "s_e = 0.718 %, t[4] = 2.776, s = s_e·√(Σh²/r) = 0.718 pp)" in rec.text
    assert rec.to_dict()["recommended"] == 3


def test_lower_threshold_wins() -> None:
    rec = recommend_capacity(model(CELLS), threshold=0.004)
    assert rec.max_level_under_threshold == 1
    assert rec.recommended == 1


def test_nothing_under_threshold() -> None:
    rec = recommend_capacity(model(CELLS), threshold=0.001)
    assert rec.max_level_under_threshold is None and rec.recommended is None
    assert "no level keeps" in rec.text


def test_no_significant_step() -> None:
    rec = recommend_capacity(model({1: [0.0, 0.02], 2: [0.0, 0.02], 3: [0.0, 0.02]}), threshold=0.05)
    assert rec.first_significant_increase is None and rec.last_level_before_increase is None
    assert rec.max_level_under_threshold == 3 and rec.recommended == 3
    assert "no step between neighbouring levels" in rec.text


def test_dip_back_under_is_not_counted() -> None:
    rec = recommend_capacity(model({1: [0.0, 0.002], 2: [0.03, 0.05], 3: [0.004, 0.006]}))
    assert rec.max_level_under_threshold == 1
    assert "dip back under" in rec.text


def test_an_increase_identical_in_every_repetition_is_exact_not_significant() -> None:
    """Every repetition identical: means 0.001, 0.001, 0.004, 0.02 (by hand), SSE = 0, s_e = 0. The
    steps' test is undefined (significant None, as every zero-variance contrast), but the differences
    are exact: 2 → 3 rises by 0.003 in every repetition, the first exact increase, so 2 is the last
    level before it. The threshold 1 % keeps levels 1–3 (0.004 ≤ 0.01 < 0.02): recommended 2."""
    rec = recommend_capacity(model({1: [0.001] * 3, 2: [0.001] * 3, 3: [0.004] * 3, 4: [0.02] * 3}))
    assert [s.contrast.sd for s in rec.steps] == [0, 0, 0]
    assert [s.contrast.significant for s in rec.steps] == [None, None, None]
    assert [s.contrast.exact for s in rec.steps] == [True, True, True]
    assert [s.contrast.rise for s in rec.steps] == [False, True, True]
    assert rec.first_significant_increase is None and rec.first_exact_increase == 3
    assert rec.last_level_before_increase == 2 and rec.max_level_under_threshold == 3
    assert rec.recommended == 2
    assert "from 2 to 3 the mean rises by +0.300 pp in every repetition" in rec.text
    assert "excludes 0" not in rec.text  # a zero-width interval is not a test
    d = rec.to_dict()
    assert d["first_exact_increase"] == 3 and d["first_significant_increase"] is None
    assert [s["significant"] for s in d["steps"]] == [None, None, None]
    assert [s["exact"] for s in d["steps"]] == [True, True, True]


def test_identical_repetitions_without_an_increase() -> None:
    rec = recommend_capacity(model({1: [0.002] * 2, 2: [0.002] * 2, 3: [0.001] * 2}))
    assert rec.first_exact_increase is None and rec.first_significant_increase is None
    assert rec.recommended == 3
    assert "no test applies, and no level's mean is above the previous one's" in rec.text


def test_a_significant_step_is_not_exact() -> None:
    rec = recommend_capacity(model(CELLS))
    assert [s.contrast.exact for s in rec.steps] == [False, False, False]
    assert [s.contrast.rise for s in rec.steps] == [False, False, True]
    assert rec.first_exact_increase is None
