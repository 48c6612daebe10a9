"""Jain's fairness index and UDP effective throughput, on hand-computed cases."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from vnetbench.analysis.fairness import (
    fairness_by_group,
    fairness_spread,
    jain_index,
    mean_index_interval,
)
from vnetbench.analysis.inputs import DataError
from vnetbench.analysis.udp import effective_throughput_bps

T2 = 4.302652729749462  # t[0.975; 2]


@pytest.mark.parametrize(
    ("x", "index"),
    [
        ([1, 1, 1, 1], 1.0),
        ([1, 0, 0, 0], 0.25),  # one flow takes everything: 1/n
        ([1, 2, 3], 36 / 42),  # (Σx)² = 36, n Σx² = 3 × 14
        ([10, 10, 20], 1600 / 1800),
        ([940e6] * 9 + [700e6], (9 * 940 + 700) ** 2 / (10 * (9 * 940**2 + 700**2))),
    ],
)
def test_jain_index(x: list[float], index: float) -> None:
    assert jain_index(x) == pytest.approx(index)


def test_jain_index_edge_cases() -> None:
    assert np.isnan(jain_index([0, 0]))  # nobody got anything: undefined, not "fair"
    with pytest.raises(ValueError):
        jain_index([1, -1])
    with pytest.raises(ValueError):
        jain_index([])


@pytest.fixture
def flows() -> pd.DataFrame:
    """reno: rep 1 [1, 1] → 1, rep 2 [1, 3] → 16/20 = 0.8, rep 3 [2, 2] → 1.
    cubic: rep 1 [2, 2, 2] → 1, rep 2 [1, 2, 3] → 6/7 (three flows)."""
    rows = [("reno", 1, 1), ("reno", 1, 1), ("reno", 2, 1), ("reno", 2, 3), ("reno", 3, 2), ("reno", 3, 2),
            ("cubic", 1, 2), ("cubic", 1, 2), ("cubic", 1, 2), ("cubic", 2, 1), ("cubic", 2, 2), ("cubic", 2, 3)]  # fmt: skip
    return pd.DataFrame(rows, columns=["cc", "replication", "throughput_bps"])


def test_fairness_by_group(flows: pd.DataFrame) -> None:
    g = fairness_by_group(flows, "throughput_bps", ["cc", "replication"])
    assert g.columns.tolist() == ["cc", "replication", "n_flows", "jain_index"]
    assert g["n_flows"].tolist() == [3, 3, 2, 2, 2]
    assert g["jain_index"].tolist() == pytest.approx([1, 6 / 7, 1, 0.8, 1])


def test_fairness_spread_over_replications(flows: pd.DataFrame) -> None:
    """reno: mean (1 + 0.8 + 1)/3 = 0.93333, SD √(((1/15)² · 2 + (2/15)²)/2) = √(0.0133…) = 0.11547.
    A t interval would be 0.9333 ± t[0.975;2] · 0.11547/√3 = [0.646, 1.220]: past 1."""
    s = fairness_spread(flows, "throughput_bps", ["cc"], "replication").set_index("cc")
    reno = s.loc["reno"]
    assert reno["replications"] == 3
    assert reno["mean"] == pytest.approx(2.8 / 3)
    assert reno["sd"] == pytest.approx(np.sqrt(0.04 / 3))
    assert (reno["min"], reno["max"]) == (0.8, 1.0)
    # U = 1 − J = {0, 0.2, 0}: Ū = 1/15, s_U = 0.11547. The χ² model's variance 2Ū²/(f − 1) = 2/225
    # gives (n−1)s²/σ² = 3.0, P(χ²₂ ≤ 3) = 1 − e^−1.5 = 0.78: no sign of unequal shares, so the hull.
    # χ² (3 DF): U in (0.2/9.3484, 0.2/0.21580); log-t: Ū·exp(∓4.3027·0.11547/(√3·Ū)) = Ū·exp(∓4.3027).
    u_low = min(0.2 / stats.chi2.ppf(0.975, 3), np.exp(-T2) / 15)
    assert (reno["ci_low"], reno["ci_high"]) == pytest.approx((0.5, 1 - u_low))  # low end clipped to 1/f
    assert reno["ci_high"] == pytest.approx(0.999097, abs=1e-6)
    assert s.loc["cubic", "mean"] == pytest.approx((1 + 6 / 7) / 2)


def test_fairness_interval_near_one_stays_in_bounds() -> None:
    """Indices 1, 0.99724 and 0.98 (flows [1, 1], [1, 0.9], [1, 0.75]): the t interval of their mean
    is 0.9924 ± 0.0270, whose upper end 1.019 is an impossible fairness."""
    rows = [(1, 1.0), (1, 1.0), (2, 1.0), (2, 0.9), (3, 1.0), (3, 0.75)]
    frame = pd.DataFrame(rows, columns=["replication", "throughput_bps"]).assign(cc="cubic")
    s = fairness_spread(frame, "throughput_bps", ["cc"], "replication").iloc[0]
    j = np.array([1.0, 1.9**2 / (2 * 1.81), 0.98])
    assert s["mean"] == pytest.approx(j.mean())
    t_high = j.mean() + T2 * j.std(ddof=1) / np.sqrt(3)
    assert t_high > 1.01  # what the old interval said
    # the interval stays in J's range [1/2, 1], and reaches further down than the indices: with three
    # replications one bad index could be the tail of a skewed distribution (see mean_index_interval)
    assert 0.5 <= s["ci_low"] < 0.98 < s["mean"] < s["ci_high"] <= 1.0


def test_jain_index_of_equal_flows_is_not_above_one() -> None:
    x = np.full(7, 0.7)
    assert x.sum() ** 2 / (7 * np.sum(x * x)) > 1.0  # 1.0000000000000004 in floats
    assert jain_index(x) == 1.0


def test_index_interval_with_many_replications_of_unequal_shares_is_the_log_t_interval() -> None:
    """60 replications of two flows at shares 0.6/0.4 with a little noise: U = 1 − J ≈ 0.0385 ± small,
    far less spread than noise around a fair share would give, so the interval is the log-t one,
    Ū·exp(∓t[0.975; 59]·s_U/(√60·Ū)), about as wide as a plain t interval."""
    rng = np.random.default_rng(7)
    shares = np.stack([0.6 + rng.normal(0, 0.01, 60), 0.4 + rng.normal(0, 0.01, 60)], axis=1)
    j = np.array([jain_index(x) for x in shares])
    u = 1 - j
    half = stats.t.ppf(0.975, 59) * u.std(ddof=1) / (np.sqrt(60) * u.mean())
    low, high = mean_index_interval(j, 2)
    assert (low, high) == pytest.approx((1 - u.mean() * np.exp(half), 1 - u.mean() * np.exp(-half)))
    t_half = stats.t.ppf(0.975, 59) * j.std(ddof=1) / np.sqrt(60)
    assert high - low == pytest.approx(2 * t_half, rel=0.05)
    assert np.isnan(mean_index_interval([0.9], 2)[0])
    assert mean_index_interval([1.0, 1.0, 1.0], 3) == (1.0, 1.0)


def test_a_replication_where_every_flow_got_zero_is_left_out_with_a_note() -> None:
    """reno: rep 1 [1, 1] → 1, rep 2 [0, 0] → 0/0, undefined, rep 3 [1, 3] → 16/20 = 0.8. Over the two
    defined: mean 0.9, SD √((0.1² + 0.1²)/1) = 0.14142, min 0.8, max 1 (the mean was NaN). Interval by
    hand: U = {0, 0.2}, Ū = 0.1, s_U = 0.14142; the χ² model's variance 2Ū²/(f − 1) = 0.02 gives
    (n − 1)s²/σ² = 1, P(χ²₁ ≤ 1) = 0.68: the hull. log-t: Ū·exp(∓t[0.975; 1]·s_U/(√2·Ū)) =
    0.1·exp(∓12.706); χ² (2 DF): 0.2/7.3778 and 0.2/0.050636. Low end 1 − 0.1·e^12.706, clipped to
    1/f = 0.5; high end 1 − min(0.1·e^−12.706, 0.027108) = 1 − 3.04e-7.
    cubic: both replications all 0: nothing to average."""
    rows = [("reno", 1, 1), ("reno", 1, 1), ("reno", 2, 0), ("reno", 2, 0), ("reno", 3, 1), ("reno", 3, 3),
            ("cubic", 1, 0), ("cubic", 1, 0), ("cubic", 2, 0), ("cubic", 2, 0)]  # fmt: skip
    frame = pd.DataFrame(rows, columns=["cc", "replication", "throughput_bps"])
    s = fairness_spread(frame, "throughput_bps", ["cc"], "replication").set_index("cc")
    reno = s.loc["reno"]
    assert (reno["replications"], reno["undefined"]) == (3, 1)
    assert reno["mean"] == pytest.approx(0.9) and reno["sd"] == pytest.approx(np.sqrt(0.02))
    assert (reno["min"], reno["max"]) == (0.8, 1.0)
    t1 = 12.706204736174698  # t[0.975; 1]
    assert (reno["ci_low"], reno["ci_high"]) == pytest.approx((0.5, 1 - 0.1 * np.exp(-t1)), abs=1e-12)
    assert reno["note"] == (
        "1 of 3 replications: every flow got 0, so Jain's index is undefined (0/0) there and left out; "
        "the mean, SD and interval are over the others"
    )
    cubic = s.loc["cubic"]
    assert (cubic["replications"], cubic["undefined"]) == (2, 2)
    assert all(np.isnan(cubic[c]) for c in ("mean", "sd", "min", "max", "ci_low", "ci_high"))
    assert cubic["note"].startswith("every replication: every flow got 0")


def test_fairness_refuses_negative_allocations() -> None:
    with pytest.raises(DataError, match="negative"):
        fairness_by_group(pd.DataFrame({"g": [1, 1], "v": [1, -1]}), "v", ["g"])


def test_udp_effective_throughput() -> None:
    assert effective_throughput_bps(1e9, 0.25) == pytest.approx(7.5e8)
    assert effective_throughput_bps(np.array([1e9, 1e9]), np.array([0, 1])).tolist() == [1e9, 0]
    s = effective_throughput_bps(
        pd.Series([1e9, 5e8], index=["a", "b"]), pd.Series([0.5, 0.1], index=["a", "b"])
    )
    assert s.name == "effective_throughput_bps" and s.tolist() == pytest.approx([5e8, 4.5e8])
    with pytest.raises(ValueError, match="ratio"):
        effective_throughput_bps(1e9, 57.0)  # percent given by mistake
    with pytest.raises(ValueError):
        effective_throughput_bps(1e9, -0.01)  # iperf3's duplicate artefact
