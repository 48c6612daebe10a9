"""`vnetbench compare` of a metric that cannot be negative: the interval of B − A relative to A is cut
at −100 % (B ≥ 0), marked where it is cut and said in `--json`; the verdict stays the uncut test's.
Was: 'udp · loss | 2.21 % | 0.0196 % | −99.1 % | (−1369.3 to 1171.1) %'. Expected numbers come from
scipy's Welch interval on the stored values. Real SQLite store, no mocks."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from scipy import stats
from typer.testing import CliRunner, Result

from tests.helpers.specs import two_node_spec
from tests.helpers.stores import add_campaign
from vnetbench.cli import app
from vnetbench.cli.common import out
from vnetbench.plan import make_plan
from vnetbench.spec.loader import parse_spec
from vnetbench.store.db import Store
from vnetbench.store.records import MeasurementRecord

SPEC = two_node_spec(
    "lossy", {"udp": "kind: udp, rate: 10mbit, duration: 3s"}, "schedule: {repetitions: 3, prime: false}\n"
)
LOSS_A, LOSS_B = np.array([0.0010, 0.0020, 0.0633]), np.array([0.0002, 0.0001, 0.0003])  # 2.21 % -> 0.02 %
JITTER_A, JITTER_B = np.array([20e3, 30e3, 900e3]), np.array([40e3, 50e3, 60e3])  # ns


def _campaign(store: Store, cid: str, loss: np.ndarray, jitter: np.ndarray) -> None:
    """A finished campaign of SPEC: one UDP run per repetition with this loss and jitter."""
    add_campaign(store, cid, "lossy", SPEC)
    plan = make_plan(parse_spec(SPEC, "test", stored=True), cid, 1)
    records = []
    for step, lost, jit in zip(plan.steps, loss, jitter, strict=True):
        rec = MeasurementRecord(
            campaign_id=cid, **step.record_fields(step.flows[0], plan.layouts[0]), kind="udp", status="ok"
        )
        rec.summary = {"throughput_bps": 9.9e6, "loss_ratio": float(lost), "jitter_mean_ns": float(jit)}
        records.append(rec)
    store.save_measurements(records)


def _result(*args: str) -> Result:
    """The command's result, stdout and stderr apart, at a width that wraps no message."""
    return CliRunner().invoke(app, list(args), env={"COLUMNS": "400"})


def _relative_high(a: np.ndarray, b: np.ndarray) -> float:
    """The upper end of scipy's 95 % Welch interval of mean(B) − mean(A), relative to mean(A)."""
    ci = stats.ttest_ind(b, a, equal_var=False).confidence_interval(0.95)
    assert ci.low / a.mean() < -1  # below −100 %: what the command printed before
    return float(ci.high / a.mean())


@pytest.fixture
def db(tmp_path: Path) -> Path:
    store = Store(str(tmp_path / "s.db"))
    _campaign(store, "aaaa0001", LOSS_A, JITTER_A)
    _campaign(store, "bbbb0002", LOSS_B, JITTER_B)
    return tmp_path / "s.db"


def test_compare_cuts_a_relative_interval_at_minus_100_percent_and_marks_it(
    db: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(out, "_width", 400)  # a table, not one block per row (its width is the console's)
    res = _result("compare", "aaaa0001", "bbbb0002", "--db", str(db))
    assert res.exit_code == 0, res.output
    cells = {
        parts[0]: parts[1:] for line in res.stdout.splitlines()
        if len(parts := [c.strip() for c in line.strip("│ ").split("│")]) == 7
    }  # fmt: skip
    loss_high, jitter_high = 100 * _relative_high(LOSS_A, LOSS_B), 100 * _relative_high(JITTER_A, JITTER_B)
    assert cells["n1→n2 · udp · loss"] == ["2.21 %", "0.0200 %", "−99.1 %", f"(−100.0* to {loss_high:.1f}) %",
                                           "0.8", "same"]  # fmt: skip
    assert cells["n1→n2 · udp · jitter"][3] == f"(−100.0* to {jitter_high:.1f}) %"
    assert cells["n1→n2 · udp · throughput"][3] == "(0.0 to 0.0) %"  # not cut: no mark
    caption = " ".join(line.strip() for line in res.stdout.splitlines())
    assert (
        "; * cut at −100 %: B cannot be negative, so B − A is never below −A (the verdict is from the uncut "
        "interval's test)" in caption
    )


def test_compare_json_gives_the_cut_interval_and_says_it_was_cut(db: Path) -> None:
    res = _result("compare", "aaaa0001", "bbbb0002", "--db", str(db), "--json")
    assert res.exit_code == 0, res.output
    rows = {r["metric"]: r for r in json.loads(res.stdout)["rows"]}
    for metric, a, b in (("loss_ratio", LOSS_A, LOSS_B), ("jitter_mean_ns", JITTER_A, JITTER_B)):
        ci = stats.ttest_ind(b, a, equal_var=False).confidence_interval(0.95)
        assert rows[metric]["relative_ci"] == pytest.approx([-1.0, _relative_high(a, b)])
        assert rows[metric]["relative_ci_cut"] is True
        assert rows[metric]["ci"] == pytest.approx([ci.low, ci.high])  # the test's interval, uncut
        assert rows[metric]["verdict"] == "same"  # p (Holm) 0.8: the cut changes no verdict
    assert rows["throughput_bps"]["relative_ci_cut"] is False


def test_compare_with_a_baseline_of_0_prints_the_difference_cut_at_0(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A lost nothing: no relative change (it is undefined), the difference in pp with its interval cut
    # at 0 (B − A = B ≥ 0); was '+1.00 pp | (−3.29 to 5.30) pp' and null in --json without a word
    store, loss_b = Store(str(tmp_path / "s.db")), np.array([0.0, 0.0001, 0.03])
    _campaign(store, "aaaa0001", np.zeros(3), JITTER_B)
    _campaign(store, "bbbb0002", loss_b, JITTER_B)  # the same jitter: only the loss row is cut
    monkeypatch.setattr(out, "_width", 400)
    res = _result("compare", "aaaa0001", "bbbb0002", "--db", str(tmp_path / "s.db"))
    assert res.exit_code == 0, res.output
    cells = {
        parts[0]: parts[1:] for line in res.stdout.splitlines()
        if len(parts := [c.strip() for c in line.strip("│ ").split("│")]) == 7
    }  # fmt: skip
    high = 100 * stats.ttest_1samp(loss_b, 0.0).confidence_interval(0.95).high  # in pp
    assert cells["n1→n2 · udp · loss"][:4] == ["0 %", "1.00 %", "+1.00 pp", f"(0* to {high:.2f}) pp"]
    caption = " ".join(line.strip() for line in res.stdout.splitlines())
    assert "the difference itself where A is 0: a change relative to 0 is undefined" in caption
    assert "* cut at 0 (A is 0): B cannot be negative" in caption
    res = _result("compare", "aaaa0001", "bbbb0002", "--db", str(tmp_path / "s.db"), "--json")
    row = {r["metric"]: r for r in json.loads(res.stdout)["rows"]}["loss_ratio"]
    assert (row["relative_change"], row["relative_ci_cut"], row["ci_cut"]) == (None, False, True)
    assert row["relative_note"].startswith("undefined: A's mean is 0")
