"""The ONL study (seeds/002): Table 3's loss data through `stats`, against its Tables 4 and 5."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import statsmodels.formula.api as smf
from scipy import stats

from tests.helpers.stats_app import ONL, run_json
from vnetbench.analysis.capacity import recommend_capacity
from vnetbench.analysis.contrasts import successive_differences
from vnetbench.analysis.diagnostics import diagnostics, residual_spread_by_level, truncated_model
from vnetbench.analysis.one_factor import one_factor_anova

# Table 4 as printed (the 99 % column of table F)
TABLE4 = {"ssy": 64049.072, "ss0": 23937.498, "sst": 40111.574, "ssa": 39981.668, "sse": 129.906,
          "msa": 4442.408, "mse": 3.248, "f": 1367.886}  # fmt: skip
# Table 5 as printed: α(j+1) − α(j), "95 %", j = 1..9
TABLE5 = [(-17.66, 17.66), (-17.65, 17.67), (-17.66, 17.66), (-17.51, 17.81), (-13.27, 22.05),
          (4.17, 39.49), (5.52, 40.84), (-3.92, 31.4), (-6.07, 29.25)]  # fmt: skip
MEANS = [0, 0, 0.0076, 0.007, 0.1532, 4.545, 26.3714, 49.55, 63.2888, 74.88]  # column means of Table 3


@pytest.fixture(scope="module")
def frame() -> pd.DataFrame:
    return pd.read_csv(ONL)


def test_the_extracted_table_is_table_3(frame: pd.DataFrame) -> None:
    wide = frame.pivot(index="replication", columns="receivers", values="loss")
    assert wide.shape == (5, 10)
    assert wide.loc[1].tolist() == [0, 0, 0.002, 0.009, 0.152, 3.325, 22, 49.5, 62.778, 71.4]
    assert wide.loc[5].tolist() == [0, 0, 0.004, 0.005, 0.145, 2.1, 30.571, 50.625, 61.444, 75.1]
    assert wide.mean().round(4).tolist() == MEANS


def test_stats_reproduces_table_4_within_0_1_percent() -> None:
    out = run_json(ONL, "--response", "loss", "--factor", "receivers", "--confidence", "0.99")
    a = out["anova"]
    for key, published in TABLE4.items():
        assert a[key] == pytest.approx(published, rel=1e-3), key
    # percentages and table F are printed with two decimals: they agree to the last printed digit
    assert round(a["pct_a"], 2) == 99.68
    assert round(a["pct_e"], 2) == 0.32
    assert round(a["f_table"], 2) == 2.89
    assert (a["df_y"], a["df_0"], a["df_t"], a["df_a"], a["df_e"]) == (50, 1, 49, 9, 40)
    assert a["significant"] is True
    # the paper's R² = 0.9968
    assert round(a["ssa"] / a["sst"], 4) == 0.9968


def test_successive_differences_by_the_textbook_formula() -> None:
    """Jain (ch. 20): Var(Σh_jα_j) = s_e² Σh_j² / r on a(r−1) DF. For α(j+1) − α(j): h = (+1, −1),
    Σh² = 2, r = 5, so s = s_e √(2/5) with s_e² = SSE/40 = 129.904184/40, and the 95 % half-width is
    t[0.975; 40] · s = 2.021075 × 1.802111 × 0.632456 = 2.30353."""
    out = run_json(ONL, "--response", "loss", "--factor", "receivers", "--confidence", "0.95")
    s_e = np.sqrt(129.904184 / 40)
    half = stats.t.ppf(0.975, 40) * s_e * np.sqrt(2 / 5)
    assert half == pytest.approx(2.30353, abs=1e-5)
    steps = out["successive_differences"]
    assert len(steps) == 9
    for j, step in enumerate(steps):
        diff = MEANS[j + 1] - MEANS[j]
        assert step["estimate"] == pytest.approx(diff, abs=1e-9)
        assert step["sd"] == pytest.approx(s_e * np.sqrt(2 / 5))
        assert step["dof"] == 40
        assert step["ci"] == pytest.approx([diff - half, diff + half])
    assert [s["significant"] for s in steps] == [False] * 4 + [True] * 5
    # 5 → 6 receivers: (2.088, 6.695), significant — the paper's (−13.27, 22.05) said it was not
    assert steps[4]["ci"] == pytest.approx([2.08827, 6.69533], abs=1e-5)


def test_what_the_paper_computed_for_table_5(frame: pd.DataFrame) -> None:
    """The paper's intervals are all ±17.66 around the right differences. Its text says z = 1.96
    (not t[40] = 2.021). 17.66 / 1.96 = 9.0102 = 5.000 · s_e: the author used s = r · s_e = 9.0106
    instead of s = s_e √(Σh²/r) = 1.1398, a contrast variance 62.5 times too large (25 s_e² for
    0.4 s_e²). With r = 5, a = 10 and Σh² = 2, r·s_e is also √(ar/Σh²)·s_e, so the data cannot tell
    which slip it was; every other candidate misses the printed digits."""
    a = one_factor_anova(frame, "loss", "receivers")
    s_e = a.s_e
    reproduced = [(round(d - 1.96 * 5 * s_e, 2), round(d + 1.96 * 5 * s_e, 2)) for d in np.diff(MEANS)]
    exact = [
        (round(e - 1.96 * 5 * s_e, 2), round(e + 1.96 * 5 * s_e, 2))
        for e in np.diff([x.mean for x in a.effects])
    ]
    assert exact == TABLE5
    assert reproduced == TABLE5
    paper_half = 17.66
    candidates = {
        "t·s_e·√(2/r) (correct)": stats.t.ppf(0.975, 40) * s_e * np.sqrt(2 / 5),
        "z·s_e·√(2/r)": 1.96 * s_e * np.sqrt(2 / 5),
        "z·s_e·√2 (r forgotten)": 1.96 * s_e * np.sqrt(2),
        "z·s_e·√(2r) (sums, not means)": 1.96 * s_e * np.sqrt(2 * 5),
        "z·s_e²·√(2/r) (variance for SD)": 1.96 * s_e**2 * np.sqrt(2 / 5),
        "t·r·s_e": stats.t.ppf(0.975, 40) * 5 * s_e,
        "z·r·s_e": 1.96 * 5 * s_e,
    }
    matching = [name for name, h in candidates.items() if round(h, 2) == paper_half]
    assert matching == ["z·r·s_e"]
    assert 1.96 * 5 * s_e / (stats.t.ppf(0.975, 40) * s_e * np.sqrt(2 / 5)) == pytest.approx(7.667, abs=1e-3)


def test_statsmodels_agrees_with_the_textbook_contrast(frame: pd.DataFrame) -> None:
    a = one_factor_anova(frame, "loss", "receivers")
    fit = smf.ols("loss ~ C(receivers) - 1", data=frame).fit()  # cell means model
    for j, step in enumerate(successive_differences(a)):
        L = np.zeros(10)
        L[j + 1], L[j] = 1, -1
        ci = fit.t_test(L).conf_int(alpha=0.05)[0]
        assert [step.ci_low, step.ci_high] == pytest.approx(list(ci))


def test_truncated_model_levels_6_to_10(frame: pd.DataFrame) -> None:
    full = one_factor_anova(frame, "loss", "receivers")
    cut = truncated_model(frame, "loss", "receivers", low=6, high=10)
    assert cut.levels == (6, 7, 8, 9, 10)
    assert (cut.n, cut.df_a, cut.df_e) == (25, 4, 20)
    # errors of levels 1..5 are the tiny part of SSE: SSE(6..10) = SSE − Σ_{j≤5} Σ(y − ȳ.j)²
    low = frame[frame.receivers <= 5].groupby("receivers")["loss"]
    assert cut.sse == pytest.approx(full.sse - float((low.var(ddof=0) * 5).sum()))
    assert cut.sse == pytest.approx(129.895662)
    # the point mass at zero makes the full model's residuals clearly non-normal; truncated they are not
    d_full, d_cut = diagnostics(full), diagnostics(cut)
    assert d_full.shapiro_p < 0.001 < 0.5 < d_cut.shapiro_p
    assert d_cut.qq_r > d_full.qq_r
    spread = residual_spread_by_level(full)
    assert spread["sd"].iloc[:2].tolist() == [0, 0]  # 1 and 2 receivers: no loss at all
    assert spread["sd"].max() == pytest.approx(frame[frame.receivers == 7]["loss"].std())


def test_capacity_recommendation_for_onl(frame: pd.DataFrame) -> None:
    """Loss is in percent here, so the 1 % threshold is 1.0. Means: 5 → 0.1532, 6 → 4.545; the
    first significant step is 5 → 6 (2.088, 6.695). The paper picked 6 from its too-wide intervals."""
    rec = recommend_capacity(one_factor_anova(frame, "loss", "receivers"), threshold=1.0)
    assert rec.max_level_under_threshold == 5
    assert rec.first_significant_increase == 6
    assert rec.last_level_before_increase == 5
    assert rec.recommended == 5
    assert "from 5 to 6" in rec.text
    # Welch (each level's own variance) also finds 4 → 5 significant: pooled s_e is dominated by 6..10
    welch_45 = rec.steps[3].welch_ci
    assert welch_45 is not None and welch_45[0] > 0
    assert "Caution: Welch" in rec.text
