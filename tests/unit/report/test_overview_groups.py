"""The analysis overview's 'groups of simultaneous flows' counted every step, one flow or more:
openstack-bridges (campaign 760eed70) showed 160, of which 60 were single sweeps — 100 steps held two
or more flows started together. Single-flow steps are now counted apart.

Expected counts come from the ONL Table 3 CSV itself: one step per (receivers, replication), a group
when receivers ≥ 2."""

from __future__ import annotations

import pandas as pd

from tests.helpers.campaign_frames import ONL_SPEC, PAIRS_SPEC, _frames, _row, onl_rows
from tests.helpers.stats_app import ONL
from vnetbench.analysis.campaign_analysis import analyze_campaign
from vnetbench.report.analysis_tables import _overview


def test_single_flow_steps_are_not_counted_as_groups_of_simultaneous_flows() -> None:
    table = pd.read_csv(ONL)
    steps = len(table[["receivers", "replication"]].drop_duplicates())
    single = int((table["receivers"] == 1).sum())
    assert single > 0 and steps > single
    analysis = analyze_campaign(_frames(ONL_SPEC, onl_rows()))
    assert analysis.data["groups"] == steps
    assert analysis.data["simultaneous_groups"] == steps - single
    (table_view,) = _overview(analysis).tables
    row = dict(table_view.rows)["groups of simultaneous flows"]
    assert row == f"{steps - single} (and {single} steps of one flow)"


def test_the_alone_steps_of_a_star_are_counted_among_the_steps_of_one_flow() -> None:
    """quickstart d1453f96 stored 24 steps: 18 pairs steps, 4 star steps of one flow alone and 2 of
    both flows together; the overview said '2 (and 18 steps of one flow)', leaving the 4 out. Here 3
    pairs steps, 2 alone and 1 together: 6 steps by construction."""
    rows = [_row(i, step_key=f"p{i}", pattern="p", pattern_kind="pairs", dst=f"v{i}") for i in (1, 2, 3)]
    rows += [_row(i, step_key=f"a{i}", group_kind="alone", dst=f"v{i - 3}") for i in (4, 5)]
    rows += [_row(i, step_key="t", group_kind="together", dst=f"v{i - 5}") for i in (6, 7)]
    analysis = analyze_campaign(_frames(PAIRS_SPEC, rows))
    assert (analysis.data["groups"], analysis.data["simultaneous_groups"], analysis.data["alone_steps"]) == (
        4,
        1,
        2,
    )
    (table_view,) = _overview(analysis).tables
    row = dict(table_view.rows)["groups of simultaneous flows"]
    assert row == "1 (and 5 steps of one flow, 2 of them flows of a group measured alone)"
