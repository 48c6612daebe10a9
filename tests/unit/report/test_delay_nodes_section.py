"""The report's "Delay nodes" section from stored node reports: rows per direction, and a sentence
for every drop the node made that was not asked for, every frame not accounted for, and late
releases."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd

from tests.helpers.stores import campaign_store
from vnetbench.providers.base import EMULATOR_EVENT
from vnetbench.report.sections import ReportContext, delay_nodes


def _direction(**over: object) -> dict:
    base = {
        "from": "a0", "to": "b0", "delay_ns": 25_000_000, "jitter_ns": 0, "jitter_dist": "uniform",
        "loss_ratio": 0.01, "loss_model": "random", "rate_bps": None, "rx_frames": 10_000,
        "tx_frames": 9_900, "lost_frames": 100, "held_at_exit_frames": 0, "queue_drop_frames": 0,
        "limit_drop_frames": 0, "oversize_drop_frames": 0, "tx_error_frames": 0, "kernel_rx_drop_frames": 0,
        "release_error": {"count": 9_900, "p50_ns": 120_000, "p99_ns": 300_000, "max_ns": 900_000},
    }  # fmt: skip
    return base | over


def _sections(tmp_path: Path, directions: list[dict]) -> list:
    store = campaign_store(tmp_path / "s.db")
    report = {"cpu_per_frame_ns": 1600.0, "directions": directions}
    store.add_event("c1", EMULATOR_EVENT, json.dumps({"build_id": 1, "link": "wan", "report": report}))
    ctx = ReportContext(store, store.campaign("c1"), pd.DataFrame(), tmp_path)
    return delay_nodes.build(ctx)


def test_a_clean_node_gets_a_row_and_says_so(tmp_path: Path) -> None:
    (section,) = _sections(tmp_path, [_direction()])
    (row,) = section.tables[0].rows
    assert row == [
        "1", "wan", "a0 → b0", "25.000 ms, loss 1 %", "10,000", "9,900", "100", "none",
        "0.120 / 0.300 / 0.900", "1.60",
    ]  # fmt: skip
    assert section.items == [
        "No node dropped a frame it was not asked to drop, and 99 % of frames left within 1.000 ms of "
        "their release time."
    ]


def test_unasked_drops_missing_frames_and_late_releases_are_each_said(tmp_path: Path) -> None:
    d = _direction(
        tx_frames=9_000,
        kernel_rx_drop_frames=400,
        limit_drop_frames=800,
        release_error={"count": 9_000, "p50_ns": 2e6, "p99_ns": 7.5e6, "max_ns": 9e6},
    )  # 10 000 in = 9 000 out + 100 lost + 800 limit, so 100 are unaccounted (ring drops never reached rx)
    (section,) = _sections(tmp_path, [d])
    assert section.tables[0].rows[0][7] == "800 held-frame limit, 400 receive ring/socket full"
    text = " ".join(section.items)
    assert "800 (held-frame limit)" in text and "400 (receive ring/socket full)" in text
    assert "100 frames read but not accounted for" in text
    assert "more than 7.500 ms after their release time" in text


def test_a_held_delay_is_said_with_the_configured_impairment(tmp_path: Path) -> None:
    d = _direction(delay_ns=0, delay_cdf="0:5000000ns,1:45000000ns", delay_hold_ns=2_000_000_000)
    (section,) = _sections(tmp_path, [d])
    assert section.tables[0].rows[0][3] == "empirical CDF, each draw held 2000.000 ms, loss 1 %"
    (plain,) = _sections(tmp_path / "p", [_direction(delay_hold_ns=0)])
    assert plain.tables[0].rows[0][3] == "25.000 ms, loss 1 %"


def test_no_stored_report_no_section(tmp_path: Path) -> None:
    store = campaign_store(tmp_path / "s.db")
    ctx = ReportContext(store, store.campaign("c1"), pd.DataFrame(), tmp_path)
    assert delay_nodes.build(ctx) == []


def test_a_link_between_hosts_has_a_node_at_each_end_named_by_what_each_side_faces(tmp_path: Path) -> None:
    """geni-categories' cross-site link: each node end's delay node delays what leaves its node and
    passes the other direction at once; both nodes' reports are kept, and each row names the real
    direction (issue #13: the return direction showed as configured 0.000 ms, counts as swapped)."""
    store = campaign_store(tmp_path / "s.db")
    ends = {"vm0": "vnbX-d0", "vm3": "vnbX-d1"}
    for node, ns in ends.items():
        delayed = _direction(**{"from": "da", "to": "db", "rx_frames": 60, "tx_frames": 60, "lost_frames": 0})
        passed = _direction(
            **{"from": "db", "to": "da", "delay_ns": 0, "loss_ratio": 0, "rx_frames": 55, "tx_frames": 55},
            lost_frames=0,
        )
        report = {"cpu_per_frame_ns": 1e3, "directions": [delayed, passed], "link": "cross",
                  "sides": {"da": f"node:{node}", "db": f"host:h-{node}"}}  # fmt: skip
        detail = {"build_id": 1, "link": "cross", "node": ns, "report": report}
        store.add_event("c1", EMULATOR_EVENT, json.dumps(detail))
    ctx = ReportContext(store, store.campaign("c1"), pd.DataFrame(), tmp_path)
    (section,) = delay_nodes.build(ctx)
    rows = {r[2]: r for r in section.tables[0].rows}
    assert set(rows) == {"vm0 → host h-vm0", "host h-vm0 → vm0", "vm3 → host h-vm3", "host h-vm3 → vm3"}
    assert rows["vm0 → host h-vm0"][3] == "25.000 ms, loss 1 %" and rows["vm0 → host h-vm0"][4] == "60"
    assert rows["host h-vm0 → vm0"][3] == "passed at once (delayed by the node at the other end)"
    assert rows["host h-vm0 → vm0"][4] == "55"
