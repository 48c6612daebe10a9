"""The dashboard's reads (store/live.py) and what it makes of them (dashboard/views.py), on a real SQLite
store written through the store's API with known values: the expected numbers are the ones written, and
the colours follow from the thresholds' definitions (worked out by hand in each assertion's comment)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers.dashboard_stores import EXPECTED_MAX_BPS, dashboard_store, record
from vnetbench.dashboard.views import compared_value, grid_json, level, read_campaign_spec, series_json
from vnetbench.spec.thresholds import Threshold
from vnetbench.store import live
from vnetbench.store.db import Store
from vnetbench.store.records import Sample

TCP = {("a", "b"): 90e6, ("a", "c"): 60e6, ("b", "c"): 30e6}  # repetition 1; repetition 2 is 1 % higher


@pytest.fixture
def store(tmp_path: Path):
    store = dashboard_store(tmp_path / "d.db")
    seq = 0
    for rep in (1, 2):
        for (src, dst), bps in TCP.items():
            samples = [
                Sample(i * 10**9, "throughput_bps", bps * (1 + 0.01 * rep) + d)
                for i, d in enumerate((-1e6, 0, 1e6))
            ]
            store.save_measurements(
                [record("d1", seq, rep, "tcp", src, dst, {"throughput_bps": bps * (1 + 0.01 * rep)}, samples)]
            )
            seq += 1
            rtt = {"rtt_mean_ns": 100_000.0 * rep, "loss_ratio": 0.2 if dst == "c" else 0.0}
            store.save_measurements(
                [record("d1", seq, rep, "rtt", src, dst, rtt, [Sample(0, "rtt_ns", 1e5 * rep)])]
            )
            seq += 1
    # a failed attempt (no summary) after the last ok one must not become the cell's value
    store.save_measurements([record("d1", seq, 3, "tcp", "a", "b", {}, status="failed")])
    yield store
    store.close()


def test_progress_counts_steps_keys_and_failures(store) -> None:
    (progress,) = live.campaign_progress(store.engine).values()
    assert progress.steps_done == 13  # 12 ok steps + the failed one
    assert progress.measurements_ok == 12
    assert progress.attempts_failed == 1
    assert progress.latest_repetition == 3  # the failed attempt belongs to repetition 3
    spec = read_campaign_spec(live.campaign_spec_row(store.engine, "d1"))
    assert spec.total_steps == 18  # 3 pairs x 2 measurements x 3 repetitions in the spec


def test_grid_cells_hold_the_newest_ok_value_and_the_campaign_range(store) -> None:
    cells = {
        (c.measurement, c.src, c.dst, c.metric): c
        for c in live.grid_cells(store.engine, "d1", ["throughput_bps", "loss_ratio", "rtt_mean_ns"])
    }
    assert len(cells) == 9  # 3 pairs x (tcp throughput + rtt loss + rtt mean)
    ab = cells[("tcp", "a", "b", "throughput_bps")]
    assert ab.latest == pytest.approx(90e6 * 1.02) and ab.latest_repetition == 2
    assert (ab.count, ab.lowest, ab.highest) == (2, pytest.approx(90e6 * 1.01), pytest.approx(90e6 * 1.02))
    assert ab.expected_max_bps == EXPECTED_MAX_BPS
    assert cells[("rtt", "b", "c", "rtt_mean_ns")].lowest == 100_000.0


def test_grid_colours_follow_the_thresholds(store) -> None:
    spec = read_campaign_spec(live.campaign_spec_row(store.engine, "d1"))
    grids = {
        (g["measurement"], g["metric"]): g
        for g in grid_json(live.grid_cells(store.engine, "d1", spec.metrics), spec)
    }
    assert list(grids) == [
        ("tcp", "throughput_bps"),
        ("rtt", "loss_ratio"),
        ("rtt", "rtt_mean_ns"),
    ]  # spec order
    tcp = {(c["src"], c["dst"]): c for c in grids[("tcp", "throughput_bps")]["cells"]}
    # default: share of the expected max 94.9 Mbit/s; warning <= 0.9, critical <= 0.5
    assert tcp[("a", "b")]["compared"] == pytest.approx(91.8e6 / 94.9e6)  # 0.967: ok
    assert [tcp[p]["level"] for p in (("a", "b"), ("a", "c"), ("b", "c"))] == [
        "ok",
        "warning",
        "critical",
    ]  # 0.97, 0.65, 0.33
    loss = {(c["src"], c["dst"]): c["level"] for c in grids[("rtt", "loss_ratio")]["cells"]}
    assert loss == {
        ("a", "b"): "ok",
        ("a", "c"): "warning",
        ("b", "c"): "warning",
    }  # the spec's 10 % / 30 %: 0.2 warns
    rtt = grids[("rtt", "rtt_mean_ns")]["cells"]
    # default: ratio to the pair's best (lowest) 100 µs; repetition 2 has 200 µs = 2.0: warning (>= 1.5, < 3)
    assert {(c["compared"], c["level"]) for c in rtt} == {(2.0, "warning")}
    assert grids[("tcp", "throughput_bps")]["sources"] == ["a", "b"]
    assert grids[("tcp", "throughput_bps")]["destinations"] == ["b", "c"]


def test_a_pairs_series_has_every_attempt_with_its_sample_spread(store) -> None:
    points = live.pair_series(store.engine, "d1", "tcp", "a", "b", "throughput_bps", "throughput_bps")
    assert [(p.repetition, p.status) for p in points] == [(1, "ok"), (2, "ok"), (3, "failed")]
    first = points[0]
    assert first.value == pytest.approx(90.9e6)
    assert (first.sample_count, first.sample_min, first.sample_mean, first.sample_max) == (
        3,
        pytest.approx(89.9e6),
        pytest.approx(90.9e6),
        pytest.approx(91.9e6),
    )
    assert points[2].value is None and points[2].sample_count == 0
    payload = series_json(points, None, "throughput_bps", "throughput_bps")
    assert payload["change_points"] is None  # the hook: no change-point finder yet
    assert [p["repetition"] for p in payload["points"]] == [1, 2, 3]
    assert live.pair_series(store.engine, "d1", "tcp", "a", "b", "throughput_bps", "x", contended=True) == []


@pytest.mark.parametrize(
    ("value", "threshold", "expected_max", "lowest", "highest", "compared", "colour"),
    [
        (0.005, Threshold(warning=0.001, critical=0.01), None, None, None, 0.005, "warning"),
        (
            0.01,
            Threshold(warning=0.001, critical=0.01),
            None,
            None,
            None,
            0.01,
            "critical",
        ),  # at the level: critical
        (0.0, Threshold(warning=0.001, critical=0.01), None, None, None, 0.0, "ok"),
        (47e6, Threshold(warning=0.9, critical=0.5, of="expected-max"), 94e6, 40e6, 50e6, 0.5, "critical"),
        # no expected maximum (unshaped link): the pair's best (highest) stands in
        (45e6, Threshold(warning=0.9, critical=0.5, of="expected-max"), None, 40e6, 50e6, 0.9, "warning"),
        (3e5, Threshold(warning=1.5, critical=3.0, of="baseline"), None, 1e5, 3e5, 3.0, "critical"),
        (None, Threshold(warning=1.5, critical=3.0, of="baseline"), None, None, None, None, "none"),
        (float("nan"), Threshold(warning=0.9, critical=0.5, of="expected-max"), 94e6, 1.0, 2.0, None, "none"),
    ],
)
def test_compared_value_and_level(value, threshold, expected_max, lowest, highest, compared, colour) -> None:
    got, _ = compared_value(value, threshold, expected_max, lowest, highest)
    assert got == (None if compared is None else pytest.approx(compared))
    assert level(got, threshold) == colour


def test_a_store_made_before_the_dashboard_gets_its_indexes_and_sample_stats(store, tmp_path: Path) -> None:
    from sqlalchemy import inspect

    path = Path(store.location)
    written = live.pair_series(store.engine, "d1", "tcp", "a", "c", "throughput_bps", "throughput_bps")
    with store.engine.begin() as conn:  # as a store written before the dashboard existed
        conn.exec_driver_sql("DROP INDEX ix_measurements_pair")
        conn.exec_driver_sql("DROP INDEX ix_measurements_grid_pattern")
        conn.exec_driver_sql("DROP TABLE sample_stats")
    store.close()
    reopened = Store(path)
    names = {ix["name"] for ix in inspect(reopened.engine).get_indexes("measurements")}
    rebuilt = live.pair_series(reopened.engine, "d1", "tcp", "a", "c", "throughput_bps", "throughput_bps")
    reopened.close()
    assert {"ix_measurements_pair", "ix_measurements_grid_pattern"} <= names
    # the backfilled aggregates (SQL over the samples) equal those written with the samples (Python)
    assert [(p.sample_count, p.sample_min, p.sample_max) for p in rebuilt] == [
        (p.sample_count, p.sample_min, p.sample_max) for p in written
    ]
    assert [p.sample_mean for p in rebuilt] == [pytest.approx(p.sample_mean) for p in written]
    assert written[0].sample_count == 3


def test_an_attempt_that_never_started_is_last_on_either_backend(store_url: str) -> None:
    """A failed attempt whose server never started has no start time. SQLite sorts NULL first and
    PostgreSQL last in an ascending ORDER BY: the attempts table read differently by backend. Both
    now put it after every timed attempt (written: rep 1 ok, the untimed failure, rep 2 ok)."""
    import dataclasses

    store = dashboard_store(store_url)
    try:
        store.save_measurements([record("d1", 0, 1, "tcp", "a", "b", {"throughput_bps": 90e6})])
        never = record("d1", 1, 2, "tcp", "a", "b", {}, status="failed")
        store.save_measurements(
            [dataclasses.replace(never, started_utc_ns=None, reason="server did not start")]
        )
        ok = record("d1", 2, 2, "tcp", "a", "b", {"throughput_bps": 91e6})
        store.save_measurements([dataclasses.replace(ok, attempt=2)])
        points = live.pair_series(store.engine, "d1", "tcp", "a", "b", "throughput_bps", "throughput_bps")
        assert [(p.repetition, p.attempt, p.status) for p in points] == [
            (1, 1, "ok"),
            (2, 2, "ok"),
            (2, 1, "failed"),
        ]
        assert points[-1].started_utc_ns is None
    finally:
        store.close()


def _stream_store(path: Path) -> Store:
    """A 2-stream TCP attempt as iperf3's driver stores it: per interval the total (stream None) and
    each stream's share; totals 95, 96, 94 Mbit/s."""
    store = dashboard_store(path)
    samples = []
    for i, total in enumerate((95e6, 96e6, 94e6)):
        samples.append(Sample(i * 10**9, "throughput_bps", total))
        samples += [Sample(i * 10**9, "throughput_bps", total / 2, stream=k) for k in (0, 1)]
    store.save_measurements([record("d1", 0, 1, "tcp", "a", "b", {"throughput_bps": 95e6}, samples)])
    return store


