"""One real campaign through the CLI: shaping accuracy, UDP loss at 1× and 2× the link, three flows sharing
one 100 mbit bottleneck, the written report, and export (issue 2's 'Done when' values) — with the store on
SQLite and on PostgreSQL (a real server, tests/helpers/postgres.py).

Topology: node `a` hangs off a Linux bridge by a 100 mbit link; b1, b2, b3 by 1 gbit links, so a's link
is the bottleneck of every flow to `a`, met where the bridge sends into it (as a flow meets a rate limit
inside a network). The bottleneck is deliberately not the sender's own link: a sender on its own shaped
link is pushed back by its kernel (the socket blocks, or TCP backs off on a local drop, while the
shaper's queue is full, as on a physical NIC), so UDP at 2× sends at 1× and loses nothing, and TCP
flows sharing their sender's shaper never see a loss to converge on fair shares.

TCP runs cubic, the default of the studies' VMs: this machine's default, bbr, drains its window to
4 packets for 200 ms every 10 s (ProbeRTT), which alone can cost 2 % of a 5 s run.
The three fan-in flows run cubic with equal 64 KiB windows: at one shared FIFO each then gets
window / (shared RTT), a third. This machine's default congestion control is bbr, whose flows (without
the fq qdisc this kernel lacks) hold unequal shares for many seconds; cubic alone converges over tens
of seconds — longer than a test should take.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pandas as pd
import pyarrow.parquet as pq
import pytest

from tests.helpers.integration.cli import only_campaign, ran_campaign, vnb
from tests.helpers.postgres import BACKENDS
from vnetbench.kinds.overhead import tcp_efficiency, udp_efficiency
from vnetbench.store.db import Store

pytestmark = pytest.mark.root

SPEC = """\
name: e2e-link
description: a 100 mbit bottleneck measured by TCP, UDP at 1x and 2x the link, and a three-flow fan-in
topology:
  nodes: [{name: a}, {name: b1}, {name: b2}, {name: b3}]
  switches: [{name: sw, kind: linux-bridge}]
  links:
    - {endpoints: [a, sw], rate: 100mbit}
    - {endpoints: [b1, sw], rate: 1gbit}
    - {endpoints: [b2, sw], rate: 1gbit}
    - {endpoints: [b3, sw], rate: 1gbit}
measurements:
  - {name: tcp, kind: tcp, duration: 5s, omit: 1s, congestion: cubic}
  - {name: udp, kind: udp, duration: 5s, rate: link}
  - {name: udp2x, kind: udp, duration: 5s, rate: link, rate_factor: 2}
  - {name: tcp3, kind: tcp, duration: 4s, omit: 1s, congestion: cubic, window: 64K}
  - {name: rtt, kind: rtt, count: 5, interval: 0.1s}
patterns:
  - {name: link, kind: pairs, pairs: [[b1, a]], measurements: [tcp, udp, udp2x, rtt]}
  - {name: fanin, kind: fan-in, sources: [b1, b2, b3], destination: a, measurements: [tcp3]}
