"""measurements_frame: summary metrics become columns without clobbering the measurement's own columns."""

from __future__ import annotations

import csv
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from tests.helpers.stores import campaign_store, pair_record
from vnetbench.store.export import export_campaign


def test_a_summary_metric_named_like_a_column_is_kept_as_the_tools_view(store_url: str) -> None:
    store = campaign_store(store_url)
    rec = pair_record(
        "c1",
        "r001/udp/a>b",
        "udp",
        "a",
        "b",
        offered_bps=194444444.44,  # what vnetbench planned to offer
        summary={"offered_bps": 194444444.0, "loss_ratio": 0.5, "throughput_bps": 97.2e6},
    )
    store.save_measurements([rec])
    frame = store.measurements_frame("c1")
    assert frame.loc[0, "offered_bps"] == 194444444.44
    assert frame.loc[0, "tool_offered_bps"] == 194444444.0
    assert frame.loc[0, "loss_ratio"] == 0.5
    assert not [c for c in frame.columns if c.endswith(("_x", "_y"))]
    store.close()


@pytest.mark.parametrize("with_values", [True, False], ids=["beside-values", "every-value-null"])
def test_a_summary_metric_null_in_every_measurement_is_an_empty_column(
    store_url: str, tmp_path: Path, with_values: bool
) -> None:
    """iperf3 stores sender_cpu_ratio = NULL when it reports no CPU (drivers/iperf3.py). Was: the
    pivot dropped a column whose every value is NULL, so the metric vanished from the frame and from
    both exports; it is an empty float column (in a campaign whose every summary value is NULL too)."""
    store = campaign_store(store_url)
    recs = []
    for i in range(2):
        summary = {"sender_cpu_ratio": None} | ({"throughput_bps": 1e9 + i} if with_values else {})
        recs.append(pair_record("c1", f"r00{i}/tcp/a>b", "tcp", "a", "b", seq=i, summary=summary))
    store.save_measurements(recs)
    frame = store.measurements_frame("c1")
    assert frame["sender_cpu_ratio"].dtype == float and frame["sender_cpu_ratio"].isna().all()
    if with_values:
        assert list(frame["throughput_bps"]) == [1e9, 1e9 + 1]
    export_campaign(store, "c1", tmp_path / "csv", "csv")
    export_campaign(store, "c1", tmp_path / "parquet", "parquet")
    store.close()
    with open(tmp_path / "csv" / "c1-measurements.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    assert [r["sender_cpu_ratio"] for r in rows] == ["", ""]
    table = pq.read_table(tmp_path / "parquet" / "c1-measurements.parquet")
    assert table.schema.field("sender_cpu_ratio").type == pa.float64()
    assert table.column("sender_cpu_ratio").to_pylist() == [None, None]
