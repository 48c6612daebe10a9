"""One real campaign through the CLI: shaping accuracy, UDP loss at 1× and 2× the link, three flows sharing
one 100 mbit bottleneck, the written report, and export (issue 2's 'Done when' values) — with the store on
SQLite and on PostgreSQL (a real server, tests/helpers/postgres.py).

Topology: node `a` hangs off a Linux bridge by a 100 mbit link; b1, b2, b3 by 1 gbit links, so a's link
is the bottleneck of every flow to `a`, met where the bridge sends into it (as a flow meets a rate limit
inside a network). Every link has the default `shaping: network` (issue #13): the sender is never pushed
back by the link's queue, UDP over the rate is dropped at the shaper.

TCP runs cubic, the default of the studies' VMs: this machine's default, bbr, drains its window to
4 packets for 200 ms every 10 s (ProbeRTT), which alone can cost 2 % of a 5 s run.
The three fan-in flows run cubic with equal 64 KiB windows into a queue that holds all three windows
(`queue: 625000`, 50 ms at 100 mbit): with no drop each gets window / (shared RTT), a third. This
machine's default congestion control is bbr, whose flows (without the fq qdisc this kernel lacks) hold
unequal shares for many seconds; cubic alone converges over tens of seconds — longer than a test should
take; and behind the network-shaping default queue (125 KB, shorter than 3 × 64 KiB) drop-tail losses
would decide the shares instead of the windows.

The machine is a shared 2-core box. A shaped link's upper bounds — goodput never above the overhead
model, UDP loss never below what the link must drop of what was sent — cannot be helped by a stalled
CPU and are asserted on every run. Precision that only load can worsen (a descheduled sender sends
less, a descheduled receiver overflows its socket) is asserted on the best of up to three runs
(tests/helpers/timing.py: the fixture's run first, then fresh campaigns of just that measurement on
SQLite), with every run's numbers in the failure message. When none meets it and every run had less
than a quarter CPU idle (the campaign's own host-CPU telemetry), the claim could not be tested on this
machine: the test skips, saying so (`met_or_machine_bound`), provided one run still reached a floor far
below the claim; the report must then say the host was saturated. Beside disk load (`stress-ng --hdd 1
--cpu 1`, 2026-11-30) TCP reached 90.6–96.5 % of the model and UDP at the link's rate lost 2.2–3.6 %,
in runs whose host CPU was 97.6–100 % busy, while the report named the machine as the bottleneck.
"""

from __future__ import annotations

import json
import math
import os
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple

import pandas as pd
import pyarrow.parquet as pq
import pytest

from tests.helpers.integration.cli import (
    measurements_with_host_cpu,
    only_campaign,
    ran_campaign,
    run_measurements,
    vnb,
)
from tests.helpers.postgres import BACKENDS
from tests.helpers.timing import best_of, first_then, met_or_machine_bound, row_idle_cpus
from vnetbench.analysis.cpu import HOST_SATURATED
from vnetbench.kinds.overhead import tcp_efficiency, udp_efficiency
from vnetbench.store.db import Store

pytestmark = [pytest.mark.root, pytest.mark.slow(seconds=110)]

CAMPAIGN = """\
name: e2e-link
description: a 100 mbit bottleneck measured by TCP, UDP at 1x and 2x the link, and a three-flow fan-in
topology:
  nodes: [{name: a}, {name: b1}, {name: b2}, {name: b3}]
  switches: [{name: sw, kind: linux-bridge}]
  links:
    # queue: the three fan-in windows (3 x 64 KiB) fit, so the flows share by window / RTT, not by
    # drop-tail luck (the network-shaping default, 125 KB, is shorter)
    - {endpoints: [a, sw], rate: 100mbit, queue: 625000}
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
"""
LINK = "  - {{name: link, kind: pairs, pairs: [[b1, a]], measurements: [{}]}}\n"
FANIN = "  - {name: fanin, kind: fan-in, sources: [b1, b2, b3], destination: a, measurements: [tcp3]}\n"
SPEC = CAMPAIGN + LINK.format("tcp, udp, udp2x, rtt") + FANIN

