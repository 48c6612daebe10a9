"""Jain's fairness index and UDP effective throughput, on hand-computed cases."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from vnetbench.analysis.fairness import (
    bootstrap_mean_interval,
    fairness_by_group,
    fairness_spread,
    jain_index,
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
    # bootstrap means of {1, 0.8, 1}: 0.8 with probability 1/27, 1 with probability 8/27
    assert (reno["ci_low"], reno["ci_high"]) == pytest.approx((0.8, 1.0))
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
    assert 0.98 <= s["ci_low"] < s["mean"] < s["ci_high"] <= 1.0


def test_jain_index_of_equal_flows_is_not_above_one() -> None:
    x = np.full(7, 0.7)
    assert x.sum() ** 2 / (7 * np.sum(x * x)) > 1.0  # 1.0000000000000004 in floats
    assert jain_index(x) == 1.0


def test_bootstrap_interval_matches_t_interval_for_many_replications() -> None:
    """Percentile bootstrap of the mean ≈ t interval when there are many values (here 60)."""
    v = np.random.default_rng(7).normal(0.9, 0.02, size=60)
    low, high = bootstrap_mean_interval(v, 0.95)
    half = 2.000995 * v.std(ddof=1) / np.sqrt(60)  # t[0.975; 59]
    assert low == pytest.approx(v.mean() - half, abs=0.15 * half)
    assert high == pytest.approx(v.mean() + half, abs=0.15 * half)
    assert np.isnan(bootstrap_mean_interval([0.9])[0])
    assert bootstrap_mean_interval([1.0, 1.0, 1.0]) == (1.0, 1.0)


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