def test_the_sample_spread_is_of_the_totals_not_the_parallel_streams(tmp_path: Path) -> None:
    """The band and count were over every sample, per-stream ones too: a 4-stream 95 Mbit/s flow showed
    15 samples from 15.7 to 95.8 Mbit/s, mean 38.1 (monitor audit). Expected: the three totals."""
    from sqlalchemy import delete, insert

    from vnetbench.store import schema as t

    store = _stream_store(tmp_path / "s.db")
    (point,) = live.pair_series(store.engine, "d1", "tcp", "a", "b", "throughput_bps", "throughput_bps")
    assert (point.sample_count, point.sample_min, point.sample_max) == (3, 94e6, 96e6)
    assert point.sample_mean == pytest.approx(95e6)
    # a store whose sample_stats were written under the old rule is rebuilt once when opened
    with store.engine.begin() as conn:
        conn.execute(delete(t.sample_stats))
        conn.execute(delete(t.meta).where(t.meta.c.key == live.SAMPLE_STATS_KEY))
        old = {"measurement_id": point.measurement_id, "metric": "throughput_bps", "value_count": 9}
        conn.execute(insert(t.sample_stats).values(**old, value_min=47e6, value_mean=63.33e6, value_max=96e6))
    store.close()
    reopened = Store(tmp_path / "s.db")
    (point,) = live.pair_series(reopened.engine, "d1", "tcp", "a", "b", "throughput_bps", "throughput_bps")
    reopened.close()
    assert (point.sample_count, point.sample_min, point.sample_max) == (3, 94e6, 96e6)
    assert point.sample_mean == pytest.approx(95e6)