"""

RATE = 100e6
TCP_MAX = tcp_efficiency(1500).goodput_bps(RATE)  # 100 × 1448/1514 = 95.64 Mbit/s
UDP_MAX = udp_efficiency(1470, 1500).goodput_bps(RATE)


@dataclass
class Ran:
    tmp: Path
    db: str  # a SQLite file or a PostgreSQL URL
    report: Path
    campaign: dict
    frame: pd.DataFrame  # measurements with summaries, latest attempt per key
    stdout: str
    stderr: str

    def one(self, measurement: str, group: str = "single", src: str = "b1") -> pd.Series:
        rows = self.frame[
            (self.frame["measurement"] == measurement)
            & (self.frame["group_kind"] == group)
            & (self.frame["src"] == src)
        ]
        assert len(rows) == 1, f"{measurement}/{group}/{src}: {len(rows)} rows"
        row = rows.iloc[0]
        assert row["status"] == "ok", f"{row['key']} failed: {row['reason']}"
        return row


@pytest.fixture(scope="module", params=BACKENDS)
def ran(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Ran]:
    tmp = tmp_path_factory.mktemp("e2e")
    db = None if request.param == "sqlite" else request.getfixturevalue("postgres").create_database()
    with ran_campaign(SPEC, tmp, db=db) as (db, report, proc):
        campaign = only_campaign(db)
        store = Store(db)
        frame = store.measurements_frame(campaign["id"])
        store.close()
        yield Ran(tmp, db, report, campaign, frame, proc.stdout, proc.stderr)


def _section(report: Path, anchor_title: str) -> dict:
    summary = json.loads((report / "report.json").read_text())
    for section in summary["sections"]:
        if section["title"] == anchor_title:
            return section
    raise AssertionError(f"no section '{anchor_title}' in {[s['title'] for s in summary['sections']]}")


def _row(table: dict, connection: str, measurement: str) -> dict[str, str]:
    """A row of a per-connection table; tables holding several measurements of a kind name each row's."""
    for row in table["rows"]:
        cells = dict(zip(table["columns"], row, strict=True))
        if cells["connection"] == connection and cells["measurement"] == measurement:
            return cells
    raise AssertionError(f"no row {connection} {measurement} in {table['title']}: {table['rows']}")


def _percent(cell: str) -> float:
    assert cell.endswith(" %"), cell
    return float(cell.removesuffix(" %"))


def test_campaign_finished_with_every_planned_measurement(ran: Ran) -> None:
    assert ran.campaign["status"] == "finished"
    # 4 pair measurements + 3 fan-in flows alone + 3 together
    assert len(ran.frame) == 10
    assert set(ran.frame["status"]) == {"ok"}, ran.frame[ran.frame["status"] != "ok"][["key", "reason"]]
    assert (ran.report / "index.html").stat().st_size > 10_000


def _receiver_seconds(ran: Ran, measurement_id: int) -> list[str]:
    """The receiver's per-interval rates (Mbit/s): says which second a failed total came from."""
    store = Store(ran.db)
    samples = store.samples_frame(ran.campaign["id"], ["throughput_bps"])
    store.close()
    mine = samples[(samples["measurement_id"] == measurement_id) & samples["stream"].isna()]
    return [f"{v / 1e6:.1f}" for v in mine.sort_values("t_ns")["value"]]


def test_tcp_on_a_100mbit_link_is_within_2_percent_of_the_model(ran: Ran) -> None:
    tcp = ran.one("tcp")
    assert tcp["link_rate_bps"] == RATE
    assert tcp["expected_max_bps"] == pytest.approx(TCP_MAX)
    ratio = tcp["throughput_bps"] / TCP_MAX
    assert abs(ratio - 1) <= 0.02, (
        f"TCP {tcp['throughput_bps'] / 1e6:.2f} Mbit/s = {ratio:.1%} of the model; "
        f"per second at the receiver: {_receiver_seconds(ran, int(tcp['id']))}"
    )
    # the report shows the same ratio, in the TCP table and in index.html
    table = _section(ran.report, "TCP throughput")["tables"][0]
    cells = _row(table, "b1 → a", "tcp")
    assert _percent(cells["of model max"]) == pytest.approx(100 * ratio, abs=0.051)
    assert float(cells["model max (Mbit/s)"]) == pytest.approx(TCP_MAX / 1e6, rel=1e-3)
    html = (ran.report / "index.html").read_text()
    assert "of model max" in html and cells["of model max"] in html


def test_udp_at_the_link_rate_loses_under_1_percent(ran: Ran) -> None:
    udp = ran.one("udp")
    assert udp["offered_bps"] == pytest.approx(UDP_MAX)
    assert udp["loss_ratio"] < 0.01, f"loss {udp['loss_ratio']:.2%}"
    assert udp["throughput_bps"] / UDP_MAX > 0.97


