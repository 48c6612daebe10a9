"""`vnetbench --version` and the vnetbench version in the report: the installed package's version,
the one each campaign stores as `environment.vnetbench`. There was no --version, and the report's
Campaign table showed the kernel and the tools but not the vnetbench that ran the campaign, nor the
versions of the libraries that computed the report's statistics."""

from __future__ import annotations

import json
import sys
from importlib.metadata import version
from pathlib import Path

from typer.testing import CliRunner

from tests.helpers.specs import TWO_NODE_TCP as SPEC
from vnetbench.cli import app
from vnetbench.run.campaign import environment
from vnetbench.store.db import Store


def test_version_prints_the_installed_version_the_store_records() -> None:
    res = CliRunner().invoke(app, ["--version"])
    assert (res.exit_code, res.stdout, res.stderr) == (0, f"vnetbench {version('vnetbench')}\n", "")
    assert environment()["vnetbench"] == version("vnetbench")  # what a campaign stores
    helped = CliRunner().invoke(app, ["--help"], env={"COLUMNS": "250"})
    assert "print vnetbench's version (as each campaign stores it: environment.vnetbench) and exit" in (
        helped.stdout
    )


def test_the_campaign_table_of_the_report_gives_the_vnetbench_version(tmp_path: Path) -> None:
    store = Store(str(tmp_path / "s.db"))
    for cid, env in (("cafe0001", {"kernel": "6.1.0-test", "vnetbench": "9.8.7"}), ("dddd0002", {})):
        store.create_campaign(
            id=cid, name="kept", status="finished", provider="local", spec_text=SPEC, spec_sha256="-",
            spec_source="test", seed=1, environment=env, tool_versions={"iperf3": "3.12"},
        )  # fmt: skip
    res = CliRunner().invoke(
        app, ["report", "cafe0001", "--db", str(tmp_path / "s.db"), "--out", str(tmp_path / "r")]
    )
    assert res.exit_code == 0, res.output
    page = (tmp_path / "r" / "index.html").read_text()
    assert "<tr><td>vnetbench</td><td>9.8.7</td></tr><tr><td>tools</td><td>iperf3 3.12</td></tr>" in page
    # and the software that made the report (its statistics), read here from the installed packages
    made = (
        f"vnetbench {version('vnetbench')}, Python {sys.version.split()[0]}, numpy {version('numpy')}, "
        f"pandas {version('pandas')}, scipy {version('scipy')}, statsmodels {version('statsmodels')}"
    )
    assert f"<tr><td>report made with</td><td>{made}</td></tr>" in page
    sections = json.loads((tmp_path / "r" / "report.json").read_text())["sections"]
    campaign = next(s for s in sections if s["title"] == "Campaign")
    assert dict(campaign["tables"][0]["rows"])["report made with"] == made
    # a campaign stored without it (none before the version was recorded): '?', as a missing kernel
    res = CliRunner().invoke(
        app, ["report", "dddd0002", "--db", str(tmp_path / "s.db"), "--out", str(tmp_path / "o")]
    )
    assert res.exit_code == 0, res.output
    assert "<tr><td>vnetbench</td><td>?</td></tr>" in (tmp_path / "o" / "index.html").read_text()
