"""Two tenants sweeping at the same moment through a Linux bridge (kind parallel), as root, through the
whole chain (CLI → plan → local provider → vnb-probe → store → report).

  t1s ──┐      ┌── t1r
        lb ────┤
  t2s ──┘      └── t2r

Sweep: 1000 and 2000 packets/s of 18-byte payloads, 1 s per point, each pair alone first (alone:
true), then both pairs together: one step per point whose two flows start behind one barrier.
Rates this low are far below what the bridge passes, so each tenant must receive its offered rate.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pandas as pd
import pytest

from tests.helpers.integration.requirements import missing
from vnetbench.plan import make_plan
from vnetbench.spec import parse_spec
from vnetbench.store.db import Store

pytestmark = pytest.mark.root

RATES = [1000, 2000]
SIZE = 18
# A loaded 2-vCPU machine holds a sender off the CPU; it skips the overdue slots (counted), so its
# sent rate can fall below the offered one. Up to half is load; below that the flow did not run.
STALL = 0.5
# "Together" means both 1 s flows overlap almost wholly, not one after the other (>= 1 s apart). On a
# quiet machine the barrier releases both senders within some ms and both send their first packet
# 0-2 ms apart; on a busy one a released process can wait tens of ms for a CPU to exec and open its
# socket (54 ms seen at load 8), so the bound is 250 ms: a quarter of a point, far from sequential.
MAX_SKEW_NS = 250_000_000
MAX_FIRST_SEND_SPREAD_NS = 250_000_000

SPEC = f"""
name: tenants-it
topology:
  nodes: [{{name: t1s}}, {{name: t1r}}, {{name: t2s}}, {{name: t2r}}]
  switches: [{{name: lb}}]
  links:
    - {{endpoints: [t1s, lb]}}
    - {{endpoints: [lb, t1r]}}
    - {{endpoints: [t2s, lb]}}
    - {{endpoints: [lb, t2r]}}
measurements:
  - {{name: sweep, kind: pps, rates: {RATES}, sizes: [{SIZE}], duration: 1s}}
patterns:
  - {{name: tenants, kind: parallel, pairs: [[t1s, t1r], [t2s, t2r]], measurements: [sweep]}}
telemetry: {{enabled: false}}
"""

SKIP = missing(probe=True)


class Run:
    def __init__(
        self, frame: pd.DataFrame, all_attempts: pd.DataFrame, raw: dict[str, str], report: Path
    ) -> None:
        self.frame, self.all_attempts, self.raw, self.report = frame, all_attempts, raw, report


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Run]:
    if SKIP:
        pytest.skip(SKIP)
    tmp = tmp_path_factory.mktemp("tenants")
    spec, db, report = tmp / "tenants.yaml", tmp / "tenants.db", tmp / "report"
    spec.write_text(SPEC)
    vnetbench = str(Path(sys.executable).parent / "vnetbench")
    done = subprocess.run(
        [vnetbench, "run", str(spec), "--db", str(db), "--report", str(report)],
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    store = Store(db)
    try:
        campaign = store.campaigns()[-1]
        frame = store.measurements_frame(campaign["id"])
        all_attempts = store.measurements_frame(campaign["id"], latest_only=False)
        raw = {
            row["key"]: store.raw_output(int(row["id"])).get(("client", "stdout"), "")
            for _, row in frame.iterrows()
        }
        live = store.live_objects(campaign["id"])
    finally:
        store.close()
    yield Run(frame, all_attempts, raw, report)
    assert live == [], f"the campaign left objects it recorded: {live}"
    names = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
    assert f"vnb{campaign['id']}" not in names


def test_every_planned_measurement_is_stored_once(run: Run) -> None:
    plan = make_plan(parse_spec(SPEC), "c0ffee00", 1)
    planned = [f.key for s in plan.steps for f in s.flows]
    assert len(planned) == 2 * 2 + 2 * 2  # two pairs alone × two points, then two points × two flows
    assert sorted(run.all_attempts["key"]) == sorted(planned)  # once each, no retry, nothing extra
    assert (run.frame["status"] == "ok").all(), run.frame[["key", "reason"]].to_string()


def test_each_tenant_receives_its_offered_rate(run: Run) -> None:
    together = run.frame[run.frame["group_kind"] == "together"]
    assert len(together) == 4 and (together["group_size"] == 2).all()
    for _, row in run.frame.iterrows():
        offered = row["target_pps"]
        assert offered in RATES and row["payload_bytes"] == SIZE
        assert row["offered_bps"] == pytest.approx(offered * SIZE * 8)
        # never above the offered rate; below it only by what a stalled sender skipped
        assert (1 - STALL) * offered <= row["achieved_pps"] <= 1.02 * offered, row["key"]
        # and what was sent arrived: the bridge passes both tenants whole
        assert row["received_packets"] >= 0.99 * row["sent_packets"], row["key"]
        assert row["received_pps"] == pytest.approx(row["achieved_pps"], rel=0.05), row["key"]
        assert row["loss_ratio"] < 0.01, row["key"]
    for pps in RATES:
        point = together[together["target_pps"] == pps]
        assert sorted(point["src"]) == ["t1s", "t2s"]
        assert point["step_key"].nunique() == 1  # one step per point, both flows in it


def test_both_flows_of_a_point_start_together(run: Run) -> None:
    together = run.frame[run.frame["group_kind"] == "together"]
    for _, point in together.groupby("step_key"):
        assert point["start_skew_ns"].nunique() == 1
        assert 0 <= point["start_skew_ns"].iloc[0] <= MAX_SKEW_NS
        assert sorted(point["start_offset_ns"])[0] == 0
        starts = [json.loads(run.raw[key])["first_send_realtime_ns"] for key in point["key"]]
        assert max(starts) - min(starts) <= MAX_FIRST_SEND_SPREAD_NS, starts


def test_the_report_shows_both_tenants_and_their_aggregate(run: Run) -> None:
    summary = json.loads((run.report / "report.json").read_text())
    section = next(s for s in summary["sections"] if s["title"] == "Packet rate: received vs offered")
    table = next(t for t in section["tables"] if t["title"] == "Simultaneous flows per sweep point")
    rows = [dict(zip(table["columns"], r, strict=True)) for r in table["rows"]]
    # packet rates in K pps, as the sweep summary and the Findings: 1000 pps is 1.000
    assert [(r["flows"], float(r["offered per flow (K pps)"])) for r in rows] == [("2", 1.0), ("2", 2.0)]
    frame = run.frame
    for r in rows:
        offered = 1000 * float(r["offered per flow (K pps)"])
        at = frame[frame["target_pps"] == offered]
        # the report's numbers are the store's: the two tenants' received rates summed, and the
        # mean of the pairs swept alone at that rate (shown to 3-4 significant digits)
        together = at[at["group_kind"] == "together"]["received_pps"].sum()
        alone = at[at["group_kind"].isin(["alone", "single"])]["received_pps"].mean()
        assert 1000 * float(r["aggregate received (K pps)"]) == pytest.approx(together, rel=0.005)
        assert 1000 * float(r["one flow alone (K pps)"]) == pytest.approx(alone, rel=0.005)
        assert together > offered  # both tenants' flows are in it
    assert (run.report / "figures" / f"probe_pps_multi_{SIZE}.png").is_file()
