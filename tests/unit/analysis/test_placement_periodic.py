"""Placement categories (GENI Table 1 form) and hour-of-day / day-of-week profiles."""

from __future__ import annotations

import json
import warnings

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from vnetbench.analysis.periodic import by_day_of_week, by_hour_of_day
from vnetbench.analysis.placement import compare_placements

T2 = 4.302652729749462  # t[0.975; 2]


@pytest.fixture
def links() -> pd.DataFrame:
    data = {"cross-site": [10, 12, 14], "same-host": [1, 2, 3], "same-site": [5, 5, 6]}
    return pd.DataFrame([{"placement": k, "rtt_ns": v} for k, vs in data.items() for v in vs])


def test_categories(links: pd.DataFrame) -> None:
    c = compare_placements(links, "rtt_ns")
    assert [x.category for x in c.categories] == ["same-host", "same-site", "cross-site"]  # canonical order
    host = c.category("same-host")
    assert (host.n, host.mean, host.sd) == pytest.approx((3, 2, 1))
    # the t interval 2 ∓ T2/√3 = (−0.484, 4.484) reaches below 0, which an RTT cannot: cut at 0
    assert (host.ci_low, host.ci_high) == pytest.approx((0.0, 2 + T2 / np.sqrt(3)))
    assert c.category("cross-site").sd == pytest.approx(2)


def test_a_metric_that_can_be_negative_keeps_its_whole_interval(links: pd.DataFrame) -> None:
    """A clock offset (or any difference) can be below 0: its t interval is left as it is."""
    c = compare_placements(links.rename(columns={"rtt_ns": "clock_offset_ns"}), "clock_offset_ns")
    host = c.category("same-host")
    assert (host.ci_low, host.ci_high) == pytest.approx((2 - T2 / np.sqrt(3), 2 + T2 / np.sqrt(3)))


def test_pairwise_welch(links: pd.DataFrame) -> None:
    """same-site − same-host = 16/3 − 2 = 10/3; variances 1/3 and 1, n = 3 each:
    se = √(1/9 + 1/3) = 2/3, t = 5, Welch DF = (4/9)² / ((1/9)²/2 + (1/3)²/2) = 3.2."""
    c = compare_placements(links, "rtt_ns")
    assert [(p.first, p.second) for p in c.pairs] == [
        ("same-host", "same-site"), ("same-host", "cross-site"), ("same-site", "cross-site")
    ]  # fmt: skip
    p = c.pair("same-host", "same-site")
    assert p.difference == pytest.approx(10 / 3)
    assert (p.t, p.dof) == pytest.approx((5, 3.2))
    half = stats.t.ppf(0.975, 3.2) * 2 / 3
    assert (p.ci_low, p.ci_high) == pytest.approx((10 / 3 - half, 10 / 3 + half))
    assert p.significant
    q = c.pair("same-host", "cross-site")  # variances 1 and 4: se = √(5/3), DF = (5/3)²/((1/3)²/2 + (4/3)²/2)
    assert q.dof == pytest.approx((5 / 3) ** 2 / ((1 / 3) ** 2 / 2 + (4 / 3) ** 2 / 2))
    json.dumps(c.to_dict(), allow_nan=False)


def test_a_group_without_spread_is_compared_without_a_warning() -> None:
    """The quickstart's same-host RTTs were two equal values: Welch's t uses the other group's
    variance alone (se = √(var_b / n_b)); scipy's "precision loss" warning must not reach the user."""
    frame = pd.DataFrame(
        {"placement": ["same-host"] * 2 + ["same-site"] * 2, "v": [76450.0, 76450.0, 86150.0, 94350.0]}
    )
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        p = compare_placements(frame, "v").pair("same-host", "same-site")
    assert p.difference == pytest.approx(90250 - 76450)
    assert p.t == pytest.approx(13800 / np.sqrt(np.var([86150, 94350], ddof=1) / 2))
    assert p.dof == pytest.approx(1)


def test_equal_values_have_sd_zero_and_a_point_interval() -> None:
    # ten RTTs of 10.1 ms (ping's resolution): by hand SD 0 and the interval (10.1, 10.1); numpy's
    # std(ddof=1) of them is 1.87e-15, which the placement table printed as the SD
    frame = pd.DataFrame({"placement": ["same-host"] * 10, "rtt_ms": [10.1] * 10})
    (c,) = compare_placements(frame, "rtt_ms").categories
    assert c.sd == 0.0 and c.ci_low == c.ci_high == pytest.approx(10.1)


def test_single_value_categories_are_noted() -> None:
    frame = pd.DataFrame({"placement": ["same-host", "same-host", "custom"], "v": [1.0, 3.0, 9.0]})
    c = compare_placements(frame, "v")
    assert [x.category for x in c.categories] == ["same-host", "custom"]
    assert c.pairs == ()
    assert any("single value" in n for n in c.notes)


def test_each_note_names_its_group_and_metric() -> None:
    """A report lists the notes of every measurement and metric under one heading: 'same-host: a
    single value, no SD or interval' did not say which of the quickstart's four tables it was about."""
    frame = pd.DataFrame(
        {"placement": ["same-host", "same-host", "cross-site"], "throughput_bps": [95e6, 96e6, 9.5e6]}
    )
    c = compare_placements(frame, "throughput_bps", group="tcp")
    assert c.notes == (
        "tcp: throughput (Mbit/s): cross-site: a single value, no SD or interval",
        "tcp: throughput (Mbit/s): cross-site vs same-host: needs ≥ 2 values in each, not compared",
    )  # 'cross-site vs same-host' as the report names the pair (the difference is cross-site − same-host)
    # without a group, the metric alone; a metric without a unit, its name alone
    frame = frame.rename(columns={"throughput_bps": "jain_index"})
    assert (
        compare_placements(frame, "jain_index").notes[0]
        == "jain index: cross-site: a single value, no SD or interval"
    )


