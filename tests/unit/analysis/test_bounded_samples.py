"""The bounded-memory paths (SQL aggregates, samples fetched in chunks, export written in chunks) give
the same results as the in-memory computation over every sample as one DataFrame.

The reference is `campaign_data.FrameSamples` over `Store.samples_frame` (the pandas computation the
analysis and report ran before: drop_transient, then groupby mean/sum/count) and, for export, the
store's `table_frame`. Stores are the synthetic quickstart campaign (tests/helpers/synthetic.py) on
SQLite and on PostgreSQL, with chunks and id lists made tiny so every path crosses many boundaries.
Floating-point sums taken in a different order may differ in the last bits: rtol 1e-12.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow.parquet as pq
import pytest

from tests.helpers.synthetic import quickstart_text, write_campaign
from vnetbench.analysis import campaign_data as cd
from vnetbench.analysis.campaign_analysis import analyze_campaign
from vnetbench.report import html
from vnetbench.report.prepared import prepare
from vnetbench.report.sections import ReportContext
from vnetbench.store import samples as bounded
from vnetbench.store.db import Store
from vnetbench.store.export import export_campaign
from vnetbench.store.records import MeasurementRecord, Sample

SAMPLES = 4000
# omit 1 s drops each throughput flow's first interval and each RTT flow's first 20 replies;
# the IQR policy judges the RTT replies and the flows' throughput
SPEC = quickstart_text() + "analysis: {omit: 1s, outliers: iqr}\n"


@pytest.fixture
def store(store_url: str, monkeypatch: pytest.MonkeyPatch) -> Iterator[Store]:
    monkeypatch.setattr(bounded, "CHUNK_ROWS", 97)
    monkeypatch.setattr(bounded, "IDS_PER_QUERY", 3)
    st = Store(store_url)
    write_campaign(st, SAMPLES, "syn", SPEC)
    yield st
    st.close()


def _assert_close(got: Any, want: Any, where: str = "") -> None:
    """Equal JSON-like structures, floats within rtol 1e-9 (sums taken in another order)."""
    if isinstance(want, dict):
        assert isinstance(got, dict) and got.keys() == want.keys(), where
        for key in want:
            _assert_close(got[key], want[key], f"{where}.{key}")
    elif isinstance(want, list):
        assert isinstance(got, list) and len(got) == len(want), where
        for i, (g, w) in enumerate(zip(got, want, strict=True)):
            _assert_close(g, w, f"{where}[{i}]")
    elif isinstance(want, float) and not isinstance(got, str):
        assert got == pytest.approx(want, rel=1e-9, nan_ok=True), where
    else:
        assert got == want, where


def _sorted(frame: pd.DataFrame, keys: list[str]) -> pd.DataFrame:
    return frame.sort_values(keys).reset_index(drop=True)


def test_sql_aggregates_equal_pandas(store: Store) -> None:
    ids = [int(i) for i in store.measurements_frame("syn")["id"]]
    metrics = list(cd.SAMPLE_METRICS)
    memory = cd.FrameSamples(store.samples_frame("syn"))
    for omit_ns in (0, 10**9, 5 * 10**9):
        got = _sorted(store.sample_aggregates("syn", metrics, omit_ns, ids), ["measurement_id", "metric"])
        want = _sorted(memory.stats(ids, metrics, omit_ns), ["measurement_id", "metric"])
        assert len(got) == len(want) > 0
        assert got["measurement_id"].tolist() == want["measurement_id"].tolist()
        assert got["metric"].tolist() == want["metric"].tolist()
        assert got["count"].tolist() == want["count"].tolist()
        assert got["before_omit"].tolist() == want["before_omit"].tolist()
        np.testing.assert_allclose(got["sum"], want["sum"], rtol=1e-12)
        np.testing.assert_allclose(got["mean"], want["mean"], rtol=1e-12)
    some = ids[::5]
    got = store.sample_aggregates("syn", metrics, 0, some)
    assert set(got["measurement_id"]) == set(some)


def test_values_fetched_in_chunks_equal_the_frame(store: Store) -> None:
    frame = store.samples_frame("syn")
    rtt_ids = sorted(frame[frame["metric"] == "rtt_ns"]["measurement_id"].unique().tolist())
    assert len(rtt_ids) > 3  # more than one IN list of IDS_PER_QUERY ids
    got = store.sample_values("syn", "rtt_ns", rtt_ids, 10**9)
    want = _sorted(
        frame[(frame["metric"] == "rtt_ns") & (frame["t_ns"] >= 10**9)], ["measurement_id", "t_ns"]
    )
    assert len(got) == len(want) > 2 * bounded.CHUNK_ROWS
    assert got["measurement_id"].tolist() == want["measurement_id"].tolist()
    assert got["t_ns"].tolist() == want["t_ns"].tolist()
    assert got["value"].tolist() == want["value"].tolist()  # stored doubles, read back bit for bit
    assert got["stream"].isna().all() and set(got["metric"]) == {"rtt_ns"}


def test_analyze_from_the_store_equals_analyze_in_memory(store: Store) -> None:
    stored = cd.load_campaign_frames(store, "syn")
    assert isinstance(stored.samples, cd.StoredSamples)
    memory = cd.CampaignFrames(
        stored.campaign,
        stored.measurements,
        store.samples_frame("syn", list(cd.SAMPLE_METRICS)),
        stored.events,
        stored.builds,
    )
    got, want = analyze_campaign(stored).json, analyze_campaign(memory).json
    assert got["transient"]["samples_dropped"] > 0 and got["transient"]["flows_recomputed"] == 26
    _assert_close(got, want)


def test_report_data_from_the_store_equals_in_memory(store: Store) -> None:
    row = store.campaign("syn")
    frame, builds = store.measurements_frame("syn"), store.builds_frame("syn")
    got = prepare(row, frame, cd.StoredSamples(store, "syn"), builds)
    want = prepare(row, frame, store.samples_frame("syn", list(cd.SAMPLE_METRICS)), builds)
    pd.testing.assert_frame_equal(got.frame, want.frame, check_exact=False, rtol=1e-12)
    keys = ["measurement_id", "metric", "t_ns"]
    columns = ["measurement_id", "t_ns", "metric", "value"]
    got_samples = _sorted(got.samples[columns].astype({"metric": str}), keys)
    want_samples = _sorted(want.samples[columns].astype({"metric": str}), keys)
    pd.testing.assert_frame_equal(got_samples, want_samples, check_dtype=False)
    assert got.notes == want.notes
    assert any("outlier" in n.lower() for n in got.notes["rtt"])  # the policy ran on the replies


def test_report_from_the_store_equals_report_in_memory(
    store: Store, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    html.write_report(store, "syn", tmp_path / "stored")
    every_sample = property(lambda ctx: cd.FrameSamples(ctx.store.samples_frame(ctx.campaign_id)))
    monkeypatch.setattr(ReportContext, "samples", every_sample)
    html.write_report(store, "syn", tmp_path / "memory")
    got = json.loads((tmp_path / "stored" / "report.json").read_text())
    want = json.loads((tmp_path / "memory" / "report.json").read_text())
    assert got == want
    titles = [s["title"] for s in got["sections"]]
    assert "Round-trip time" in titles and "TCP throughput" in titles


@pytest.mark.parametrize("fmt", ["csv", "parquet"])
def test_export_in_chunks_holds_every_row_and_value(store: Store, tmp_path: Path, fmt: str) -> None:
    paths = export_campaign(store, "syn", tmp_path, fmt)
    read = {
        p.stem.removeprefix("syn-"): (pd.read_csv(p) if fmt == "csv" else pq.read_table(p).to_pandas())
        for p in paths
        if p.suffix != ".md"  # the README beside the tables (tests/unit/analysis/test_export_values.py)
    }
    samples = _sorted(read["samples"], ["measurement_id", "metric", "t_ns"])
    want = _sorted(store.table_frame("samples", "syn"), ["measurement_id", "metric", "t_ns"])
    assert len(samples) == len(want) > 0.99 * SAMPLES  # a UDP flow's n//3 intervals of 3 metrics
    assert samples["t_ns"].tolist() == want["t_ns"].tolist()
    assert samples["metric"].tolist() == want["metric"].tolist()
    np.testing.assert_allclose(samples["value"], want["value"], rtol=1e-15)
    assert samples["seq"].fillna(-1).tolist() == want["seq"].fillna(-1).tolist()
    assert len(read["measurements"]) == 26 and len(read["campaign"]) == 1
    assert json.loads(read["measurements"]["factors"][0]) == {}
    assert len(read["builds"]) == 1 and "namespaces" in json.loads(read["builds"]["layout"][0])


def test_cached_stats_follow_a_new_measurement(store: Store) -> None:
    before = store.sample_aggregates("syn", ["rtt_ns"], 0)
    assert store.sample_aggregates("syn", ["rtt_ns"], 0).equals(before)  # the cache's answer
    rec = MeasurementRecord(
        campaign_id="syn", key="extra", step_key="extra", seq=99, repetition=9, pattern="connections",
        pattern_kind="pairs", group_kind="single", group_size=1, measurement="rtt", kind="rtt",
        src="vm1", dst="vm2", placement="same-host",
        samples=[Sample(i * 10**9, "rtt_ns", 1e5 + i) for i in range(5)],
    )  # fmt: skip
    (mid,) = store.save_measurements([rec])
    after = store.sample_aggregates("syn", ["rtt_ns"], 0)
    assert len(after) == len(before) + 1
    row = after[after["measurement_id"] == mid].iloc[0]
    assert row["count"] == 5 and row["sum"] == 5 * 1e5 + 10
