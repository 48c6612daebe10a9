"""2^k r designs (Jain ch. 18) and general full-factorial ANOVA, against hand derivations."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from vnetbench.analysis.full_factorial import full_factorial_anova
from vnetbench.analysis.inputs import DataError
from vnetbench.analysis.two_k_r import two_k_r

T4 = 2.7764451051977934  # t[0.975; 4]


def frame_of(cells: dict[tuple, list[float]], names: tuple[str, ...] = ("A", "B")) -> pd.DataFrame:
    return pd.DataFrame([dict(zip(names, k, strict=True)) | {"y": y} for k, ys in cells.items() for y in ys])


def test_2x2x2_by_hand() -> None:
    """A 2^2·2 design, derived by hand.

    Observations (A, B → y):  (−,−): 2, 4   (+,−): 6, 8   (−,+): 3, 5   (+,+): 11, 13
    Cell means ȳ: 3, 7, 4, 12;  cell sums: 6, 14, 8, 24.

    Sign table (standard order, A fastest):
         I   A   B   AB |  ȳ
         1  −1  −1   +1 |  3
         1  +1  −1   −1 |  7
         1  −1  +1   −1 |  4
         1  +1  +1   +1 | 12
    Σ(sign·ȳ): 26  12   6    4      q = Σ/4:  q0 = 6.5, qA = 3, qB = 1.5, qAB = 1

    SS = 2^2·r·q² = 8q²: SSA = 72, SSB = 18, SSAB = 8.
    SSE = Σ(y − ȳ_cell)² = 8 × 1² = 8.  SSY = 444, SS0 = 8 × 6.5² = 338, SST = 106 = 72 + 18 + 8 + 8.
    Variation: A 67.92 %, B 16.98 %, AB 7.55 %, errors 7.55 %.
    s_e² = SSE / (2^2 (r − 1)) = 8/4 = 2;  s_q = s_e / √(2^2 r) = √2/√8 = 0.5;  t[0.975; 4] = 2.776445.
    95 % CIs: q ∓ 1.388: q0 (5.112, 7.888), qA (1.612, 4.388), qB (0.112, 2.888) all significant;
    qAB (−0.388, 2.388) includes 0, not significant.
    """
    r = two_k_r(
        frame_of({(-1, -1): [2, 4], (1, -1): [6, 8], (-1, 1): [3, 5], (1, 1): [11, 13]}), "y", ["A", "B"]
    )
    st = r.sign_table
    assert st[["I", "A", "B", "AB"]].values.tolist() == [
        [1, -1, -1, 1],
        [1, 1, -1, -1],
        [1, -1, 1, -1],
        [1, 1, 1, 1],
    ]
    assert st["mean"].tolist() == [3, 7, 4, 12]
    assert st["sum"].tolist() == [6, 14, 8, 24]
    assert [e.letters for e in r.effects] == ["I", "A", "B", "AB"]
    assert [e.q for e in r.effects] == pytest.approx([6.5, 3, 1.5, 1])
    assert [e.ss for e in r.effects[1:]] == pytest.approx([72, 18, 8])
    assert (r.ssy, r.ss0, r.sst, r.sse) == pytest.approx((444, 338, 106, 8))
    assert [e.pct_variation for e in r.effects[1:]] == pytest.approx(
        [100 * 72 / 106, 100 * 18 / 106, 100 * 8 / 106]
    )
    assert r.pct_e == pytest.approx(100 * 8 / 106)
    assert (r.df_e, r.s_e, r.s_q) == pytest.approx((4, np.sqrt(2), 0.5))
    half = T4 * 0.5
    assert [e.ci_low for e in r.effects] == pytest.approx([6.5 - half, 3 - half, 1.5 - half, 1 - half])
    assert [e.ci_high for e in r.effects] == pytest.approx([6.5 + half, 3 + half, 1.5 + half, 1 + half])
    assert [e.significant for e in r.effects] == [True, True, True, False]
    assert r.effect("AB").ci_low == pytest.approx(-0.38822, abs=1e-5)


def test_jains_memory_interconnect_example() -> None:
    """Jain's 2^2·3 example (ch. 18): q0 = 41, qA = 21.5, qB = 9.5, qAB = 5; SSA = 5547, SSB = 1083,
    SSAB = 300, SSE = 102, SST = 7032 (78.9 %, 15.4 %, 4.3 %, 1.5 %). s_e = √(102/8) = 3.57,
    s_q = 3.57/√12 = 1.03, 90 % intervals with t[0.95; 8] = 1.86: q ∓ 1.92, all significant."""
    cells = {(-1, -1): [15, 18, 12], (1, -1): [45, 48, 51], (-1, 1): [25, 28, 19], (1, 1): [75, 75, 81]}
    r = two_k_r(frame_of(cells), "y", ["A", "B"], confidence=0.90)
    assert [e.q for e in r.effects] == pytest.approx([41, 21.5, 9.5, 5])
    assert [e.ss for e in r.effects[1:]] == pytest.approx([5547, 1083, 300])
    assert (r.sse, r.sst, r.df_e) == pytest.approx((102, 7032, 8))
    assert [round(e.pct_variation, 1) for e in r.effects[1:]] == [78.9, 15.4, 4.3]
    assert round(r.pct_e, 1) == 1.5
    assert round(r.s_e, 2) == 3.57 and round(r.s_q, 2) == 1.03
    half = stats.t.ppf(0.95, 8) * np.sqrt(102 / 8) / np.sqrt(12)
    assert round(half, 2) == 1.92
    assert [(round(e.ci_low, 2), round(e.ci_high, 2)) for e in r.effects] == [
        (round(q - half, 2), round(q + half, 2)) for q in (41, 21.5, 9.5, 5)
    ]
    assert all(e.significant for e in r.effects)


def test_2_cubed_matches_full_factorial_and_sign_formula() -> None:
    """2^3·2 with the ONL TCP factors' shape: every SS equals 2^k r q² and each q equals
    Σ(sign·ȳ)/2^k over the sign table."""
    rng = np.random.default_rng(7)
    rows = []
    for cc in ("cubic", "reno"):
        for dur in (10, 120):
            for flows in (9, 10):
                for _ in range(2):
                    y = 900 + 20 * (cc == "reno") + 5 * (dur == 120) - 40 * (flows == 10) + rng.normal(0, 3)
                    rows.append({"cc": cc, "duration_s": dur, "flows": flows, "throughput_bps": y})
    frame = pd.DataFrame(rows)
    r = two_k_r(frame, "throughput_bps", ["cc", "duration_s", "flows"])
    assert [e.letters for e in r.effects] == ["I", "A", "B", "C", "AB", "AC", "BC", "ABC"]
    assert r.effect("A").name == "cc" and r.effect("ABC").name == "cc:duration_s:flows"
    assert r.coding == {"cc": ("cubic", "reno"), "duration_s": (10, 120), "flows": (9, 10)}
    for e in r.effects:
        assert e.q == pytest.approx((r.sign_table[e.letters] * r.sign_table["mean"]).sum() / 8)
        if e.ss is not None:
            assert e.ss == pytest.approx(8 * 2 * e.q**2)
    assert sum(e.ss for e in r.effects[1:]) + r.sse == pytest.approx(r.sst)
    f = full_factorial_anova(frame, "throughput_bps", ["cc", "duration_s", "flows"])
    for e in r.effects[1:]:
        assert f.term(e.name).ss == pytest.approx(e.ss)
    assert f.sse == pytest.approx(r.sse) and f.df_e == r.df_e == 8
    json.dumps(r.to_dict(), allow_nan=False)


def test_low_level_override_flips_the_sign() -> None:
    cells = {("x", 0): [1, 2], ("y", 0): [5, 6], ("x", 1): [1, 2], ("y", 1): [5, 6]}
    frame = frame_of(cells, ("cfg", "b"))
    assert two_k_r(frame, "y", ["cfg", "b"]).effect("cfg").q == pytest.approx(2)
    flipped = two_k_r(frame, "y", ["cfg", "b"], low={"cfg": "y"})
    assert flipped.effect("cfg").q == pytest.approx(-2)
    assert flipped.coding["cfg"] == ("y", "x")


@pytest.mark.parametrize(
    ("cells", "match"),
    [
        (
            {(0, 0): [1, 2], (1, 0): [1, 2], (0, 1): [1, 2], (1, 1): [1]},
            "replications per combination range from 1 to 2",
        ),
        ({(0, 0): [1, 2], (1, 0): [1, 2], (0, 1): [1, 2]}, r"only 3 of the 2\^2 = 4 combinations"),
        ({(0, 0): [1, 2], (1, 0): [1, 2], (2, 1): [1, 2], (0, 1): [3, 4]}, "has 3 levels"),
    ],
)
def test_2kr_refuses_what_is_not_a_2kr_design(cells: dict, match: str) -> None:
    with pytest.raises(DataError, match=match):
        two_k_r(frame_of(cells), "y", ["A", "B"])


def test_full_factorial_3x2_by_hand() -> None:
    """3×2 levels, r = 2. Cells (mean): a1b1 1,3 (2); a1b2 3,5 (4); a2b1 5,7 (6); a2b2 7,9 (8);
    a3b1 8,10 (9); a3b2 12,14 (13).  ȳ.. = 42/6 = 7.
    A means 3, 7, 11 → α = −4, 0, 4, SSA = r·b·Σα² = 2·2·32 = 128 (2 DF).
    B means 17/3, 25/3 → β = ∓4/3, SSB = r·a·Σβ² = 2·3·32/9 = 64/3 (1 DF).
    γ_ij = ȳ_ij − ȳ_i. − ȳ_.j + ȳ.. = ±1/3, ±1/3, ∓2/3 → SSAB = 2·(4/9 + 8/9) = 8/3 (2 DF).
    SSE = 6 cells × 2 = 12 (6 DF), MSE = 2. SSY = 752, SS0 = 588, SST = 164.
    F: A = 64/2 = 32, B = (64/3)/2 = 32/3, AB = (4/3)/2 = 2/3."""
    cells = {("a1", "b1"): [1, 3], ("a1", "b2"): [3, 5], ("a2", "b1"): [5, 7],
             ("a2", "b2"): [7, 9], ("a3", "b1"): [8, 10], ("a3", "b2"): [12, 14]}  # fmt: skip
    f = full_factorial_anova(frame_of(cells), "y", ["A", "B"])
    assert [t.name for t in f.terms] == ["A", "B", "A:B"]
    assert [t.ss for t in f.terms] == pytest.approx([128, 64 / 3, 8 / 3])
    assert [t.df for t in f.terms] == [2, 1, 2]
    assert [t.f for t in f.terms] == pytest.approx([32, 32 / 3, 2 / 3])
    assert (f.ssy, f.ss0, f.sst, f.sse, f.df_e, f.mse) == pytest.approx((752, 588, 164, 12, 6, 2))
    assert [t.pct_variation for t in f.terms] == pytest.approx(
        [100 * 128 / 164, 100 * 64 / 3 / 164, 100 * 8 / 3 / 164]
    )
    assert [t.significant for t in f.terms] == [True, True, False]
    assert f.term("A").p_value == pytest.approx(stats.f.sf(32, 2, 6))
    assert f.balanced
    assert f.cell_means["cell_mean"].tolist() == [2, 4, 6, 8, 9, 13]
    json.dumps(f.to_dict(), allow_nan=False)


def test_full_factorial_needs_replication() -> None:
    cells = {("a1", "b1"): [1], ("a1", "b2"): [3], ("a2", "b1"): [5], ("a2", "b2"): [7]}
    with pytest.raises(DataError, match="no combination was replicated"):
        full_factorial_anova(frame_of(cells), "y", ["A", "B"])


def test_successive_differences_of_a_factor_in_a_full_factorial() -> None:
    """3 × 2 levels, r = 2 (unequal cell spreads). m(j) is the mean of level j's two cell means; the
    interval of m(j+1) − m(j) must equal statsmodels' t_test of that contrast on the cell-means model
    (same s_e, DF = 6), and Jain's 2·s_e²/(b·r) variance for a balanced design."""
    import statsmodels.formula.api as smf

    from vnetbench.analysis.contrasts import factor_successive_differences

    cells = {(1, "x"): [10, 12], (1, "y"): [14, 15], (2, "x"): [20, 23], (2, "y"): [25, 24],
             (3, "x"): [21, 20], (3, "y"): [30, 33]}  # fmt: skip
    frame = frame_of(cells, ("n", "kind"))
    f = full_factorial_anova(frame, "y", ["n", "kind"], confidence=0.90)
    steps = factor_successive_differences(f, "n")
    assert [s.label for s in steps] == ["n: m(2) − m(1)", "n: m(3) − m(2)"]
    means = {k: np.mean(v) for k, v in cells.items()}
    assert steps[0].estimate == pytest.approx(
        (means[(2, "x")] + means[(2, "y")] - means[(1, "x")] - means[(1, "y")]) / 2
    )
    assert steps[0].sd == pytest.approx(np.sqrt(2 * f.mse / (2 * 2)))  # 2 s_e² / (b r), b = 2, r = 2

    frame["cell"] = [f"{n}{k}" for n, k in zip(frame["n"], frame["kind"], strict=True)]
    fit = smf.ols("y ~ C(cell) - 1", data=frame).fit()
    names = list(fit.params.index)
    for step, (hi, lo) in zip(steps, [(2, 1), (3, 2)], strict=True):
        w = np.zeros(len(names))
        for kind in ("x", "y"):
            w[names.index(f"C(cell)[{hi}{kind}]")] += 0.5
            w[names.index(f"C(cell)[{lo}{kind}]")] -= 0.5
        test = fit.t_test(w)
        lo_ci, hi_ci = test.conf_int(alpha=0.10)[0]
        assert (step.ci_low, step.ci_high) == pytest.approx((lo_ci, hi_ci))
        assert step.dof == 6
