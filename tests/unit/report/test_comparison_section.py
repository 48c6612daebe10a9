"""The report's "Compared with the previous run" section (report/sections/comparison.py): the
campaign against the newest earlier campaign of the same name in the store."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd

from vnetbench.analysis import campaign_data as cd
from vnetbench.report.sections import ReportContext
from vnetbench.report.sections.comparison import build

SPEC = """
name: same-name
topology:
  nodes: [{name: a}, {name: b}]
  links: [{endpoints: [a, b], rate: 100mbit}]
measurements: [{name: tcp, kind: tcp, duration: 1s}]
patterns: [{name: p, kind: pairs, pairs: [[a, b]], measurements: [tcp]}]
schedule: {repetitions: 4}
"""


def frames(cid: str, created: int, mbit: list[float]) -> cd.CampaignFrames:
    rows = [
        {"id": i, "step_key": f"s{i}", "repetition": i + 1, "factors": {}, "pattern": "p", "pattern_kind": "pairs",
         "group_kind": "single", "measurement": "tcp", "kind": "tcp", "src": "a", "dst": "b", "placement": "same-host",
         "status": "ok", "build_id": 1, "started_utc_ns": 0, "throughput_bps": v * 1e6}
        for i, v in enumerate(mbit)
    ]  # fmt: skip
    campaign = {
        "id": cid,
        "name": "same-name",
        "seed": 1,
        "spec_text": SPEC,
        "spec_source": "t",
        "created_utc_ns": created,
    }
    return cd.CampaignFrames(
        campaign, pd.DataFrame(rows), pd.DataFrame(columns=["measurement_id", "t_ns", "metric", "value", "seq", "stream"]),
        pd.DataFrame(columns=["kind", "detail"]), pd.DataFrame({"id": [1], "ordinal": [1]}),
    )  # fmt: skip


class TwoCampaigns:
    """The read side of `Store` over fixed frames of several campaigns."""

    def __init__(self, *all_frames: cd.CampaignFrames) -> None:
        self.by_id = {f.campaign["id"]: f for f in all_frames}

    def campaigns(self) -> list[dict[str, Any]]:
        return sorted((f.campaign for f in self.by_id.values()), key=lambda c: c["created_utc_ns"])

    def campaign(self, ident: str | None = None) -> dict[str, Any]:
        return self.by_id[str(ident)].campaign

    def measurements_frame(self, cid: str) -> pd.DataFrame:
        return self.by_id[cid].measurements

    def samples_frame(self, cid: str, _metrics: Any = None) -> pd.DataFrame:
        return self.by_id[cid].samples

    def events_frame(self, cid: str) -> pd.DataFrame:
        return self.by_id[cid].events

    def builds_frame(self, cid: str) -> pd.DataFrame:
        return self.by_id[cid].builds


def test_a_halved_rate_against_the_previous_run_is_worse(tmp_path: Path) -> None:
    old = frames("old00001", 1, [95.4, 95.5, 95.3, 95.6])
    new = frames("new00002", 2, [47.7, 47.6, 47.8, 47.5])
    store = TwoCampaigns(old, new)
    [section] = build(ReportContext(store, new.campaign, new.measurements, tmp_path))  # type: ignore[arg-type]
    assert "A = old00001" in section.intro and "0 same, 0 better, 1 worse" in section.intro
    [row] = section.tables[0].rows
    assert row[0] == "a→b · tcp · throughput" and row[-1] == "worse"
    assert row[3] == "−50.1 %"  # (47.65 − 95.45)/95.45, with the minus sign U+2212 as '+' of a rise
    # the first run of a name has nothing to compare with
    assert build(ReportContext(store, old.campaign, old.measurements, tmp_path)) == []  # type: ignore[arg-type]
