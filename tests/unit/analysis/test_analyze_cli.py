"""`vnetbench stats` and `vnetbench analyze` as registered in the real CLI (no root): the commands
exist, give their numbers, and refuse bad input with one line and exit code 2."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tests.helpers.campaign_frames import ONL_SPEC
from tests.helpers.stats_app import ONL
from tests.helpers.synthetic import quickstart_text, write_campaign
from vnetbench.cli import app
from vnetbench.store.db import Store


def _invoke(*args: str):
    return CliRunner().invoke(app, list(args))


def test_stats_is_registered_in_the_cli() -> None:
    res = _invoke("stats", str(ONL), "--response", "loss", "--factor", "receivers", "--json")
    assert res.exit_code == 0, res.output
    assert json.loads(res.stdout)["anova"]["f"] == pytest.approx(1367.886, rel=1e-3)


def _store_with_campaign(tmp_path: Path) -> Path:
    db = tmp_path / "s.db"
    Store(db).create_campaign(
        id="cafe0001", name="onl-synthetic", status="finished", provider="local", spec_text=ONL_SPEC,
        spec_sha256="-", spec_source="test", seed=1, environment={}, tool_versions={},
    )  # fmt: skip
    return db


def test_analyze_of_an_unknown_campaign_is_a_usage_error(tmp_path: Path) -> None:
    db = _store_with_campaign(tmp_path)
    res = _invoke("analyze", "nosuch", "--db", str(db))
    assert res.exit_code == 2
    assert "no campaign 'nosuch'" in res.output and "cafe0001" in res.output


def test_analyze_refuses_an_unknown_outlier_policy(tmp_path: Path) -> None:
    db = _store_with_campaign(tmp_path)
    res = _invoke("analyze", "cafe0001", "--db", str(db), "--outliers", "zscore")
    assert res.exit_code == 2 and "use none, iqr or mad" in res.output


def test_analyze_of_a_campaign_without_measurements_says_so(tmp_path: Path) -> None:
    db = _store_with_campaign(tmp_path)
    res = _invoke("analyze", "cafe0001", "--db", str(db), "--json")
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)
    assert out["flows"] == 0 and out["models"] == [] and out["design"]["kind"] == "one-factor"


def test_analyze_refuses_a_tolerance_outside_0_1(tmp_path: Path) -> None:
    db = _store_with_campaign(tmp_path)
    res = _invoke("analyze", "cafe0001", "--db", str(db), "--reproducibility-tolerance", "5")
    assert (
        res.exit_code == 2 and "--reproducibility-tolerance 5.0: give a share between 0 and 1" in res.output
    )


def test_analyze_says_how_many_repetitions_the_store_holds_where_the_plan_differs(tmp_path: Path) -> None:
    # was: the spec's count alone, e.g. 'replications 1' for a monitored campaign of 3 runs (a run is a
    # repetition) and the planned 5 for a campaign stopped after 2
    db = tmp_path / "s.db"
    store = Store(db)
    cid = write_campaign(store, 2_000)  # the quickstart: 2 repetitions, all stored
    assert "repetitions: 2" in quickstart_text()
    store.update_campaign(cid, spec_text=quickstart_text().replace("repetitions: 2", "repetitions: 5"))
    res = _invoke("analyze", cid, "--db", str(db), "--json")
    assert res.exit_code == 0, res.output
    design = json.loads(res.stdout)["design"]
    assert (design["replications"], design["replications_stored"]) == (5, 2)
    res = CliRunner().invoke(app, ["analyze", cid, "--db", str(db)], env={"COLUMNS": "200"})
    assert res.exit_code == 0, res.output
    rows = [[cell.strip() for cell in line.split("│")[1:3]] for line in res.stdout.splitlines()]
    assert ["replications", "2 stored (5 planned)"] in rows
