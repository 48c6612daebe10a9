"""One-factor ANOVA against a small case derived by hand, with unequal replications."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
import statsmodels.formula.api as smf

from vnetbench.analysis.contrasts import contrast, difference, successive_differences
from vnetbench.analysis.inputs import DataError
from vnetbench.analysis.one_factor import one_factor_anova

T6 = 2.4469118511449786  # t[0.975; 6]


@pytest.fixture
def hand() -> pd.DataFrame:
    """A: 1, 2, 3 (r=3, mean 2); B: 5, 7 (r=2, mean 6); C: 8, 9, 10, 9 (r=4, mean 9). N = 9.

    Σy = 54, ȳ.. = 6. SSY = 14 + 74 + 326 = 414, SS0 = 9·6² = 324, SST = 90.
    α = (−4, 0, 3), Σ r_j α_j = −12 + 0 + 12 = 0. SSA = 3·16 + 2·0 + 4·9 = 84.
    SSE = (1+0+1) + (1+1) + (1+0+1+0) = 6; 84 + 6 = 90. DF 2 and 6; MSA 42, MSE 1, F 42, s_e = 1.
    Var(α_j) = s_e² (1/r_j − 1/N): A 2/9, B 7/18, C 5/36.
    """
    data = {"A": [1, 2, 3], "B": [5, 7], "C": [8, 9, 10, 9]}
    return pd.DataFrame([{"cfg": k, "y_bps": v} for k, vs in data.items() for v in vs])


def test_hand_case(hand: pd.DataFrame) -> None:
    a = one_factor_anova(hand, "y_bps", "cfg")
    assert a.levels == ("A", "B", "C")
    assert a.replications == (3, 2, 4)
    assert (a.ssy, a.ss0, a.sst, a.ssa, a.sse) == pytest.approx((414, 324, 90, 84, 6))
    assert (a.df_a, a.df_e) == (2, 6)
    assert (a.msa, a.mse, a.f, a.s_e) == pytest.approx((42, 1, 42, 1))
    assert a.pct_a == pytest.approx(100 * 84 / 90)
    assert a.pct_e == pytest.approx(100 * 6 / 90)
    assert a.grand_mean == pytest.approx(6)
    assert [e.effect for e in a.effects] == pytest.approx([-4, 0, 3])
    assert [e.sd for e in a.effects] == pytest.approx(np.sqrt([2 / 9, 7 / 18, 5 / 36]))
    c = a.effect("C")
    assert (c.ci_low, c.ci_high) == pytest.approx((3 - T6 * np.sqrt(5 / 36), 3 + T6 * np.sqrt(5 / 36)))
    assert a.effect("B").significant is False and c.significant is True
    assert a.grand_mean_ci == pytest.approx((6 - T6 / 3, 6 + T6 / 3))
    assert a.residuals.tolist() == pytest.approx([-1, 0, 1, -1, 1, -1, 0, 1, 0])
    assert a.predicted.tolist() == pytest.approx([2, 2, 2, 6, 6, 9, 9, 9, 9])


def test_effect_intervals_agree_with_statsmodels(hand: pd.DataFrame) -> None:
    """α = L·means with L = I − 1 wᵀ, w = r/N: statsmodels' t_test on the cell-means model."""
    a = one_factor_anova(hand, "y_bps", "cfg")
    fit = smf.ols("y_bps ~ C(cfg) - 1", data=hand).fit()
    w = np.array([3, 2, 4]) / 9
    L = np.eye(3) - np.outer(np.ones(3), w)
    ci = fit.t_test(L).conf_int(alpha=0.05)
    assert np.ravel([[e.ci_low, e.ci_high] for e in a.effects]) == pytest.approx(np.ravel(ci))


def test_equal_replications_give_jains_variance() -> None:
    """With r each: Var(α_j) = s_e² (a − 1)/(a r)."""
    frame = pd.DataFrame({"f": [1, 1, 2, 2, 3, 3], "y": [1.0, 3.0, 4.0, 6.0, 8.0, 8.0]})
    a = one_factor_anova(frame, "y", "f")
    assert a.mse == pytest.approx((2 + 2 + 0) / 3)
    assert [e.sd for e in a.effects] == pytest.approx([a.s_e * np.sqrt(2 / 6)] * 3)


