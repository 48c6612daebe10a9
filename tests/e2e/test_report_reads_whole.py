"""A small designed campaign, run for real, read as a person reads it (issue #15's 'Done when'):

- its report, opened in headless Chromium, shows no raw-unit number, no numeric column in text order,
  no empty interval, and a figure for every metric with data (vnetbench.report.checks), and opens with
  its findings;
- `vnetbench analyze … | cat` and `COLUMNS=80 vnetbench analyze …` show every number of every table
  whole (no '…', every cell's every word present).

The factor's levels are UDP rates in bit/s whose text order is not their order (10000000 sorts before
2000000 as text), so a table sorted as text shows.
"""

from __future__ import annotations

import os
import subprocess
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.helpers.browser import chromium_page, missing_browser
from tests.helpers.integration.cli import cli_argv, only_campaign, ran_campaign
from vnetbench.analysis.campaign_analysis import analyze_campaign
from vnetbench.analysis.campaign_data import load_campaign_frames
from vnetbench.report.analysis_tables import analysis_parts
from vnetbench.report.checks import PAGE_JS, problems
from vnetbench.store.db import Store

pytestmark = [pytest.mark.root, pytest.mark.slow(seconds=60)]

SPEC = """\
name: e2e-reads-whole
description: does the offered UDP rate change loss and fairness of two flows into one bridge?
topology:
  nodes: [{name: a}, {name: b}, {name: c}]
  switches: [{name: sw, kind: linux-bridge}]
  links:
    - {endpoints: [a, sw], rate: 20mbit}
    - {endpoints: [b, sw], rate: 100mbit}
    - {endpoints: [c, sw], rate: 100mbit}
measurements:
  - {name: udp, kind: udp, duration: 1s, rate: 2mbit}
  - {name: tcp, kind: tcp, duration: 1s}
  - {name: rtt, kind: rtt, count: 5, interval: 0.05s}
patterns:
  - {name: star, kind: star, source: a, destinations: [b, c], measurements: [udp]}
  - {name: pair, kind: pairs, pairs: [[a, b]], measurements: [tcp, rtt]}
factors:
  - {name: offered, path: measurements.udp.rate, levels: [2000000, 5000000, 10000000]}
design: {kind: one-factor, replications: 2}
"""


@dataclass
class Ran:
    db: Path
    report: Path
    campaign_id: str


@pytest.fixture(scope="module")
def ran(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Ran]:
    with ran_campaign(SPEC, tmp_path_factory.mktemp("whole"), timeout=600) as (db, report, _):
        yield Ran(db, report, only_campaign(db)["id"])


@pytest.mark.skipif(missing_browser() is not None, reason=str(missing_browser()))
def test_the_report_in_chromium_has_nothing_a_reader_cannot_trust(ran: Ran, tmp_path: Path) -> None:
    with chromium_page(tmp_path / "profile") as page:
        page.goto((ran.report / "index.html").resolve().as_uri())
        sections = page.evaluate(PAGE_JS)
        page.screenshot(path=str(tmp_path / "first-screen.png"))
    assert problems(sections) == []
    assert sections[0]["title"] == "Findings", [s["title"] for s in sections]
    # the design's main result comes before the per-connection views
    titles = [s["title"] for s in sections]
    assert titles.index("Effects of the factors") < titles.index("UDP throughput")
    fairness = next(s for s in sections if s["title"] == "Fairness of simultaneous flows")
    offered = [
        row[fairness["tables"][0]["headers"].index("offered")] for row in fairness["tables"][0]["rows"]
    ]
    assert offered == ["2000000", "5000000", "10000000"]  # by number, not as text


def _analysis_cells(ran: Ran) -> list[str]:
    store = Store(ran.db)
    try:
        result = analyze_campaign(load_campaign_frames(store, ran.campaign_id))
    finally:
        store.close()
    return [cell for part in analysis_parts(result) for t in part.tables for row in t.rows for cell in row]


@pytest.mark.parametrize("columns", [None, "80"], ids=["piped", "COLUMNS=80"])
def test_analyze_shows_every_number_whole(ran: Ran, columns: str | None) -> None:
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES")}
    if columns:
        env["COLUMNS"] = columns
    with tempfile.TemporaryFile("w+") as out:  # stdout is a file, as with `| cat`: not a terminal
        proc = subprocess.run(
            [*cli_argv(), "analyze", ran.campaign_id, "--db", str(ran.db)],
            stdout=out, stderr=subprocess.PIPE, text=True, env=env, timeout=300, check=False,
        )  # fmt: skip
        out.seek(0)
        text = out.read()
    assert proc.returncode == 0, proc.stderr
    assert "…" not in text
    assert max(len(line) for line in text.splitlines()) <= 80
    words = set(text.replace("│", " ").replace("┃", " ").split())
    cells = _analysis_cells(ran)
    assert len(cells) > 50
    cut = [(cell, w) for cell in cells for w in cell.split() if w not in words]
    assert cut == [], f"words of table cells not shown whole: {cut[:10]}"
