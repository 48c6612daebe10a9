"""The plan's counts: background flows are measurements of their own (stored beside the measured
flows), so the run and `validate` count them — an audit's run said "260 measurements" and stored 300."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from tests.helpers.specs import FOUR_NODE_STAR
from vnetbench.cli import app
from vnetbench.plan import make_plan
from vnetbench.spec import parse_spec

SPEC = (
    "name: t\n"
    + FOUR_NODE_STAR
    + """measurements:
  - {name: sweep, kind: pps, rates: [5000, 1000], sizes: [18], duration: 1s}
  - {name: bg, kind: background, pps: 1000, size: 64, pairs: [[c, d], [d, c]]}
schedule: {repetitions: 2}
patterns:
  - {name: p, kind: pairs, pairs: [[a, b]], measurements: [sweep], background: [bg]}
"""
)


def test_background_flows_are_counted_beside_the_measured_flows() -> None:
    plan = make_plan(parse_spec(SPEC), "c0ffee00", 1)
    # by hand: 2 sweep points × 2 repetitions = 4 steps of 1 measured flow; each step runs the
    # pattern's 2 background pairs beside it: 4 × 2 = 8 background flows; 4 + 8 = 12 stored
    assert len(plan.steps) == 4 and plan.flow_count == 4
    assert plan.background_count == 8 and plan.measurement_count == 12
    assert plan.count_text() == "4 steps, 12 measurements (8 of them background flows)"


def test_a_plan_without_background_flows_says_nothing_of_them() -> None:
    plan = make_plan(parse_spec(SPEC.replace(", background: [bg]", "")), "c0ffee00", 1)
    assert plan.count_text() == "4 steps, 4 measurements"


def test_validate_counts_the_background_flows(tmp_path: Path) -> None:
    spec = tmp_path / "t.yaml"
    spec.write_text(SPEC)
    text = CliRunner().invoke(app, ["validate", str(spec)])
    assert text.exit_code == 0, text.output
    assert "4 steps, 12 measurements (8 of them background flows)" in " ".join(text.output.split())
    data = json.loads(CliRunner().invoke(app, ["validate", str(spec), "--json"]).output)
    assert data["measurements"] == 12 and data["background_measurements"] == 8


def test_a_one_step_plan_is_counted_in_the_singular_and_in_seconds(tmp_path: Path) -> None:
    one = SPEC.replace("rates: [5000, 1000]", "rates: [5000]").replace("repetitions: 2", "repetitions: 1")
    plan = make_plan(parse_spec(one.replace(", background: [bg]", "")), "c0ffee00", 1)
    assert plan.count_text() == "1 step, 1 measurement"
    # one 1 s point: "~1 s of measuring", not "~0.0 min"; a minute or more is given in minutes
    assert plan.planned_text() == f"~{plan.planned_ns / 1e9:.0f} s of measuring"
    spec = tmp_path / "t.yaml"
    spec.write_text(one.replace(", background: [bg]", ""))
    text = " ".join(CliRunner().invoke(app, ["validate", str(spec)]).output.split())
    assert "valid — 1 step, 1 measurement, ~" in text and " s of measuring" in text and "0.0 min" not in text