def test_contrasts_hand(hand: pd.DataFrame) -> None:
    """C − A = 9 − 2 = 7, s = s_e √(1/4 + 1/3) = √(7/12). (A + C)/2 − B = 5.5 − 6 = −0.5,
    s = √(0.25/3 + 0.25/4 + 1/2)."""
    a = one_factor_anova(hand, "y_bps", "cfg")
    d = difference(a, "C", "A")
    assert d.estimate == pytest.approx(7)
    assert d.sd == pytest.approx(np.sqrt(7 / 12))
    assert (d.ci_low, d.ci_high) == pytest.approx((7 - T6 * np.sqrt(7 / 12), 7 + T6 * np.sqrt(7 / 12)))
    assert d.dof == 6 and d.significant
    m = contrast(a, {"A": 0.5, "C": 0.5, "B": -1})
    assert m.estimate == pytest.approx(-0.5)
    assert m.sd == pytest.approx(np.sqrt(0.25 / 3 + 0.25 / 4 + 1 / 2))
    steps = successive_differences(a, confidence=0.90)
    assert [s.label for s in steps] == ["α(B) − α(A)", "α(C) − α(B)"]
    assert [s.estimate for s in steps] == pytest.approx([4, 3])
    assert steps[0].confidence == 0.90
    with pytest.raises(DataError, match="not a contrast"):
        contrast(a, {"A": 1, "B": 1})
    with pytest.raises(DataError, match="not in the model"):
        contrast(a, {"A": 1, "Z": -1})


def test_levels_restrict_and_order(hand: pd.DataFrame) -> None:
    a = one_factor_anova(hand, "y_bps", "cfg", levels=["C", "A"])
    assert a.levels == ("C", "A") and a.n == 7
    assert a.grand_mean == pytest.approx((6 + 36) / 7)


def test_numeric_levels_sort_numerically() -> None:
    frame = pd.DataFrame({"n": [10, 2, 1, 10, 2, 1], "y": [5.0, 2, 1, 6, 3, 1]})
    assert one_factor_anova(frame, "y", "n").levels == (1, 2, 10)


def test_to_dict_is_strict_json(hand: pd.DataFrame) -> None:
    d = one_factor_anova(hand, "y_bps", "cfg").to_dict(observations=True)
    text = json.dumps(d, allow_nan=False)
    back = json.loads(text)
    assert back["ssa"] == pytest.approx(84)
    assert back["effects"][2]["level"] == "C"
    assert back["table"][3]["component"] == "cfg"
    assert back["observations"]["residual"] == pytest.approx([-1, 0, 1, -1, 1, -1, 0, 1, 0])


def test_identical_replicates_leave_the_f_test_undefined() -> None:
    """SSE is exactly 0, so there is no random error to test against: F and p are undefined (not
    "significant"), and the JSON says why."""
    frame = pd.DataFrame({"f": ["a", "a", "b", "b"], "y": [0.1, 0.1, 0.3, 0.3]})
    a = one_factor_anova(frame, "y", "f")
    assert a.sse == 0 and a.f == float("inf") and np.isnan(a.p_value)
    assert a.significant is None and a.f_note.startswith("undefined: zero error variance")
    back = json.loads(json.dumps(a.to_dict(), allow_nan=False))
    assert back["f"] is None and back["p_value"] is None and back["significant"] is None
    assert back["f_note"].startswith("undefined: zero error variance")
    assert [e["significant"] for e in back["effects"]] == [None, None]
    # the difference of the two levels, 0.2 with s_u = s_e·√(2/2) = 0: t = 0.2/0 is undefined, so the
    # contrast is neither significant nor not (it said "significant" while its Holm-adjusted
    # counterpart in multiple.adjust said null for the same step)
    (step,) = successive_differences(a)
    assert step.estimate == pytest.approx(0.2) and step.sd == 0
    assert step.significant is None and step.to_dict()["significant"] is None


@pytest.mark.parametrize(
    ("frame", "match"),
    [
        (pd.DataFrame({"f": ["a", "a"], "y": [1.0, 2.0]}), "only one level"),
        (pd.DataFrame({"f": ["a", "b"], "y": [1.0, 2.0]}), "single observation"),
        (pd.DataFrame({"f": ["a", "b", "b"], "y": [1.0, "x", 2.0]}), "row 2 of the data holds 'x'"),
        (pd.DataFrame({"f": ["a", "b", "b"], "y": [1.0, None, 2.0]}), "row 2 of the data is empty"),
        (pd.DataFrame({"g": ["a", "b"], "y": [1.0, 2.0]}), "column 'f': not found"),
    ],
)
def test_bad_input_names_the_column(frame: pd.DataFrame, match: str) -> None:
    with pytest.raises(DataError, match=match):
        one_factor_anova(frame, "y", "f")


def test_confidence_must_be_a_probability(hand: pd.DataFrame) -> None:
    with pytest.raises(DataError, match="confidence"):
        one_factor_anova(hand, "y_bps", "cfg", confidence=95)
