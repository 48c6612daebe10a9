"""`vnetbench compare` of UDP jitter in campaigns with `analysis.omit`: each run's jitter is the mean of
its `jitter_ns` samples after the omitted warm-up, as throughput and loss are recomputed after it. It
compared the stored whole-run mean, warm-up interval included: a real campaign with `analysis.omit: 1s`
showed 1.01 ms where its samples after 1 s give 0.325 ms, and the warm-up's spread hid a real change
(p 1, "same"). Expected numbers: by hand and scipy's Welch test on the samples after 1 s. Real SQLite
store, no mocks."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
from scipy import stats
from typer.testing import CliRunner

from tests.helpers.specs import two_node_spec
from tests.helpers.stores import add_campaign
from vnetbench.cli import app
from vnetbench.plan import make_plan
from vnetbench.spec.loader import parse_spec
from vnetbench.store.db import Store
from vnetbench.store.records import MeasurementRecord, Sample

SPEC = two_node_spec(
    "warm", {"udp": "kind: udp, rate: 10mbit, duration: 3s"},
    "schedule: {repetitions: 3, prime: false}\nanalysis: {omit: 1s}\n",
)  # fmt: skip
# per run: the jitter_ns samples at t = 0, 1 s, 2 s; the first is the warm-up analysis.omit drops
RUNS_A = [(5e6, 20e3, 22e3), (5e6, 21e3, 23e3), (5e6, 19e3, 21e3)]  # after 1 s: 21, 22, 20 µs
RUNS_B = [(9e6, 80e3, 82e3), (9e6, 81e3, 83e3), (9e6, 79e3, 81e3)]  # after 1 s: 81, 82, 80 µs


def _campaign(store: Store, cid: str, runs: list[tuple[float, float, float]], spec: str = SPEC) -> None:
    """A finished campaign of `spec`: one UDP run per repetition, its jitter samples and their mean."""
    add_campaign(store, cid, "warm", spec)
    plan = make_plan(parse_spec(spec, "test", stored=True), cid, 1)
    records = []
    for step, jitter in zip(plan.steps, runs, strict=True):
        rec = MeasurementRecord(
            campaign_id=cid, **step.record_fields(step.flows[0], plan.layouts[0]), kind="udp", status="ok"
        )
        rec.summary = {"jitter_mean_ns": float(np.mean(jitter))}  # whole run, as the iperf3 driver stores it
        rec.samples = [Sample(int(i * 1e9), "jitter_ns", v) for i, v in enumerate(jitter)]
        records.append(rec)
    store.save_measurements(records)


def test_compare_takes_jitter_after_analysis_omit(tmp_path: Path) -> None:
    store = Store(str(tmp_path / "s.db"))
    _campaign(store, "aaaa0001", RUNS_A)
    _campaign(store, "bbbb0002", RUNS_B)
    res = CliRunner().invoke(
        app, ["compare", "aaaa0001", "bbbb0002", "--db", str(tmp_path / "s.db"), "--json"]
    )
    (row,) = [r for r in json.loads(res.stdout)["rows"] if r["metric"] == "jitter_mean_ns"]
    after_a, after_b = np.array([21e3, 22e3, 20e3]), np.array([81e3, 82e3, 80e3])
    assert row["a"] == 21e3 and row["b"] == 81e3  # was 1.6807 ms and 3.0540 ms: the whole-run means
    assert row["difference"] == 60e3
    welch = stats.ttest_ind(after_b, after_a, equal_var=False)
    assert np.isclose(row["p_value"], welch.pvalue, rtol=1e-9)
    assert np.allclose(row["ci"], welch.confidence_interval(0.95), rtol=1e-9)
    # 60 µs is beyond the 50 µs floor and significant (p ≈ 2e-6, the only row): worse, exit 1
    assert row["verdict"] == "worse" and res.exit_code == 1


def test_compare_says_when_a_and_b_drop_different_warm_ups(tmp_path: Path) -> None:
    # A stored with analysis.omit 0, B with 1 s: B's jitter is read after 1 s, A's over the whole run
    # (1.68 ms against 0.081 ms here, by the means above); it was compared without a word
    store = Store(str(tmp_path / "s.db"))
    whole_run = SPEC.replace("analysis: {omit: 1s}\n", "")
    _campaign(store, "aaaa0001", RUNS_A, whole_run)
    _campaign(store, "bbbb0002", RUNS_B)
    _campaign(store, "cccc0003", RUNS_A)
    args = ["compare", "aaaa0001", "bbbb0002", "--db", str(tmp_path / "s.db")]
    res = CliRunner().invoke(app, [*args, "--json"])
    note = (
        "A drops each flow's first 0 s and B its first 1 s (their specs' analysis.omit): each side is read "
        "after its own warm-up removal, so a change can be the method's, not the network's; compare "
        "campaigns with the same analysis.omit"
    )
    assert note in json.loads(res.stdout)["notes"]
    assert (
        "note: A drops each flow's first 0 s and B its first 1 s"
        in CliRunner().invoke(app, args, env={"COLUMNS": "400"}).stdout
    )
    same = CliRunner().invoke(
        app, ["compare", "cccc0003", "bbbb0002", "--db", str(tmp_path / "s.db"), "--json"]
    )
    assert not any("warm-up" in n for n in json.loads(same.stdout)["notes"])  # both 1 s: nothing to say


PING = two_node_spec(
    "ping", {"rtt": "kind: rtt, count: 10, interval: 50ms"}, "schedule: {repetitions: 3, prime: false}\n"
)


def _ping_campaign(store: Store, cid: str, spec: str) -> None:
    """A finished campaign of `spec`: per repetition one ping run of 10 replies of 100 µs, all in its
    first 0.5 s (the 50 ms interval)."""
    add_campaign(store, cid, "ping", spec)
    plan = make_plan(parse_spec(spec, "test", stored=True), cid, 1)
    records = []
    for step in plan.steps:
        rec = MeasurementRecord(
            campaign_id=cid, **step.record_fields(step.flows[0], plan.layouts[0]), kind="rtt", status="ok"
        )
        rec.summary = {"rtt_mean_ns": 100e3}
        rec.samples = [Sample(int(i * 50e6), "rtt_ns", 100e3, seq=i) for i in range(10)]
        records.append(rec)
    store.save_measurements(records)


def test_compare_of_a_ping_campaign_whose_replies_are_all_before_analysis_omit(tmp_path: Path) -> None:
    # B's 10 pings at 50 ms end before its 1 s analysis.omit: no RTT value is left in B. compare
    # printed pandas' "ValueError: No objects to concatenate" traceback; it now lists the row as only in
    # A and exits 2 (no row in common, no verdict), as for any two campaigns with nothing to compare
    store = Store(str(tmp_path / "s.db"))
    _ping_campaign(store, "aaaa0001", PING)
    _ping_campaign(store, "bbbb0002", PING + "analysis: {omit: 1s}\n")
    res = CliRunner().invoke(
        app, ["compare", "aaaa0001", "bbbb0002", "--db", str(tmp_path / "s.db"), "--json"]
    )
    assert res.exception is None or isinstance(res.exception, SystemExit)
    (missing,) = json.loads(res.stdout)["missing"]
    assert (missing["in"], missing["metric"], missing["pair"]) == ("A", "rtt_ns", "n1→n2")
    assert res.exit_code == 2


def test_compare_says_a_row_has_no_value_because_every_sample_is_before_analysis_omit(tmp_path: Path) -> None:
    # the audit's real campaign with analysis.omit 1s: its pings (10 at 50 ms) ended before 1 s, and the
    # RTT rows were listed "only in A: vm1→vm2 · rtt · RTT — no value in B" with no word of why
    store = Store(str(tmp_path / "s.db"))
    _ping_campaign(store, "aaaa0001", PING)
    _ping_campaign(store, "bbbb0002", PING + "analysis: {omit: 1s}\n")
    args = ["compare", "aaaa0001", "bbbb0002", "--db", str(tmp_path / "s.db")]
    (missing,) = json.loads(CliRunner().invoke(app, [*args, "--json"]).stdout)["missing"]
    assert missing["reason"] == "no value in B (no sample at or after its analysis.omit, 1 s)"
    table = CliRunner().invoke(app, args, env={"COLUMNS": "400"}).stdout
    assert (
        "only in A: n1→n2 · rtt · RTT — no value in B (no sample at or after its analysis.omit, 1 s)" in table
    )