RATE = 100e6
TCP_MAX = tcp_efficiency(1500).goodput_bps(RATE)  # 100 × 1448/1514 = 95.64 Mbit/s
UDP_MAX = udp_efficiency(1470, 1500).goodput_bps(RATE)
UDP_S = 5.0  # the UDP measurements' duration
QUEUE_S = 625_000 * 8 / RATE  # a's link's queue, drained after the sender stops: 50 ms


@dataclass
class Ran:
    tmp: Path
    db: str  # a SQLite file or a PostgreSQL URL
    report: Path
    campaign: dict
    frame: pd.DataFrame  # measurements with summaries, latest attempt per key, and host_busy_ratio
    stdout: str
    stderr: str

    def one(self, measurement: str, group: str = "single", src: str = "b1") -> pd.Series:
        return one(self.frame, measurement, group, src)


def one(frame: pd.DataFrame, measurement: str, group: str = "single", src: str = "b1") -> pd.Series:
    rows = frame[
        (frame["measurement"] == measurement) & (frame["group_kind"] == group) & (frame["src"] == src)
    ]
    assert len(rows) == 1, f"{measurement}/{group}/{src}: {len(rows)} rows"
    row = rows.iloc[0]
    assert row["status"] == "ok", f"{row['key']} failed: {row['reason']}"
    return row


def again(ran: Ran, patterns: str) -> Callable[[], pd.DataFrame]:
    """Fresh campaigns of just `patterns` on the same topology (SQLite: the store is not what is
    measured), each in a directory of its own: the further attempts of a `best_of`."""
    # a directory of its own per attempt, unique across tests (two tests retrying in one module
    # once shared "again-1" and its store: "expected one campaign, found 2")
    return lambda: run_measurements(
        Path(tempfile.mkdtemp(prefix="again-", dir=ran.tmp)), "again", CAMPAIGN + patterns
    )


@pytest.fixture(scope="module", params=BACKENDS)
def ran(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Ran]:
    tmp = tmp_path_factory.mktemp("e2e")
    db = None if request.param == "sqlite" else request.getfixturevalue("postgres").create_database()
    with ran_campaign(SPEC, tmp, db=db) as (db, report, proc):
        campaign = only_campaign(db)
        frame = measurements_with_host_cpu(db, campaign["id"])
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


def test_every_object_the_run_made_names_this_machine(ran: Ran) -> None:
    # `clean` on a shared store tells a machine's objects from another's by this (a campaign resumed
    # elsewhere has objects on both)
    store = Store(ran.db)
    try:
        objects = store.table_frame("objects", ran.campaign["id"]).to_dict("records")
    finally:
        store.close()
    assert {o["kind"] for o in objects} >= {"netns", "process"}
    assert {o["details"].get("machine") for o in objects} == {os.uname().nodename}


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
    # the report shows this run's ratio, in the TCP table and in index.html
    ratio = tcp["throughput_bps"] / TCP_MAX
    table = _section(ran.report, "TCP throughput")["tables"][0]
    cells = _row(table, "b1 → a", "tcp")
    assert _percent(cells["of model max"]) == pytest.approx(100 * ratio, abs=0.051)
    assert float(cells["model max (Mbit/s)"]) == pytest.approx(TCP_MAX / 1e6, rel=1e-3)
    html = (ran.report / "index.html").read_text()
    assert "of model max" in html and cells["of model max"] in html

    def of_model(frame: pd.DataFrame) -> tuple[float, float]:
        row = one(frame, "tcp")
        r = row["throughput_bps"] / TCP_MAX
        # never above the link on any run: the measured window counts no byte queued before the omit
        # ended (issue #13); 1 % is the window's own edge error
        assert r <= 1.01, f"TCP {r:.2%} of the model: above the link"
        return r, row_idle_cpus(row)

    # a descheduled sender or receiver only lowers goodput: within 2 % on the best of three runs
    frames = first_then(ran.frame, again(ran, LINK.format("tcp")))
    met, runs = best_of(lambda: of_model(frames()), lambda x: abs(x[0] - 1) <= 0.02)
    met_or_machine_bound(
        met,
        runs,
        idle=lambda x: x[1],
        floor=lambda x: x[0] >= 0.85,
        numbers=lambda rs: (
            f"TCP {[f'{r:.2%}' for r, _ in rs]} of the model; the first run per second at the receiver: "
            f"{_receiver_seconds(ran, int(tcp['id']))} Mbit/s"
        ),
    )


