"""No scale or offset of the response changes a conclusion (issue #14, defects 1, 2 and 4).

Each design is analysed on small numbers y and again on 1e9·y + 1e10 (a throughput in bit/s with a
spread of a few percent of its offset): F, p and every interval relative to the scale must agree.
The expected values come from statsmodels' OLS + anova_lm on the small numbers, where round-off does
not matter (an independent computation), and from the closed forms in each test's docstring.
"""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
import statsmodels.formula.api as smf
from statsmodels.stats.anova import anova_lm

from vnetbench.analysis.diagnostics import diagnostics, shapiro_skipped
from vnetbench.analysis.full_factorial import full_factorial_anova
from vnetbench.analysis.one_factor import one_factor_anova
from vnetbench.analysis.stable import NOTE_CONSTANT
from vnetbench.analysis.two_factor import two_factor
from vnetbench.analysis.two_k_r import two_k_r

SCALE, SHIFT = 1e9, 1e10


def scaled(frame: pd.DataFrame) -> pd.DataFrame:
    return frame.assign(y=SCALE * frame["y"] + SHIFT)


@pytest.fixture
def one() -> pd.DataFrame:
    rng = np.random.default_rng(3)
    return pd.DataFrame({"f": np.repeat(["a", "b", "c"], 4), "y": rng.normal(1, 0.1, 12)})


def test_one_factor_same_f_p_and_relative_intervals(one: pd.DataFrame) -> None:
    small, big = one_factor_anova(one, "y", "f"), one_factor_anova(scaled(one), "y", "f")
    reference = anova_lm(smf.ols("y ~ C(f)", data=one).fit())
    assert small.f == pytest.approx(reference.loc["C(f)", "F"], rel=1e-12)
    assert big.f == pytest.approx(small.f, rel=1e-9)
    assert big.p_value == pytest.approx(small.p_value, rel=1e-9)
    assert big.sse / SCALE**2 == pytest.approx(small.sse, rel=1e-9)
    for e_big, e_small in zip(big.effects, small.effects, strict=True):
        assert e_big.effect / SCALE == pytest.approx(e_small.effect, rel=1e-9)
        assert e_big.ci_low / SCALE == pytest.approx(e_small.ci_low, rel=1e-9, abs=1e-12)
        assert e_big.ci_high / SCALE == pytest.approx(e_small.ci_high, rel=1e-9, abs=1e-12)
        assert e_big.significant == e_small.significant


def test_gigabit_throughput_with_kilobit_spread_keeps_its_error_variance() -> None:
    """The issue's case: 9.4 Gbit/s with a few kbit/s of spread (CV < 1e-6). Offsets in bit/s:
    a: +1000, −2000, +500; b: −1000, +2500, 0; c: +1500, −500, −1000.
    Level means −500/3, 500, 0; grand mean 1000/9. SSA = 3·Σ(ȳ_j − ȳ)² = 6 500 000/9 = 722 222.2.
    SSE = Σ(y − ȳ_j)² = 15 500 000/3 + 6 500 000 + 3 500 000 = 45 500 000/3. F = (SSA/2)/(SSE/6) =
    6.5/45.5 = 1/7, p = P(F[2, 6] > 1/7) = 0.86974 — not the F = ∞, p = 0 of the old threshold."""
    offsets = {"a": [1000, -2000, 500], "b": [-1000, 2500, 0], "c": [1500, -500, -1000]}
    frame = pd.DataFrame([{"f": k, "y": 9.4e9 + v} for k, vs in offsets.items() for v in vs])
    a = one_factor_anova(frame, "y", "f")
    assert a.ssa == pytest.approx(6_500_000 / 9, rel=1e-9)
    assert a.sse == pytest.approx(45_500_000 / 3, rel=1e-9)
    assert a.f == pytest.approx(1 / 7, rel=1e-9)
    assert a.p_value == pytest.approx(0.869_741, abs=1e-6)
    assert a.significant is False and a.f_note is None
    assert all(e.significant is False for e in a.effects)


def test_full_factorial_same_f_and_p() -> None:
    rng = np.random.default_rng(5)
    frame = pd.DataFrame(
        {"A": np.tile(np.repeat(["a1", "a2", "a3"], 3), 2), "B": np.repeat(["b1", "b2"], 9)}
    ).assign(y=rng.normal(5, 1, 18))
    small, big = (
        full_factorial_anova(frame, "y", ["A", "B"]),
        full_factorial_anova(scaled(frame), "y", ["A", "B"]),
    )
    reference = anova_lm(smf.ols("y ~ C(A, Sum) * C(B, Sum)", data=frame).fit(), typ=2)
    assert [t.f for t in small.terms] == pytest.approx(reference["F"].dropna().tolist(), rel=1e-9)
    assert [t.f for t in big.terms] == pytest.approx([t.f for t in small.terms], rel=1e-7)
    assert [t.p_value for t in big.terms] == pytest.approx([t.p_value for t in small.terms], rel=1e-7)


