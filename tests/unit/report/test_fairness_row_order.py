"""The fairness table of a packet-rate sweep listed its points in text order — 1000, 100000, 200000,
30000, 60000 pps (openstack-bridges' report) — so the index did not read along the sweep. Rows now
follow the numbers in the series label, then the factor columns as before."""

from __future__ import annotations

import pandas as pd

from vnetbench.analysis.campaign_parts import Fairness
from vnetbench.report.analysis_tables import _fairness


def test_sweep_points_are_listed_in_numeric_order() -> None:
    series = [
        f"ovs-2flows · sweep · {size} B at {pps} pps" for size in (1472, 18) for pps in (1000, 100000, 30000)
    ]
    spread = pd.DataFrame(
        {"series": series, "replications": 2, "mean": 0.9, "sd": 0.01, "min": 0.89, "max": 0.91}
        | {"ci_low": 0.5, "ci_high": 1.0}
    )
    (table,) = _fairness(Fairness(["series"], 0.95, pd.DataFrame(), spread)).tables
    assert [row[0] for row in table.rows] == [
        "ovs-2flows · sweep · 18 B at 1000 pps",
        "ovs-2flows · sweep · 18 B at 30000 pps",
        "ovs-2flows · sweep · 18 B at 100000 pps",
        "ovs-2flows · sweep · 1472 B at 1000 pps",
        "ovs-2flows · sweep · 1472 B at 30000 pps",
        "ovs-2flows · sweep · 1472 B at 100000 pps",
    ]


def test_factor_levels_still_sort_by_number_within_a_series() -> None:
    spread = pd.DataFrame(
        {"series": "into-host · tcp", "flows": [10, 9, 2], "replications": 3, "mean": 1.0, "sd": 0.0}
        | {"min": 1.0, "max": 1.0, "ci_low": 1.0, "ci_high": 1.0}
    )
    (table,) = _fairness(Fairness(["series", "flows"], 0.95, pd.DataFrame(), spread)).tables
    assert [row[1] for row in table.rows] == ["2", "9", "10"]