def _udp_run(frame: pd.DataFrame, measurement: str) -> pd.Series:
    """A UDP run, checked against what no load can change: the link passes at most its rate, over the
    5 s the sender sent plus the 50 ms its queue drains afterwards, of what the sender actually sent
    (so loss >= 1 - that / sent); 0.5 % more for the token bucket and the edges of iperf3's window."""
    row = one(frame, measurement)
    most = UDP_MAX * (1 + QUEUE_S / UDP_S + 0.005)
    assert row["loss_ratio"] >= 1 - most / row["sender_throughput_bps"], (
        f"loss {row['loss_ratio']:.2%} of {row['sender_throughput_bps'] / 1e6:.2f} Mbit/s sent: "
        "the link passed more than its rate"
    )
    assert row["throughput_bps"] <= most
    return row


def _udp_numbers(rows: list[pd.Series]) -> str:
    return "; ".join(
        f"loss {r['loss_ratio']:.2%}, sender {r['sender_throughput_bps'] / r['offered_bps']:.1%} of offered"
        for r in rows
    )


def test_udp_at_the_link_rate_loses_under_2_percent(ran: Ran) -> None:
    assert ran.one("udp")["offered_bps"] == pytest.approx(UDP_MAX)
    # loss at 1x comes only from this machine (a receiver that did not read in time overflows its
    # socket; a sender that stalled catches up in a burst the queue may not hold): best of three.
    # The < 1 % claim is benchmarks/fidelity's, on a quiet machine (met on all ten links); beside
    # two other test workers all three attempts lost 1.28 % once (make test-stress, run 5), so this
    # bound is 2 %: a shaper that drops at its own rate (bucket or queue too small) loses more.
    frames = first_then(ran.frame, again(ran, LINK.format("udp")))
    met, rows = best_of(
        lambda: _udp_run(frames(), "udp"),
        lambda r: r["loss_ratio"] < 0.02 and r["throughput_bps"] / UDP_MAX > 0.97,
    )
    met_or_machine_bound(met, rows, row_idle_cpus, lambda r: r["loss_ratio"] < 0.10, _udp_numbers)


def test_udp_at_twice_the_link_rate_loses_half(ran: Ran) -> None:
    udp = ran.one("udp2x")
    assert udp["offered_bps"] == pytest.approx(2 * UDP_MAX)
    # the report's UDP table shows this run's losses
    table = _section(ran.report, "UDP throughput")["tables"][0]
    assert _percent(_row(table, "b1 → a", "udp")["mean loss"]) == pytest.approx(
        100 * ran.one("udp")["loss_ratio"], abs=0.051
    )
    assert _percent(_row(table, "b1 → a", "udp2x")["mean loss"]) == pytest.approx(
        100 * udp["loss_ratio"], abs=0.051
    )
    # half, when the sender sent what it was offered (a sender this machine held back sends less and
    # loses less; a receiver held back loses more): best of three
    frames = first_then(ran.frame, again(ran, LINK.format("udp2x")))
    met, rows = best_of(lambda: _udp_run(frames(), "udp2x"), lambda r: abs(r["loss_ratio"] - 0.5) <= 0.03)
    met_or_machine_bound(met, rows, row_idle_cpus, lambda r: abs(r["loss_ratio"] - 0.5) <= 0.10, _udp_numbers)


class FanIn(NamedTuple):
    """One fan-in attempt: shares of the model together and alone, the barrier's start skew, and
    the least idle CPUs during any of its six measurements."""

    together: list[float]
    alone: list[float]
    skew_ns: float
    idle: float


