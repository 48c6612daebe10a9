"""Two-factor designs (Jain ch. 21 and 22): effects, intervals, level means, predicted responses."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import statsmodels.formula.api as smf
from scipy import stats

from vnetbench.analysis.inputs import DataError
from vnetbench.analysis.stable import NOTE_NO_ERROR
from vnetbench.analysis.two_factor import two_factor

T2 = stats.t.ppf(0.975, 2)


@pytest.fixture
def unreplicated() -> pd.DataFrame:
    """A1  A2  A3
    B1:       3   5  10
    B2:       5   9  12
    μ = 44/6 = 7.3333; column means 4, 7, 11 → α = −10/3, −1/3, 11/3; row means 6, 26/3 → β = ∓4/3.
    e_ij = y − μ − α_j − β_i: B1 (1/3, −2/3, 1/3), B2 (−1/3, 2/3, −1/3). SSE = 12/9 = 4/3 on
    (a−1)(b−1) = 2 DF, s_e² = 2/3. SSA = bΣα² = 2·222/9 = 148/3 = 49.333, SSB = aΣβ² = 3·32/9 =
    32/3; SST = 184/3 = SSA + SSB + SSE. F_A = (148/6)/(2/3) = 37, F_B = (32/3)/(2/3) = 16.
    Jain table 21.5: s_μ = s_e/√(ab) = 1/3, s_α = s_e√((a−1)/(ab)) = √2/3, s_β = s_e√((b−1)/(ab)) = 1/3."""
    rows = [
        ("A1", "B1", 3),
        ("A2", "B1", 5),
        ("A3", "B1", 10),
        ("A1", "B2", 5),
        ("A2", "B2", 9),
        ("A3", "B2", 12),
    ]
    return pd.DataFrame(rows, columns=["A", "B", "y"])


def test_without_replication_by_hand(unreplicated: pd.DataFrame) -> None:
    r = two_factor(unreplicated, "y", ["A", "B"])
    assert not r.replicated and r.df_e == 2
    assert [t.ss for t in r.terms] == pytest.approx([148 / 3, 32 / 3])
    assert [t.f for t in r.terms] == pytest.approx([37, 16])
    assert r.sse == pytest.approx(4 / 3) and r.sst == pytest.approx(184 / 3)
    assert r.estimate("μ").value == pytest.approx(44 / 6)
    assert r.estimate("μ").sd == pytest.approx(1 / 3)
    alpha = r.of_kind("alpha")
    assert [e.value for e in alpha] == pytest.approx([-10 / 3, -1 / 3, 11 / 3])
    assert [e.sd for e in alpha] == pytest.approx([np.sqrt(2) / 3] * 3)
    assert [e.value for e in r.of_kind("beta")] == pytest.approx([-4 / 3, 4 / 3])
    assert [e.sd for e in r.of_kind("beta")] == pytest.approx([1 / 3] * 2)
    assert r.of_kind("gamma") == []
    assert r.residuals.tolist() == pytest.approx([1 / 3, -2 / 3, 1 / 3, -1 / 3, 2 / 3, -1 / 3])
    a3 = r.estimate("α(A3)")
    assert (a3.ci_low, a3.ci_high) == pytest.approx(
        (11 / 3 - T2 * np.sqrt(2) / 3, 11 / 3 + T2 * np.sqrt(2) / 3)
    )
    # level mean μ + α_j: s_e/√b (Jain table 21.5)
    assert r.estimate("μ + α(A1)").value == pytest.approx(4)
    assert r.estimate("μ + α(A1)").sd == pytest.approx(np.sqrt(2 / 3) / np.sqrt(2))


@pytest.mark.parametrize(("scale", "shift"), [(1.0, 0.0), (1e9, 1e10)])
def test_an_exactly_additive_response_without_replication_has_an_undefined_f(
    scale: float, shift: float
) -> None:
    """y = a_j + b_i with a = 0.3, 1.1, 2.9 and b = 0.1, 0.7 (and 1e9·y + 1e10): every interaction
    term y − μ − α_j − β_i is 0 by hand, so SSE = 0 on (3 − 1)(2 − 1) = 2 DF and, as for any model
    without error variance (Jain ch. 21; docs "Exact at any scale"), F is undefined. The rounding of
    0.1 + 0.3 and friends left SSE ≈ 1e-31 and printed F ≈ 8e31, p ≈ 1e-32, "significant". The
    effects are still the hand ones: α = a_j − 4.3/3 = −3.4/3, −1/3, 4.4/3; β = ∓0.3."""
    rows = [(f"a{j}", f"b{i}", scale * (a + b) + shift)
            for i, b in enumerate([0.1, 0.7]) for j, a in enumerate([0.3, 1.1, 2.9])]  # fmt: skip
    r = two_factor(pd.DataFrame(rows, columns=["A", "B", "y"]), "y", ["A", "B"])
    assert r.sse == 0 and r.df_e == 2
    for term in r.terms:
        assert term.f_note == NOTE_NO_ERROR and term.significant is None
    assert [e.value / scale for e in r.of_kind("alpha")] == pytest.approx([-3.4 / 3, -1 / 3, 4.4 / 3])
    assert [e.value / scale for e in r.of_kind("beta")] == pytest.approx([-0.3, 0.3])
    assert all(e.sd == 0 for e in r.of_kind("alpha"))


def test_without_replication_agrees_with_statsmodels(unreplicated: pd.DataFrame) -> None:
    """The additive OLS with sum-to-zero coding: its A coefficients are α_1, α_2 (α_3 = −α_1 − α_2),
    its standard errors Jain's s_α; its prediction intervals ŷ ∓ t·s_e√(1/n_eff + 1)."""
    r = two_factor(unreplicated, "y", ["A", "B"])
    fit = smf.ols("y ~ C(A, Sum) + C(B, Sum)", data=unreplicated).fit()
    assert fit.params.iloc[1:3].tolist() == pytest.approx([e.value for e in r.of_kind("alpha")[:2]])
    assert fit.bse.iloc[1:3].tolist() == pytest.approx([e.sd for e in r.of_kind("alpha")[:2]])
    frame = fit.get_prediction(unreplicated).summary_frame(alpha=0.05)
    predicted = {e.levels: e for e in r.of_kind("predicted")}
    for (_, row), (_, pred) in zip(unreplicated.iterrows(), frame.iterrows(), strict=True):
        e = predicted[(row["A"], row["B"])]
        assert e.value == pytest.approx(pred["mean"])
        assert (e.ci_low, e.ci_high) == pytest.approx((pred["mean_ci_lower"], pred["mean_ci_upper"]))
        assert e.prediction == pytest.approx((pred["obs_ci_lower"], pred["obs_ci_upper"]))