def test_udp_at_twice_the_link_rate_loses_half(ran: Ran) -> None:
    udp = ran.one("udp2x")
    assert udp["offered_bps"] == pytest.approx(2 * UDP_MAX)
    assert udp["loss_ratio"] == pytest.approx(0.5, abs=0.03), f"loss {udp['loss_ratio']:.2%}"
    # the report's UDP table shows that loss
    table = _section(ran.report, "UDP throughput")["tables"][0]
    assert _percent(_row(table, "b1 → a", "udp")["mean loss"]) < 1
    assert _percent(_row(table, "b1 → a", "udp2x")["mean loss"]) == pytest.approx(
        100 * udp["loss_ratio"], abs=0.051
    )


def test_three_simultaneous_flows_share_the_bottleneck(ran: Ran) -> None:
    flows = [ran.one("tcp3", "together", src) for src in ("b1", "b2", "b3")]
    shares = [f["throughput_bps"] / TCP_MAX for f in flows]
    for src, share in zip(("b1", "b2", "b3"), shares, strict=True):
        assert 0.25 <= share <= 0.42, f"{src}→a got {share:.1%} of the bottleneck, not about a third"
    assert sum(shares) == pytest.approx(1, abs=0.04)
    skews = {int(f["start_skew_ns"]) for f in flows}
    assert len(skews) == 1 and 0 <= skews.pop() < 50e6  # one barrier, released within 50 ms
    offsets = sorted(int(f["start_offset_ns"]) for f in flows)
    assert offsets[0] == 0 and offsets[-1] == flows[0]["start_skew_ns"]
    # each alone got the whole link
    for src in ("b1", "b2", "b3"):
        assert ran.one("tcp3", "alone", src)["throughput_bps"] / TCP_MAX > 0.95
    # the report shows Jain's index and the measured start skew
    section = _section(ran.report, "Simultaneous flows")
    note = section["tables"][0]["note"]
    x = [f["throughput_bps"] for f in flows]
    jain = sum(x) ** 2 / (3 * sum(v * v for v in x))
    assert jain > 0.95
    assert f"Jain's index {jain:.3f}" in note
    assert f"start skew {flows[0]['start_skew_ns'] / 1e6:.2f} ms" in note
    assert any("the flows compete" in item for item in section["items"])
    table = section["tables"][0]
    for src, share in zip(("b1", "b2", "b3"), shares, strict=True):
        cells = dict(
            zip(table["columns"], next(r for r in table["rows"] if r[0] == f"{src} → a"), strict=True)
        )
        assert _percent(cells["together / model max"]) == pytest.approx(100 * share, abs=0.051)


@pytest.mark.parametrize("fmt", ["csv", "parquet"])
def test_export_writes_tables_with_the_stores_row_counts(ran: Ran, fmt: str) -> None:
    out = ran.tmp / f"export-{fmt}"
    proc = vnb("export", "--db", str(ran.db), "--format", fmt, "--out", str(out), cwd=ran.tmp, timeout=120)
    assert proc.returncode == 0, proc.stderr
    cid = ran.campaign["id"]
    store = Store(ran.db)
    try:
        tables = ("measurements", "samples", "events", "builds", "objects", "raw_outputs")
        counts = {name: len(store.table_frame(name, cid)) for name in tables} | {"campaign": 1}
    finally:
        store.close()
    assert counts["samples"] > 100 and counts["raw_outputs"] > 10
    for table, expected in counts.items():
        path = out / f"{cid}-{table}.{fmt}"
        assert path.exists(), f"{path} not written; stdout: {proc.stdout}"
        frame = pd.read_csv(path) if fmt == "csv" else pq.read_table(path).to_pandas()
        assert len(frame) == expected, f"{table}: {len(frame)} rows exported, {expected} stored"
    measurements = pd.read_csv(out / f"{cid}-measurements.csv") if fmt == "csv" else None
    if measurements is not None:
        assert {"throughput_bps", "loss_ratio", "placement", "start_skew_ns"} <= set(measurements.columns)
