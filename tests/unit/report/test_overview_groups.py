"""The analysis overview's 'groups of simultaneous flows' counted every step, one flow or more:
openstack-bridges (campaign 760eed70) showed 160, of which 60 were single sweeps — 100 steps held two
or more flows started together. Single-flow steps are now counted apart.

Expected counts come from the ONL Table 3 CSV itself: one step per (receivers, replication), a group
when receivers ≥ 2."""

from __future__ import annotations

import pandas as pd

from tests.helpers.campaign_frames import ONL_SPEC, _frames, onl_rows
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
