"""Reproducibility verdicts on hand-computed cases (thresholds: CV 5 %, tolerance 5 %, 95 %)."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from vnetbench.analysis.reproducibility import ReproducibilityThresholds, percent, reproducibility
from vnetbench.report.analysis_tables import _rebuilds
from vnetbench.report.sections.findings import rebuild_findings

FIRST = [100, 102, 98, 101, 99]  # mean 100, variance 2.5


def campaign(rebuilds: list[float], metric: str = "throughput_bps") -> pd.DataFrame:
    rows = [{"build": 0, "metric": metric, "value": v} for v in FIRST]
    rows += [{"build": b, "metric": metric, "value": v} for b, v in enumerate(rebuilds, start=1)]
    return pd.DataFrame(rows)


def test_reproducible() -> None:
    """Rebuilds 101, 99, 100, 102, 98: same mean, variance 2.5. Welch: se = √(2.5/5 + 2.5/5) = 1,
    df = 8, interval 0 ∓ 2.306 inside ±5; CV = √2.5/100 = 1.58 %."""
    (r,) = reproducibility(campaign([101, 99, 100, 102, 98]))
    assert r.verdict == "reproducible"
    assert (r.n_first, r.n_rebuilds, r.mean_first, r.mean_rebuilds) == (5, 5, 100, 100)
    assert r.cv_rebuilds_ratio == pytest.approx(np.sqrt(2.5) / 100)
    assert r.welch_df == pytest.approx(8)
    assert r.welch_ci == pytest.approx((-stats.t.ppf(0.975, 8), stats.t.ppf(0.975, 8)))
    assert r.mannwhitney_p == pytest.approx(1.0)
    assert "too small to matter" in r.text


def test_not_reproducible_by_difference() -> None:
    """Rebuilds 80, 90, 85, 88, 82: mean 85 (−15 %), variance 17, CV 4.85 % (passes).
    se = √(17/5 + 0.5) = √3.9, df = 3.9²/(3.4²/4 + 0.5²/4) = 5.1524; interval wholly below −5."""
    (r,) = reproducibility(campaign([80, 90, 85, 88, 82]))
    assert r.verdict == "not reproducible"
    assert r.difference == pytest.approx(-15) and r.difference_ratio == pytest.approx(-0.15)
    assert r.cv_rebuilds_ratio == pytest.approx(np.sqrt(17) / 85)
    assert r.welch_df == pytest.approx(3.9**2 / (3.4**2 / 4 + 0.5**2 / 4))
    half = stats.t.ppf(0.975, r.welch_df) * np.sqrt(3.9)
    assert r.welch_ci == pytest.approx((-15 - half, -15 + half))
    assert "wholly outside" in r.text


def test_not_reproducible_by_spread() -> None:
    """Rebuilds 90, 110, 95, 105, 100: mean 100 but SD √62.5 = 7.9, CV 7.9 % > 5 %."""
    (r,) = reproducibility(campaign([90, 110, 95, 105, 100]))
    assert r.verdict == "not reproducible"
    assert r.cv_rebuilds_ratio == pytest.approx(np.sqrt(62.5) / 100)
    assert "disagree with each other" in r.text


def test_inconclusive_when_the_interval_straddles_the_band() -> None:
    """Rebuilds 95, 97, 93, 96, 94: −5 ∓ 2.306 = (−7.31, −2.69) crosses −5. Every rebuild is below
    every first-build value: Mann-Whitney U = 0, exact p = 2/C(10,5) = 2/252."""
    (r,) = reproducibility(campaign([95, 97, 93, 96, 94]))
    assert r.verdict == "inconclusive"
    assert r.welch_ci == pytest.approx((-5 - stats.t.ppf(0.975, 8), -5 + stats.t.ppf(0.975, 8)))
    assert r.mannwhitney_u == 0 and r.mannwhitney_p == pytest.approx(2 / 252)
    assert "straddles" in r.text


def test_detectable_but_unimportant_difference_is_reproducible() -> None:
    """First 100, 101, 99, 100, 101, 99 and rebuilds 97, 98, 96, 97, 98, 96 (variance 0.8 each):
    −3 ∓ t[0.975; 10] · √(0.8/6 · 2) = (−4.15, −1.85) excludes 0 but lies inside ±5."""
    first = [100, 101, 99, 100, 101, 99]
    rows = [{"build": 0, "metric": "m", "value": v} for v in first]
    rows += [{"build": b, "metric": "m", "value": v - 3} for b, v in enumerate(first, start=1)]
    (r,) = reproducibility(pd.DataFrame(rows))
    half = stats.t.ppf(0.975, 10) * np.sqrt(0.8 / 6 * 2)
    assert r.welch_ci == pytest.approx((-3 - half, -3 + half))
    assert r.verdict == "reproducible"
    assert "significant is not the same as important" in r.text


def test_thresholds_are_parameters() -> None:
    wide = ReproducibilityThresholds(tolerance_ratio=0.10)
    (r,) = reproducibility(campaign([95, 97, 93, 96, 94]), thresholds=wide)
    assert r.verdict == "reproducible"
    # CV 7.9 % now allowed, but with that spread the interval 0 ∓ t·√13 is too wide to show equivalence
    (r,) = reproducibility(
        campaign([90, 110, 95, 105, 100]), thresholds=ReproducibilityThresholds(cv_max_ratio=0.1)
    )
    assert r.verdict == "inconclusive"
    assert r.welch_ci[1] == pytest.approx(stats.t.ppf(0.975, r.welch_df) * np.sqrt(62.5 / 5 + 2.5 / 5))


def test_too_few_rebuilds() -> None:
    (r,) = reproducibility(campaign([100]))
    assert r.verdict == "inconclusive" and "Too few" in r.text


def test_a_rebuild_is_the_unit_of_replication() -> None:
    """Two values per rebuild: each rebuild contributes its mean (101, 99, 100) to CV and tests."""
    frame = campaign([])
    extra = [(1, 100), (1, 102), (2, 98), (2, 100), (3, 99), (3, 101)]
    frame = pd.concat(
        [frame, pd.DataFrame([{"build": b, "metric": "throughput_bps", "value": v} for b, v in extra])]
    )
    frame = pd.concat([frame, frame.assign(metric="rtt_ns", value=frame["value"] * 1000)])
    results = reproducibility(frame)
    assert [r.metric for r in results] == ["rtt_ns", "throughput_bps"]
    r = results[1]
    assert r.n_rebuilds == 3 and r.mean_rebuilds == pytest.approx(100)
    assert r.sd_rebuilds == pytest.approx(1.0)
    assert r.per_build["mean"].tolist() == [100, 101, 99, 100]
    assert r.per_build["is_first"].tolist() == [True, False, False, False]
    assert results[0].verdict == r.verdict == "reproducible"


def test_an_absolute_tolerance_judges_metrics_near_zero() -> None:
    """Loss of 0.0001 in the first build and 0.0002–0.0006 in the rebuilds: relative to 0.0001 that is
    a CV of 41 % and a +300 % difference, so by ratios alone it is not reproducible; with differences
    under 0.001 (0.1 point) declared unimportant, the band is ±0.001 and the verdict follows Welch."""
    first = [0.0001, 0.00012, 0.00008]
    rebuilds = [0.0002, 0.0004, 0.0006, 0.0004, 0.0004]
    rows = [{"build": 0, "metric": "loss_ratio", "value": v} for v in first]
    rows += [{"build": b, "metric": "loss_ratio", "value": v} for b, v in enumerate(rebuilds, start=1)]
    frame = pd.DataFrame(rows)
    (by_ratio,) = reproducibility(frame)
    assert by_ratio.verdict == "not reproducible"
    assert by_ratio.cv_rebuilds_ratio == pytest.approx(np.std(rebuilds, ddof=1) / 0.0004)
    (absolute,) = reproducibility(frame, thresholds=ReproducibilityThresholds(tolerance_abs=0.001))
    lo, hi = absolute.welch_ci
    assert lo >= -0.001 and hi <= 0.001 and absolute.verdict == "reproducible"
    assert "near zero" in absolute.text and "absolute tolerance ±0.100 pp" in absolute.text
    with pytest.raises(ValueError, match="tolerance_abs"):
        ReproducibilityThresholds(tolerance_abs=-1)


def test_identical_values_in_every_build_have_an_exact_difference_and_no_test() -> None:
    """Every build measured exactly the same value (a shaper's rate): Welch's t is d/0, so no test
    applies (p, t, DF undefined, as for a contrast without error variance) and the difference is
    exact. Equal builds: difference 0, reproducible. A rebuild 1 % higher in every value: the exact
    difference +1 is inside ±5 % of 100, reproducible, and a real difference, the same in every
    repetition, but not an important one. (It used to say p = 1 and 'detectable (Welch p = 0)'.)
    Mann-Whitney, on ranks, stays defined: equal groups are all ties (p = 1); three rebuilds above five
    first-build values, with ties: U = 15, and of the C(8, 3) = 56 equally likely ways to pick the
    rebuilds' three values from the pooled eight only one puts all three on top, so the exact two-sided
    p is 2/56 = 0.0357. (The normal approximation with tie correction, σ² = 1.25·(9 − 144/56), gave
    0.0135: smaller than any arrangement of 3 v 5 values can give.)"""
    rows = [{"build": 0, "metric": "throughput_bps", "value": 100.0} for _ in range(5)]
    same = pd.DataFrame(rows + [{"build": b, "metric": "throughput_bps", "value": 100.0} for b in (1, 2, 3)])
    (r,) = reproducibility(same)
    assert (r.verdict, r.exact, r.difference, r.welch_ci) == ("reproducible", True, 0, (0, 0))
    assert r.mannwhitney_p == 1
    assert np.isnan([r.welch_p, r.welch_t, r.welch_df]).all()
    assert "the exact difference (every first-build value and every rebuild's mean the same" in r.text
    assert "Welch" not in r.text and "real" not in r.text
    higher = pd.DataFrame(
        rows + [{"build": b, "metric": "throughput_bps", "value": 101.0} for b in (1, 2, 3)]
    )
    (r,) = reproducibility(higher)
    assert (r.verdict, r.exact, r.difference, r.welch_ci) == ("reproducible", True, 1, (1, 1))
    assert np.isnan(r.welch_p)
    assert "The difference is real, the same in every repetition, but smaller than the tolerance" in r.text
    assert "detectable" not in r.text and "Welch p" not in r.text
    assert r.mannwhitney_u == 15 and r.mannwhitney_p == pytest.approx(2 / 56)
    assert "disagree" not in r.text
    assert r.to_dict()["exact"] is True and r.to_dict()["welch_p"] is None


def test_an_exact_difference_outside_the_band_is_not_reproducible() -> None:
    """First build 100 in every value, rebuilds 110 in every value: the exact difference +10 lies
    outside ±5 % of 100 = ±5: not reproducible, said of the exact difference, not of a Welch interval."""
    rows = [{"build": 0, "metric": "throughput_bps", "value": 100.0} for _ in range(3)]
    rows += [{"build": b, "metric": "throughput_bps", "value": 110.0} for b in (1, 2) for _ in range(2)]
    (r,) = reproducibility(pd.DataFrame(rows))
    assert (r.verdict, r.exact, r.difference) == ("not reproducible", True, 10)
    assert "the exact difference (every first-build value" in r.text and "lies wholly outside" in r.text


def test_identical_values_are_the_same_whatever_their_number() -> None:
    """Three 0.1 in the first build, two in each rebuild: the same value. numpy's mean of three 0.1
    is 0.10000000000000002 and of two 0.1 is 0.1, which made the difference −1.4e-17 and Welch's
    limit p = 0 ('detectable'); the means taken around their first value are 0.1 exactly."""
    rows = [{"build": 0, "metric": "rtt_mean_ns", "value": 0.1} for _ in range(3)]
    rows += [{"build": b, "metric": "rtt_mean_ns", "value": 0.1} for b in (1, 2) for _ in range(2)]
    (r,) = reproducibility(pd.DataFrame(rows))
    assert (r.mean_first, r.mean_rebuilds, r.difference, r.exact) == (0.1, 0.1, 0.0, True)
    assert r.per_build["mean"].tolist() == [0.1, 0.1, 0.1]


def test_the_rebuilds_table_says_exact_instead_of_a_welch_interval() -> None:
    rows = [{"build": 0, "metric": "throughput_bps", "value": 100.0} for _ in range(3)]
    rows += [{"build": b, "metric": "throughput_bps", "value": 101.0} for b in (1, 2)]
    (r,) = reproducibility(pd.DataFrame(rows))
    table = _rebuilds(SimpleNamespace(builds=3, thresholds=r.thresholds, results=[r])).tables[0]
    assert table.rows[0][table.columns.index("Welch interval")] == "exact: no spread"


def test_the_first_builds_interval_of_a_loss_is_cut_at_zero() -> None:
    """First build 0 and 0.002 loss: mean 0.001, SD 0.002/√2, t[0.975; 1] = 12.7062 (t table), half
    12.7062·0.001 = 0.0127 → (−0.0117, 0.0137) cut to (0, 0.0137): the reproducibility figure's band
    of the first build reached below 0 % loss. Equal values of a throughput: SD 0, a point interval."""
    rows = [{"build": 0, "metric": "loss_ratio", "value": v} for v in (0.0, 0.002)]
    rows += [{"build": b, "metric": "loss_ratio", "value": 0.001} for b in (1, 2)]
    (r,) = reproducibility(pd.DataFrame(rows))
    assert r.first_ci == pytest.approx((0.0, 0.001 + 12.706204736174698 * 0.001))
    rows = [{"build": 0, "metric": "throughput_bps", "value": 123.456} for _ in range(5)]
    rows += [{"build": b, "metric": "throughput_bps", "value": 123.0} for b in (1, 2)]
    (r,) = reproducibility(pd.DataFrame(rows))
    assert r.sd_first == 0.0 and r.first_ci[0] == r.first_ci[1] == pytest.approx(123.456)


def test_small_percentages_keep_three_digits_in_the_table_and_the_sentence() -> None:
    """exogeni-exp5 (campaign ca60f214), tcp vma→vmb throughput: the build means (summaries table,
    pandas) 95.919908 (first), 95.925807, 95.913306, 95.921610, 95.923307, 95.907564 Mbit/s give a
    CV across rebuilds of 0.00795 % and a difference of 95.918318 − 95.919908 = −0.001590 Mbit/s,
    −0.00166 %; the sentence said so, the table printed 'CV 0.00 %' and '(-0.00 %)', and a positive
    difference had no sign ('0.00296 %'). The sentence named the row 'throughput_bps'. A negative
    difference has the minus sign U+2212, as '+' of a positive one; the Findings' CV is the table's
    (they wrote 'CV 0.01 %' for 0.00795 %, and 12.99 % for the section's 13 %)."""
    means = [95_925_806.678, 95_913_305.516, 95_921_609.897, 95_923_306.562, 95_907_564.129]
    rows = [{"build": 0, "metric": "tcp vma→vmb throughput_bps", "value": 95_919_908.432}] * 3
    rows += [{"build": b, "metric": "tcp vma→vmb throughput_bps", "value": v} for b, v in enumerate(means, 1)]
    (r,) = reproducibility(pd.DataFrame(rows))
    assert percent(r.cv_rebuilds_ratio) == "0.00795 %"
    assert percent(r.difference_ratio, True) == "−0.00166 %"
    assert percent(0.0000296, True) == "+0.00296 %" and percent(0.05) == "5 %"
    assert percent(float("nan")) == "undefined" and percent(0.0, True) == "0 %"
    assert r.text.startswith("tcp vma→vmb throughput (Mbit/s): first build 0 mean 95.92 Mbit/s")
    assert "CV across rebuilds 0.00795 %" in r.text and "(−0.00166 %)" in r.text
    assert "The difference −0.001590 Mbit/s (−0.00166 %)" in r.text
    assert "interval of the difference (−0.0" in r.text and "-0" not in r.text
    rebuilds = SimpleNamespace(builds=6, thresholds=ReproducibilityThresholds(), results=[r])
    table = _rebuilds(rebuilds).tables[0]
    assert table.rows[0][4:6] == ["0.00795 %", "−0.001590 (−0.00166 %)"]
    assert table.rows[0][6].startswith("(−0.") and "-" not in table.rows[0][6]  # the Welch interval
    (line,) = rebuild_findings(SimpleNamespace(rebuilds=rebuilds))
    assert (
        line
        == "<b>Rebuilt 6 times</b> — Reproducible (1): tcp vma→vmb throughput (−0.001590 Mbit/s, CV 0.00795 %)."
    )


def test_the_welch_interval_in_the_sentence_is_written_as_the_tables_write_one() -> None:
    # first build 1 and 3 Mbit/s (mean 2, variance 2), rebuild means 2, 2, 2 (no spread): by hand the
    # difference is 0, its standard error √(2/2 + 0) = 1 with Welch df 1, t(0.975, 1) = 12.7062:
    # (−12.71 to 12.71) Mbit/s, the positive end without '+', as the tables' '(−0.0235 to 0.0166)'
    rows = [{"build": 0, "metric": "tcp a→b throughput_bps", "value": v} for v in (1e6, 3e6)]
    rows += [{"build": b, "metric": "tcp a→b throughput_bps", "value": 2e6} for b in (1, 2, 3)]
    (r,) = reproducibility(pd.DataFrame(rows))
    assert "the 95 % Welch interval of the difference (−12.71 to 12.71) Mbit/s against" in r.text
