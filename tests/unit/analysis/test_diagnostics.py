"""Residual and QQ data, per-level spread, truncated models."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from vnetbench.analysis.diagnostics import diagnostics, residual_spread_by_level, truncated_model
from vnetbench.analysis.inputs import DataError
from vnetbench.analysis.one_factor import one_factor_anova

HAND = pd.DataFrame({"cfg": list("AAABBCCCC"), "y": [1, 2, 3, 5, 7, 8, 9, 10, 9]})  # see test_one_factor


def test_residuals_and_qq_data() -> None:
    d = diagnostics(one_factor_anova(HAND, "y", "cfg"))
    assert d.predicted.tolist() == pytest.approx([2, 2, 2, 6, 6, 9, 9, 9, 9])
    assert d.residuals.tolist() == pytest.approx([-1, 0, 1, -1, 1, -1, 0, 1, 0])
    assert d.qq_ordered.tolist() == pytest.approx([-1, -1, -1, 0, 0, 0, 1, 1, 1])
    # theoretical quantiles: Filliben's order-statistic medians, symmetric about 0
    assert d.qq_theoretical == pytest.approx(-d.qq_theoretical[::-1])
    slope, intercept = np.polyfit(d.qq_theoretical, d.qq_ordered, 1)
    assert (d.qq_slope, d.qq_intercept) == pytest.approx((slope, intercept), abs=1e-12)
    assert d.residual_ratio == pytest.approx(2 / 7)  # residual range 2 over predicted range 9 − 2
    assert d.errors_small is False
    assert d.shapiro_p == pytest.approx(stats.shapiro(d.residuals).pvalue)
    assert set(d.to_dict(points=True)) >= {"qq_r", "predicted", "qq_theoretical"}


def test_residual_spread_by_level() -> None:
    spread = residual_spread_by_level(one_factor_anova(HAND, "y", "cfg"))
    assert spread["level"].tolist() == ["A", "B", "C"]
    assert spread["n"].tolist() == [3, 2, 4]
    assert spread["sd"].tolist() == pytest.approx([1, np.sqrt(2), np.sqrt(2 / 3)])


def test_truncated_model() -> None:
    frame = pd.DataFrame({"n": [1, 1, 2, 2, 3, 3, 4, 4], "y": [0, 0, 0, 0, 5, 7, 10, 14]})
    cut = truncated_model(frame, "y", "n", low=3)
    assert cut.levels == (3, 4)
    assert (cut.ssa, cut.sse) == pytest.approx((2 * (6 - 9) ** 2 + 2 * (12 - 9) ** 2, 2 + 8))
    assert truncated_model(frame, "y", "n", high=2, levels=None).levels == (1, 2)
    assert truncated_model(frame, "y", "n", levels=[4, 2]).levels == (4, 2)
    with pytest.raises(DataError, match="not among"):
        truncated_model(frame, "y", "n", low=7)
