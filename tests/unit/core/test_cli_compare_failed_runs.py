"""`vnetbench compare` when some runs of a compared row failed: its rows compare the ok runs only, and
a note says how many failed. A B with 2 of 3 runs ok printed the same table and verdicts as one with 3
(n only in `--json`), not a word of the failure. Real SQLite store, no mocks; expected numbers by hand."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from tests.helpers.specs import two_node_spec
from tests.helpers.stores import add_campaign
from vnetbench.cli import app
from vnetbench.plan import make_plan
from vnetbench.spec.loader import parse_spec
from vnetbench.store.db import Store
from vnetbench.store.records import MeasurementRecord

SPEC = two_node_spec(
    "runs", {"udp": "kind: udp, rate: 10mbit, duration: 3s"}, "schedule: {repetitions: 3, prime: false}\n"
)


def _campaign(store: Store, cid: str, statuses: list[str]) -> None:
    """A finished campaign of SPEC: one UDP run per repetition, ok ones at 9.0, 9.1, 9.2 Mbit/s."""
    add_campaign(store, cid, "runs", SPEC)
    plan = make_plan(parse_spec(SPEC, "test", stored=True), cid, 1)
    records = []
    for i, (step, status) in enumerate(zip(plan.steps, statuses, strict=True)):
        rec = MeasurementRecord(
            campaign_id=cid, **step.record_fields(step.flows[0], plan.layouts[0]), kind="udp", status=status
        )
        rec.reason = None if status == "ok" else "iperf3: the server is busy running a test"
        rec.summary = {"throughput_bps": 9.0e6 + i * 0.1e6, "loss_ratio": 0.0} if status == "ok" else {}
        records.append(rec)
    store.save_measurements(records)


def test_compare_says_how_many_runs_of_a_compared_row_failed(tmp_path: Path) -> None:
    store = Store(str(tmp_path / "s.db"))
    _campaign(store, "aaaa0001", ["ok", "ok", "ok"])
    _campaign(store, "bbbb0002", ["ok", "failed", "ok"])
    args = ["compare", "aaaa0001", "bbbb0002", "--db", str(tmp_path / "s.db")]
    done = CliRunner().invoke(app, [*args, "--json"])
    data = json.loads(done.stdout)
    (row,) = [r for r in data["rows"] if r["metric"] == "throughput_bps"]
    assert (row["n_a"], row["n_b"]) == (3, 2)
    assert row["b"] == (9.0e6 + 9.2e6) / 2  # the two ok runs, by hand
    # 1 of 3 failed in B, none in A: a regression, as a row failed in every run of B is (exit 0 before)
    note = (
        "1 of 3 runs of n1→n2 · udp failed in B (0 of 3 in A: a regression): its rows compare the 2 ok ones"
    )
    assert note in data["notes"]
    assert data["more_failed_runs"] == [
        {"pattern": "p", "measurement": "udp", "kind": "udp", "pair": "n1→n2", "treatment": "—",
         "failed_a": 0, "runs_a": 3, "failed_b": 1, "runs_b": 3}
    ]  # fmt: skip
    assert done.exit_code == 1
    text = CliRunner().invoke(app, args, env={"COLUMNS": "400"})
    said = " ".join(text.stdout.split())
    assert f"note: {note}" in said and text.exit_code == 1
    assert "1 measurement failed in a larger share of its runs in B than in A (a regression)" in said
    # the same share failed in A: a note for each side, no regression
    _campaign(store, "dddd0004", ["failed", "ok", "ok"])
    same = CliRunner().invoke(
        app, ["compare", "dddd0004", "bbbb0002", "--db", str(tmp_path / "s.db"), "--json"]
    )
    data = json.loads(same.stdout)
    assert data["more_failed_runs"] == [] and same.exit_code == 0, data["notes"]
    assert "1 of 3 runs of n1→n2 · udp failed in B: its rows compare the 2 ok ones" in data["notes"]
    assert "1 of 3 runs of n1→n2 · udp failed in A: its rows compare the 2 ok ones" in data["notes"]
    # every run ok on both sides: no such note
    _campaign(store, "cccc0003", ["ok", "ok", "ok"])
    clean = json.loads(
        CliRunner()
        .invoke(app, ["compare", "aaaa0001", "cccc0003", "--db", str(tmp_path / "s.db"), "--json"])
        .stdout
    )
    assert not any("failed in" in n for n in clean["notes"])