def test_hour_of_day_and_weekday() -> None:
    """2024-01-01 was a Monday. Three days × hours 0, 1, 13; value = hour + day."""
    t0 = pd.Timestamp("2024-01-01T00:00Z").value
    rows = [
        {"start_utc_ns": t0 + (h * 3600 + d * 86400) * 10**9, "value": h + d}
        for d in range(3)
        for h in (0, 1, 13)
    ]
    frame = pd.DataFrame(rows)
    hours = by_hour_of_day(frame)
    assert hours["hour"].tolist() == [0, 1, 13]
    assert hours["mean"].tolist() == [1, 2, 14]  # hour h: values h, h+1, h+2
    assert hours["sd"].tolist() == [1, 1, 1]
    assert hours["ci_low"].tolist() == pytest.approx(
        [1 - T2 / np.sqrt(3), 2 - T2 / np.sqrt(3), 14 - T2 / np.sqrt(3)]
    )
    days = by_day_of_week(frame)
    assert days["day"].tolist() == ["Monday", "Tuesday", "Wednesday"]
    assert days["mean"].tolist() == pytest.approx([14 / 3, 17 / 3, 20 / 3])
    # in Chicago (UTC−6 in January) 00:00 and 01:00 UTC are 18:00 and 19:00 of the day before
    local = by_hour_of_day(frame, tz="America/Chicago")
    assert local["hour"].tolist() == [7, 18, 19]


def test_groups_without_any_spread_have_an_exact_difference_and_no_test() -> None:
    """UDP loss 0 % in every repetition at two placements and 1 % at the third (the quickstart's
    report printed p = 0 for two groups of zeros). Without spread in either group Welch's t is d/0:
    no test applies, as for a contrast without error variance (ContrastCI.exact). p, t, DF and
    `significant` are undefined; the difference is exact: 0 − 0 = 0 (the same in every repetition)
    and 0.01 − 0 = 0.01 (a real difference, seen in every repetition). It used to be p = 1 and
    p = 0 'significant', the limit of Welch's test as both variances go to 0."""
    frame = pd.DataFrame(
        {
            "placement": ["same-host"] * 2 + ["same-site"] * 2 + ["cross-site"] * 2,
            "loss_ratio": [0.0, 0.0, 0.0, 0.0, 0.01, 0.01],
        }
    )
    c = compare_placements(frame, "loss_ratio")
    equal = c.pair("same-host", "same-site")
    assert (equal.difference, equal.ci_low, equal.ci_high) == (0, 0, 0)
    assert (equal.exact, equal.significant) == (True, None)
    assert np.isnan([equal.p_value, equal.t, equal.dof]).all()
    apart = c.pair("same-host", "cross-site")
    assert (apart.difference, apart.ci_low, apart.ci_high) == (0.01, 0.01, 0.01)
    assert (apart.exact, apart.significant) == (True, None) and np.isnan(apart.p_value)
    pair = c.to_dict()["pairs"][1]
    assert (pair["exact"], pair["significant"], pair["p_value"], pair["t"]) == (True, None, None, None)
    json.dumps(c.to_dict(), allow_nan=False)


def test_identical_values_are_the_same_whatever_their_number() -> None:
    """Two RTTs of 0.1 ms at one placement, three at the other: the same value, difference exactly 0.
    numpy's mean of two 0.1 is 0.1 and of three 0.10000000000000002: the means' difference,
    1.4e-17, was taken as a real difference (p = 0, 'significant')."""
    frame = pd.DataFrame({"placement": ["same-host"] * 2 + ["same-site"] * 3, "rtt_ms": [0.1] * 5})
    p = compare_placements(frame, "rtt_ms").pair("same-host", "same-site")
    assert (p.difference, p.exact, p.significant) == (0.0, True, None)


def test_one_group_without_spread_is_a_one_sample_t_test() -> None:
    """b = 1, 2, 3, 4 against a = 5, 5, 5: with var(a) = 0 Welch's t is the one-sample t of b
    against 5. Mean(b) − 5 = −2.5, s_b² = 5/3, se = √(5/12) = 0.645497, t = −2.5/0.645497 =
    −3.872983, DF = (s_b²/4)² / ((s_b²/4)²/3) = 3; t[0.975; 3] = 3.182446 (t table), so the
    interval is −2.5 ∓ 3.182446·0.645497 = (−4.554260, −0.445740); p = 2·P(T₃ > 3.872983) = 0.030466
    (T₃'s survival function)."""
    frame = pd.DataFrame({"placement": ["same-host"] * 3 + ["same-site"] * 4, "v": [5, 5, 5, 1, 2, 3, 4]})
    p = compare_placements(frame, "v").pair("same-host", "same-site")
    se = np.sqrt(5 / 12)
    assert p.exact is False
    assert (p.difference, p.t, p.dof) == pytest.approx((-2.5, -2.5 / se, 3))
    assert (p.ci_low, p.ci_high) == pytest.approx((-2.5 - 3.182446 * se, -2.5 + 3.182446 * se), abs=1e-6)
    assert p.p_value == pytest.approx(2 * stats.t.sf(2.5 / se, 3))
    assert p.p_value == pytest.approx(0.030466, abs=1e-6)
    assert p.significant is True
