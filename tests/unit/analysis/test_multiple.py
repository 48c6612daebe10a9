"""Tukey's HSD and Holm/Bonferroni adjustments against closed forms."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from vnetbench.analysis.contrasts import successive_differences
from vnetbench.analysis.multiple import adjust, tukey_hsd
from vnetbench.analysis.one_factor import one_factor_anova


@pytest.fixture
def hand() -> pd.DataFrame:
    """The hand case of test_one_factor: A 1, 2, 3; B 5, 7; C 8, 9, 10, 9 (s_e = 1 on 6 DF)."""
    data = {"A": [1, 2, 3], "B": [5, 7], "C": [8, 9, 10, 9]}
    return pd.DataFrame([{"cfg": k, "y": v} for k, vs in data.items() for v in vs])


def test_tukey_kramer_half_widths(hand: pd.DataFrame) -> None:
    """Half-width q[0.95; 3, 6]/√2 · s_e √(1/r_i + 1/r_j), q from scipy's studentized range
    (independent of statsmodels): B − A = 4 with √(1/2 + 1/3), C − B = 3 with √(1/4 + 1/2)."""
    a = one_factor_anova(hand, "y", "cfg")
    q = stats.studentized_range.ppf(0.95, 3, 6)
    pairs = {(p.high, p.low): p for p in tukey_hsd(a)}
    assert set(pairs) == {("B", "A"), ("C", "A"), ("C", "B")}
    for (high, low), est, rr in [
        (("B", "A"), 4, 1 / 2 + 1 / 3),
        (("C", "B"), 3, 1 / 4 + 1 / 2),
        (("C", "A"), 7, 1 / 4 + 1 / 3),
    ]:
        p = pairs[(high, low)]
        half = q / np.sqrt(2) * np.sqrt(rr)
        assert p.estimate == pytest.approx(est)
        assert (p.ci_low, p.ci_high) == pytest.approx((est - half, est + half), rel=1e-6)
    # Tukey's p of C − B: P(Q[3, 6] > |3|/(s_e √(3/4 / 2)))
    q_cb = 3 / np.sqrt(0.75 / 2)
    assert pairs[("C", "B")].p_adjusted == pytest.approx(stats.studentized_range.sf(q_cb, 3, 6), abs=2e-3)


def test_tukey_same_at_any_offset(hand: pd.DataFrame) -> None:
    small = tukey_hsd(one_factor_anova(hand, "y", "cfg"))
    big = tukey_hsd(one_factor_anova(hand.assign(y=1e9 * hand["y"] + 1e10), "y", "cfg"))
    for s, b in zip(small, big, strict=True):
        assert (b.ci_low / 1e9, b.ci_high / 1e9) == pytest.approx((s.ci_low, s.ci_high), rel=1e-7)


def test_holm_and_bonferroni_by_hand(hand: pd.DataFrame) -> None:
    """Successive differences B − A = 4 (s = √(1/2 + 1/3)) and C − B = 3 (s = √(3/4)), t on 6 DF.
    Raw p = 2·P(T6 > |u/s|). Holm: the smaller p times 2, the larger times 1 (then the running
    maximum); Bonferroni: both times 2; Bonferroni intervals with t[1 − 0.05/4; 6]."""
    a = one_factor_anova(hand, "y", "cfg")
    adjusted = adjust(successive_differences(a))
    p = [2 * stats.t.sf(4 / np.sqrt(5 / 6), 6), 2 * stats.t.sf(3 / np.sqrt(3 / 4), 6)]
    assert [x.p_value for x in adjusted] == pytest.approx(p)
    order = np.argsort(p)
    holm = np.empty(2)
    holm[order[0]] = 2 * p[order[0]]
    holm[order[1]] = max(holm[order[0]], p[order[1]])
    assert [x.p_holm for x in adjusted] == pytest.approx(holm.tolist())
    assert [x.p_bonferroni for x in adjusted] == pytest.approx([min(1, 2 * v) for v in p])
    t = stats.t.ppf(1 - 0.05 / 4, 6)
    assert adjusted[1].bonferroni_ci == pytest.approx((3 - t * np.sqrt(0.75), 3 + t * np.sqrt(0.75)))
    assert all(x.significant_holm for x in adjusted)