def test_with_replication_matches_jains_table_22_5() -> None:
    """A 3 × 2 design with r = 2, balanced: every γ_ij has s_e √((a−1)(b−1)/(abr)), every α_j
    s_e √((a−1)/(abr)), β_i s_e √((b−1)/(abr)), μ s_e/√(abr) (Jain table 22.5); the intervals of the
    effects agree with statsmodels' t_test of the same contrasts of the cell-means model."""
    rng = np.random.default_rng(22)
    cells = [(a, b) for b in ("B1", "B2") for a in ("A1", "A2", "A3")]
    frame = pd.DataFrame(
        [{"A": a, "B": b, "y": rng.normal(10 + i, 1)} for i, (a, b) in enumerate(cells) for _ in range(2)]
    )
    r = two_factor(frame, "y", ["A", "B"])
    assert r.replicated and r.df_e == 6
    s_e, a, b, n = r.s_e, 3, 2, 2
    assert r.estimate("μ").sd == pytest.approx(s_e / np.sqrt(a * b * n))
    assert [e.sd for e in r.of_kind("alpha")] == pytest.approx([s_e * np.sqrt((a - 1) / (a * b * n))] * 3)
    assert [e.sd for e in r.of_kind("beta")] == pytest.approx([s_e * np.sqrt((b - 1) / (a * b * n))] * 2)
    assert [e.sd for e in r.of_kind("gamma")] == pytest.approx(
        [s_e * np.sqrt((a - 1) * (b - 1) / (a * b * n))] * 6
    )
    means = frame.groupby(["B", "A"])["y"].mean()  # rows B, columns A
    m = means.unstack().to_numpy()
    g = r.estimate("γ(A2, B1)")
    assert g.value == pytest.approx(m[0, 1] - m[:, 1].mean() - m[0, :].mean() + m.mean())
    fit = smf.ols("y ~ C(B):C(A) - 1", data=frame).fit()
    names = list(fit.params.index)
    weights = np.zeros(len(names))
    for i, bl in enumerate(("B1", "B2")):
        for j, al in enumerate(("A1", "A2", "A3")):
            w = (i == 0) * (j == 1) - (j == 1) / 2 - (i == 0) / 3 + 1 / 6
            weights[names.index(f"C(B)[{bl}]:C(A)[{al}]")] = w
    ci = fit.t_test(weights).conf_int(alpha=0.05)[0]
    assert (g.ci_low, g.ci_high) == pytest.approx(tuple(ci))
    # predicted response of a cell with replication: its mean, s_e/√r, and s_e√(1/r + 1) for one more run
    p = r.estimate("ŷ(A3, B2)")
    t6 = stats.t.ppf(0.975, 6)
    assert p.value == pytest.approx(m[1, 2])
    assert p.ci_high - p.value == pytest.approx(t6 * s_e / np.sqrt(2))
    assert p.prediction[1] - p.value == pytest.approx(t6 * s_e * np.sqrt(1 / 2 + 1))


def test_two_factor_needs_every_cell() -> None:
    frame = pd.DataFrame({"A": ["a", "a", "b"], "B": ["x", "y", "x"], "y": [1.0, 2.0, 3.0]})
    with pytest.raises(DataError, match="A=b, B=y was not measured"):
        two_factor(frame, "y", ["A", "B"])