def _fan_in(frame: pd.DataFrame) -> FanIn:
    """The three flows together, then each alone. Checked on every run: together they never get
    more than the link, nor does one alone, and one barrier started them together."""
    together = [one(frame, "tcp3", "together", src) for src in ("b1", "b2", "b3")]
    alone_rows = [one(frame, "tcp3", "alone", src) for src in ("b1", "b2", "b3")]
    alone = [r["throughput_bps"] / TCP_MAX for r in alone_rows]
    idles = [row_idle_cpus(r) for r in together + alone_rows]
    idle = math.nan if any(math.isnan(x) for x in idles) else min(idles)
    shares = [f["throughput_bps"] / TCP_MAX for f in together]
    skews = {int(f["start_skew_ns"]) for f in together}
    skew = max(skews)
    assert len(skews) == 1 and 0 <= skew < 1e9  # one barrier; the 4 s flows overlap
    # Each flow's goodput is over its own measured window (its own iperf3 intervals). Windows that
    # start apart span more than one window, through which the link passed at most its rate, so the
    # sum of the flows' means may exceed the model by (offset / window): the barrier's skew, plus
    # each client's connect and parameter exchange before its intervals begin, tens of ms on a busy
    # machine (a stress run: 101.2 %). Allowed: 60 ms (or the skew, if larger) of a 3 s window.
    window = min(float(f["window_ns"]) for f in together)
    apart = max(skew, 60e6) / window
    assert sum(shares) <= 1.01 + apart and max(alone) <= 1.01, (shares, alone, skew, window)
    return FanIn(shares, alone, float(together[0]["start_skew_ns"]), idle)


def _share_fairly(x: FanIn) -> bool:
    """Each about a third (25-42 %), the link full, Jain > 0.95, each alone > 95 %, released within
    50 ms: what a stalled flow or a late barrier (this machine) can spoil, never improve."""
    shares, alone, skew = x.together, x.alone, x.skew_ns
    jain = sum(shares) ** 2 / (3 * sum(v * v for v in shares))
    return (
        all(0.25 <= v <= 0.42 for v in shares)
        and abs(sum(shares) - 1) <= 0.04
        and jain > 0.95
        and min(alone) > 0.95
        and skew < 50e6
    )


def test_three_simultaneous_flows_share_the_bottleneck(ran: Ran) -> None:
    flows = [ran.one("tcp3", "together", src) for src in ("b1", "b2", "b3")]
    shares = [f["throughput_bps"] / TCP_MAX for f in flows]
    offsets = sorted(int(f["start_offset_ns"]) for f in flows)
    assert offsets[0] == 0 and offsets[-1] == flows[0]["start_skew_ns"]
    # the report shows this run's Jain's index, start skew and shares
    section = _section(ran.report, "Simultaneous flows")
    note = section["tables"][0]["note"]
    x = [f["throughput_bps"] for f in flows]
    jain = sum(x) ** 2 / (3 * sum(v * v for v in x))
    assert f"Jain's index {jain:.3f}" in note
    assert f"start skew {flows[0]['start_skew_ns'] / 1e6:.2f} ms" in note
    assert any("the flows compete" in item for item in section["items"])
    table = section["tables"][0]
    for src, share in zip(("b1", "b2", "b3"), shares, strict=True):
        cells = dict(
            zip(table["columns"], next(r for r in table["rows"] if r[0] == f"{src} → a"), strict=True)
        )
        assert _percent(cells["together / model max"]) == pytest.approx(100 * share, abs=0.051)
    # the sharing itself, on the best of three runs
    frames = first_then(ran.frame, again(ran, FANIN))
    met, runs = best_of(lambda: _fan_in(frames()), _share_fairly)
    met_or_machine_bound(
        met,
        runs,
        idle=lambda r: r.idle,
        floor=lambda r: min(r.alone) >= 0.85 and abs(sum(r.together) - 1) <= 0.10,
        numbers=lambda rs: "; ".join(
            f"together {[f'{v:.1%}' for v in r.together]}, alone {[f'{v:.1%}' for v in r.alone]}, "
            f"skew {r.skew_ns / 1e6:.1f} ms"
            for r in rs
        ),
    )


def test_the_report_says_when_the_host_was_saturated(ran: Ran) -> None:
    """The skips above rest on the host CPU the campaign's telemetry read: it was read during every
    measurement, and the report names the measurements that ran on a saturated host (≥ 95 % busy)
    or, with none, makes no such claim."""
    busy = ran.frame["host_busy_ratio"]
    assert busy.notna().all() and busy.between(0, 1).all(), busy.tolist()
    hot = int((busy >= HOST_SATURATED).sum())
    items = [i for s in json.loads((ran.report / "report.json").read_text())["sections"] for i in s["items"]]
    said = [i for i in items if i.startswith("Machine as bottleneck: the host's CPU was")]
    if hot:
        assert len(said) == 1 and f"during {hot} of 10 measurements with a CPU reading" in said[0], said
    else:
        assert said == [], said


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
