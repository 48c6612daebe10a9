"""`vnetbench export` says which values are which: the measurements' whole-run summaries beside the
values the report, `analyze` and `compare` use (after the spec's `analysis.omit`), and a README that
says so and warns that iperf3's single-stream samples are stored twice (the sum and stream 0)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd
from typer.testing import CliRunner

from tests.helpers.stores import campaign_store
from vnetbench.analysis.export_values import analysis_values
from vnetbench.cli import app
from vnetbench.store.db import Store
from vnetbench.store.export import export_campaign, readme
from vnetbench.store.records import MeasurementRecord, Sample

NS = 10**9
SPEC = """
name: plain
topology:
  nodes: [{name: a}, {name: b}]
  links: [{endpoints: [a, b], rate: 10mbit}]
measurements: [{name: tcp, kind: tcp, duration: 3s}]
patterns: [{name: p, kind: pairs, pairs: [[a, b]], measurements: [tcp]}]
analysis: {omit: 1s}
"""


def _tcp(
    key: str, seq: int, attempt: int, status: str, intervals: list[float], whole: float
) -> MeasurementRecord:
    """A single-stream iperf3 flow: each interval sample as the sum (stream None) and as stream 0."""
    samples = [
        Sample(i * NS, "throughput_bps", v, stream=s) for i, v in enumerate(intervals) for s in (None, 0)
    ]
    base: dict[str, Any] = {
        "campaign_id": "c1", "key": key, "step_key": key, "seq": seq, "attempt": attempt, "repetition": 1,
        "pattern": "p", "pattern_kind": "pairs", "group_kind": "single", "group_size": 1,
        "measurement": "tcp", "kind": "tcp", "src": "a", "dst": "b", "placement": "same-host",
        "status": status, "summary": {"throughput_bps": whole}, "samples": samples,
    }  # fmt: skip
    return MeasurementRecord(**base)


def _store(tmp_path: Path, spec: str = SPEC) -> Store:
    store = campaign_store(tmp_path / "s.db", status="finished", spec_text=spec)
    store.save_measurements(
        [
            # by hand: whole run (iperf3's summary) 8.0 Mbit/s; after dropping t < 1 s the intervals
            # 9.0 and 9.6 Mbit/s remain, mean 9.3 Mbit/s: the report's value
            _tcp("k1", 0, 1, "ok", [5.4e6, 9.0e6, 9.6e6], 8.0e6),
            _tcp("k2", 1, 1, "failed", [1.0e6, 1.0e6, 1.0e6], 1.0e6),  # superseded by attempt 2
            # by hand: mean(7.0, 7.2) = 7.1 Mbit/s after omit; whole run 6.5
            _tcp("k2", 1, 2, "ok", [4.0e6, 7.0e6, 7.2e6], 6.5e6),
        ]
    )
    return store


def test_the_export_has_the_reports_values_beside_the_whole_run_ones(tmp_path: Path) -> None:
    store = _store(tmp_path)
    values = analysis_values(store, store.campaign("c1"))
    assert values.omit_ns == NS and not values.unavailable
    export_campaign(store, "c1", tmp_path / "out", "csv", values)
    m = pd.read_csv(tmp_path / "out" / "c1-measurements.csv").sort_values(["key", "attempt"])
    assert m["throughput_bps"].tolist() == [8.0e6, 1.0e6, 6.5e6]  # the store's, unchanged
    got = m["analysis_throughput_bps"].tolist()
    assert abs(got[0] - 9.3e6) < 1e-3 and pd.isna(got[1]) and abs(got[2] - 7.1e6) < 1e-3
    readme = (tmp_path / "out" / "c1-README.md").read_text()
    assert "**whole-run values**" in readme and "first drop each flow's first 1 s" in readme
    assert "| `throughput_bps` | `analysis_throughput_bps` |" in readme


def test_the_readme_warns_that_single_stream_samples_are_there_twice(tmp_path: Path) -> None:
    store = _store(tmp_path)
    export_campaign(store, "c1", tmp_path / "out", "csv", analysis_values(store, store.campaign("c1")))
    s = pd.read_csv(tmp_path / "out" / "c1-samples.csv")
    # the store's rows as they are: 3 flows × 3 intervals × (sum + stream 0) = 18 rows; the sum rows
    # alone (stream empty) are the per-flow totals: 9
    assert len(s) == 18 and s["stream"].isna().sum() == 9
    readme = (tmp_path / "out" / "c1-README.md").read_text()
    assert "twice for a single-stream flow" in readme and "Filter `stream` empty" in readme


def test_without_omit_the_readme_says_the_values_are_the_same(tmp_path: Path) -> None:
    store = _store(tmp_path, SPEC.replace("analysis: {omit: 1s}\n", ""))
    values = analysis_values(store, store.campaign("c1"))
    export_campaign(store, "c1", tmp_path / "out", "csv", values)
    m = pd.read_csv(tmp_path / "out" / "c1-measurements.csv").sort_values(["key", "attempt"])
    assert values.omit_ns == 0 and values.frame.empty and not values.unavailable  # no samples read
    assert not [c for c in m.columns if c.startswith("analysis_")]
    assert m["throughput_bps"].tolist()[::2] == [8.0e6, 6.5e6]  # the summaries the report uses
    readme = (tmp_path / "out" / "c1-README.md").read_text()
    assert "`analysis.omit` is 0" in readme and "no `analysis_*` columns are written" in readme


def test_a_stored_spec_this_version_refuses_still_exports_and_says_why(tmp_path: Path) -> None:
    store = _store(tmp_path, SPEC.replace("analysis: {omit: 1s}", "analysis: {omit: 1s, renamed_field: 1}"))
    values = analysis_values(store, store.campaign("c1"))
    assert values.frame.empty and "stored spec is not valid" in values.unavailable
    export_campaign(store, "c1", tmp_path / "out", "csv", values)
    assert "analysis_throughput_bps" not in pd.read_csv(tmp_path / "out" / "c1-measurements.csv")
    assert "they are not in this export: its stored spec" in (tmp_path / "out" / "c1-README.md").read_text()


def test_the_cli_writes_the_readme_and_the_columns(tmp_path: Path) -> None:
    _store(tmp_path).close()
    out = tmp_path / "cli"
    result = CliRunner().invoke(app, ["export", "c1", "--db", str(tmp_path / "s.db"), "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert (out / "c1-README.md").exists()
    assert "analysis_throughput_bps" in pd.read_csv(out / "c1-measurements.csv")


def test_the_readme_says_tcp_throughput_is_the_receivers_window_not_iperf3s_summary(tmp_path: Path) -> None:
    # said every whole-run value was "the tool's own summary over the entire run, warm-up included":
    # TCP's throughput_bps is the receiver's bytes over its full-length intervals (drivers/iperf3.py
    # _tcp_window); iperf3's own summary is iperf3_throughput_bps
    store = _store(tmp_path)
    readme_text = readme("c1", "csv", analysis_values(store, store.campaign("c1")))
    assert "the tool's own summary over the entire run" not in readme_text
    assert (
        "**whole-run values**: over the entire run, the spec's `analysis.omit` not applied. TCP's\n"
        "`throughput_bps` is the receiver's bytes over its full-length intervals (docs/drivers.md), not\n"
        "iperf3's own summary, which is `iperf3_throughput_bps`.\n"
    ) in readme_text


def test_a_flow_with_no_sample_after_omit_keeps_its_whole_run_value_and_the_readme_says_so(
    tmp_path: Path,
) -> None:
    # the audit's real campaign with analysis.omit 1s: each RTT flow's 10 pings at 50 ms all came
    # before 1 s, and its analysis_rtt_mean_ns was the whole-run mean (110100 ns = rtt_mean_ns) while
    # the README said every analysis_* value was recomputed from the samples after the omit
    store = _store(tmp_path)
    base: dict[str, Any] = {
        "campaign_id": "c1", "key": "k3", "step_key": "k3", "seq": 2, "attempt": 1, "repetition": 1,
        "pattern": "p", "pattern_kind": "pairs", "group_kind": "single", "group_size": 1,
        "measurement": "rtt", "kind": "rtt", "src": "a", "dst": "b", "placement": "same-host", "status": "ok",
        "summary": {"rtt_mean_ns": 110_100.0},
        "samples": [Sample(int(i * 50e6), "rtt_ns", 110_100.0, seq=i) for i in range(10)],
    }  # fmt: skip
    store.save_measurements([MeasurementRecord(**base)])
    export_campaign(store, "c1", tmp_path / "out", "csv", analysis_values(store, store.campaign("c1")))
    m = pd.read_csv(tmp_path / "out" / "c1-measurements.csv")
    assert m.loc[m["key"] == "k3", "analysis_rtt_mean_ns"].tolist() == [110_100.0]  # whole run, by hand
    readme = " ".join((tmp_path / "out" / "c1-README.md").read_text().split())
    assert (
        "A measurement with no sample of the metric at or after the omit (a ping run shorter than 1 s) "
        "keeps its whole-run value there: nothing is left to recompute it from."
    ) in readme


def test_the_readme_names_the_tool_column_of_a_summary_named_like_a_measurement_column(
    tmp_path: Path,
) -> None:
    # the audit's real UDP export had `offered_bps` (the plan's 97222222.2) and `tool_offered_bps`
    # (iperf3's own, docs/drivers.md's `offered_bps` summary), and nothing said which was which
    store = _store(tmp_path)
    store.save_measurements(
        [
            MeasurementRecord(
                campaign_id="c1", key="k4", step_key="k4", seq=3, attempt=1, repetition=1, pattern="p",
                pattern_kind="pairs", group_kind="single", group_size=1, measurement="udp", kind="udp",
                src="a", dst="b", placement="same-host", status="ok", offered_bps=97_222_222.2,
                summary={"offered_bps": 97_222_222.0, "loss_ratio": 0.0},
            )
        ]
    )  # fmt: skip
    export_campaign(store, "c1", tmp_path / "out", "csv", analysis_values(store, store.campaign("c1")))
    m = pd.read_csv(tmp_path / "out" / "c1-measurements.csv").set_index("key")
    assert (m.loc["k4", "offered_bps"], m.loc["k4", "tool_offered_bps"]) == (97_222_222.2, 97_222_222.0)
    readme = " ".join((tmp_path / "out" / "c1-README.md").read_text().split())
    assert "iperf3's `offered_bps` (docs/drivers.md) is `tool_offered_bps`, while `offered_bps` is" in readme