def test_two_k_r_same_effects_relative_to_the_scale() -> None:
    rng = np.random.default_rng(6)
    frame = pd.DataFrame({"A": np.tile([-1, 1], 6), "B": np.tile(np.repeat([-1, 1], 2), 3)}).assign(
        y=rng.normal(3, 0.5, 12)
    )
    small, big = two_k_r(frame, "y", ["A", "B"]), two_k_r(scaled(frame), "y", ["A", "B"])
    fit = smf.ols("y ~ A * B", data=frame).fit()  # ±1 columns: the coefficients are the q's
    assert [e.q for e in small.effects] == pytest.approx(fit.params.tolist(), rel=1e-12)
    for e_big, e_small in zip(big.effects[1:], small.effects[1:], strict=True):
        assert e_big.q / SCALE == pytest.approx(e_small.q, rel=1e-8)
        assert (e_big.ci_low / SCALE, e_big.ci_high / SCALE) == pytest.approx(
            (e_small.ci_low, e_small.ci_high), rel=1e-8
        )
        assert e_big.pct_variation == pytest.approx(e_small.pct_variation, rel=1e-8)


@pytest.mark.parametrize("value", [9.4e9 / 3, 0.1, 1e-300 * 7])
def test_constant_response_is_undefined_not_significant(value: float) -> None:
    """Every observation the same (a value whose mean of sums is not exact in floats): SSA = SSE = 0
    exactly, F and p undefined with a note, JSON null + note, and no Shapiro–Wilk on round-off."""
    frame = pd.DataFrame({"f": np.repeat(["a", "b", "c"], 3), "y": value})
    a = one_factor_anova(frame, "y", "f")
    assert (a.ssa, a.sse, a.sst) == (0.0, 0.0, 0.0)
    assert a.significant is None and a.f_note == NOTE_CONSTANT
    out = json.loads(json.dumps(a.to_dict(), allow_nan=False))
    assert out["f"] is None and out["p_value"] is None and out["f_note"] == NOTE_CONSTANT
    d = diagnostics(a)
    assert d.shapiro_p is None and d.shapiro_note.startswith("skipped: every residual is exactly 0")


def test_constant_factorial_response_is_undefined() -> None:
    frame = pd.DataFrame({"A": np.repeat(["a", "b"], 4), "B": np.tile(np.repeat(["x", "y"], 2), 2), "y": 0.7})
    f = full_factorial_anova(frame, "y", ["A", "B"])
    assert all(t.f_note == NOTE_CONSTANT and t.significant is None for t in f.terms)
    r = two_k_r(frame, "y", ["A", "B"])
    assert r.sse == 0 and all(e.significant is None for e in r.effects)
    assert diagnostics(r).shapiro_p is None


def test_shapiro_is_skipped_on_round_off_residuals() -> None:
    """Residuals of a few ulp of the response are rounding, not measured variation."""
    y = np.full(6, 9.4e9)
    assert shapiro_skipped(np.array([1e-6, -1e-6, 0, 2e-6, -2e-6, 0]), y).startswith(
        "skipped: the residuals are floating-point round-off"
    )
    assert shapiro_skipped(np.array([1e3, -1e3, 0, 2e3, -2e3, 1.0]), y) is None


def test_two_factor_same_f_p_and_relative_intervals() -> None:
    rng = np.random.default_rng(8)
    frame = pd.DataFrame({"A": np.tile(["a1", "a2", "a3"], 4), "B": np.repeat(["b1", "b2"], 6)}).assign(
        y=rng.normal(2, 0.3, 12)
    )
    small, big = two_factor(frame, "y", ["A", "B"]), two_factor(scaled(frame), "y", ["A", "B"])
    assert [t.f for t in big.terms] == pytest.approx([t.f for t in small.terms], rel=1e-7)
    assert [t.p_value for t in big.terms] == pytest.approx([t.p_value for t in small.terms], rel=1e-7)
    for e_big, e_small in zip(big.estimates, small.estimates, strict=True):
        if e_big.kind in ("alpha", "beta", "gamma"):
            assert (e_big.ci_low / SCALE, e_big.ci_high / SCALE) == pytest.approx(
                (e_small.ci_low, e_small.ci_high), rel=1e-7
            )
        assert e_big.sd / SCALE == pytest.approx(e_small.sd, rel=1e-7)
