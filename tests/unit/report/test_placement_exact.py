"""Placement differences without any spread on either side (0 % loss in every repetition): the
table and the findings call them exact, the same or different in every repetition, not
'significant' (p = 0) or 'not significant' (p = 1) from Welch's limit."""

from __future__ import annotations

from types import SimpleNamespace

import pandas as pd

from vnetbench.analysis import campaign_parts as cp
from vnetbench.analysis.placement import compare_placements
from vnetbench.report.analysis_tables import _placement
from vnetbench.report.sections.findings import placement_findings


def loss() -> cp.Placements:
    """same-host and same-site 0 % in both repetitions, cross-site 1 % in both."""
    frame = pd.DataFrame(
        {
            "placement": ["same-host"] * 2 + ["same-site"] * 2 + ["cross-site"] * 2,
            "loss_ratio": [0.0, 0.0, 0.0, 0.0, 0.01, 0.01],
        }
    )
    return cp.Placements(
        0.95, [cp.PlacementEntry("udp", "loss_ratio", compare_placements(frame, "loss_ratio"))]
    )


def test_the_findings_say_same_or_different_in_every_repetition() -> None:
    (line,) = placement_findings(SimpleNamespace(placement=loss()))
    assert line == (
        "<b>udp: loss by placement</b> (alone; 95 % t interval over flows × repetitions, n = 2 per placement): "
        "same-host 0 % (0 to 0), same-site 0 % (0 to 0), "
        "cross-site 1.00 % (1.00 to 1.00); "
        "different in every repetition (no spread, so no test applies): cross-site − same-host +1.00 pp, "
        "cross-site − same-site +1.00 pp; "
        "the same in every repetition (no spread, so no test applies): same-site vs same-host."
    )


def test_the_table_has_no_p_and_says_exact() -> None:
    section = _placement(loss())
    table = section.tables[1]
    p, significant = table.columns.index("p"), table.columns.index("significant")
    assert [(row[0], row[1], row[p], row[significant]) for row in table.rows] == [
        ("same-host", "same-site", "", "exact: same"),
        ("same-host", "cross-site", "", "exact: differs"),
        ("same-site", "cross-site", "", "exact: differs"),
    ]
    assert (
        "udp: loss (%): same-site vs same-host, cross-site vs same-host, cross-site vs same-site: every value "
        "of both categories is the same (no spread), so no test applies and there is no p; the difference "
        "is exact, the same in every repetition."
    ) in section.items
