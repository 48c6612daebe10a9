"""Jain's fairness index and UDP effective throughput, on hand-computed cases."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from vnetbench.analysis.fairness import fairness_by_group, fairness_spread, jain_index
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
    """reno: mean (1 + 0.8 + 1)/3 = 0.93333, SD √(((1/15)² · 2 + (2/15)²)/2) = √(0.0133…) = 0.11547,
    95 % half-width t[0.975;2] · 0.11547/√3 = 0.28684."""
    s = fairness_spread(flows, "throughput_bps", ["cc"], "replication").set_index("cc")
    reno = s.loc["reno"]
    assert reno["replications"] == 3
    assert reno["mean"] == pytest.approx(2.8 / 3)
    assert reno["sd"] == pytest.approx(np.sqrt(0.04 / 3))
    assert (reno["min"], reno["max"]) == (0.8, 1.0)
    half = T2 * np.sqrt(0.04 / 3) / np.sqrt(3)
    assert (reno["ci_low"], reno["ci_high"]) == pytest.approx((2.8 / 3 - half, 2.8 / 3 + half))
    assert s.loc["cubic", "mean"] == pytest.approx((1 + 6 / 7) / 2)


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
