"""The live dashboard in a real browser (Playwright driving Debian's chromium) while a real small campaign
runs on the local provider in a subprocess: the grid fills in without a reload, a cell opens the pair's
series, and screenshots of each are saved into the test's output directory (pytest's tmp_path)."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import time
from pathlib import Path

import pytest

from tests.helpers.browser import chromium_page, missing_browser
from tests.helpers.dashboard_server import serving
from tests.helpers.integration.cli import clean_up, cli_argv, leftovers
from vnetbench.dashboard import create_app

pytestmark = [pytest.mark.root, pytest.mark.slow(seconds=36)]

SKIP = missing_browser()

SPEC = """\
name: e2e-dash
topology:
  nodes: [{name: a}, {name: b}, {name: c}]
  switches: [{name: sw, kind: linux-bridge}]
  links:
    - {endpoints: [a, sw], rate: 50mbit}
    - {endpoints: [b, sw], rate: 50mbit}
    - {endpoints: [c, sw], rate: 50mbit}
measurements:
  - {name: tcp, kind: tcp, duration: 3s}
  - {name: rtt, kind: rtt, count: 10, interval: 0.1s}
patterns:
  - {name: pairs, kind: pairs, pairs: [[a, b], [a, c], [b, c]], measurements: [tcp, rtt]}
schedule:
  repetitions: 2
"""
# tcp: throughput; rtt: loss and mean RTT (the default thresholds' metrics), for each of the 3 pairs
CELLS = 9
CAMPAIGN_DEADLINE_S = 300  # ~12 steps of 1-4 s; wide because the machine is shared with other test runs


def _filled_cells(page) -> int:
    return page.locator("td.cell[data-level]").count()


@pytest.mark.skipif(SKIP is not None, reason=SKIP or "")
def test_grid_fills_in_while_a_campaign_runs_and_a_cell_opens_the_pair_series(tmp_path: Path) -> None:
    spec, db = tmp_path / "dash.yaml", tmp_path / "dash.db"
    spec.write_text(SPEC)
    log = (tmp_path / "run.log").open("w")
    proc: subprocess.Popen | None = None
    try:
        # the dashboard and the browser first, on an empty store: the campaign appears in it while it runs
        with serving(create_app(str(db))) as url, chromium_page(tmp_path / "chromium-profile") as page:
            page.goto(f"{url}/")
            page.get_by_text("no campaigns in this store yet").wait_for(timeout=30_000)
            proc = subprocess.Popen(
                [*cli_argv(), "run", str(spec), "--db", str(db), "--no-report"],
                cwd=tmp_path,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,  # its own process group, stopped whole if the test fails
            )
            row = page.locator("tr[data-campaign]")
            row.wait_for(timeout=60_000)
            campaign = row.get_attribute("data-campaign")
            row.locator("a").first.click()
            page.wait_for_url(f"{url}/campaigns/{campaign}")
            page.evaluate("window.vnbSameDocument = true")  # gone if the page ever reloads

            # the grid fills in: watch the number of coloured cells grow to all of them
            seen: list[int] = []
            deadline = time.monotonic() + CAMPAIGN_DEADLINE_S
            while time.monotonic() < deadline:
                count = _filled_cells(page)
                if not seen or count != seen[-1]:
                    seen.append(count)
                    if len(seen) == 2:
                        page.screenshot(path=str(tmp_path / "grid-filling.png"), full_page=True)
                if count == CELLS:
                    break
                page.wait_for_timeout(250)  # a poll interval of the watcher, not a wait for a result
            assert seen and seen[-1] == CELLS, f"coloured cells seen over time: {seen}"
            assert len(seen) >= 3 and seen == sorted(seen), f"the grid did not fill in step by step: {seen}"
            assert page.evaluate("window.vnbSameDocument === true"), "the page reloaded"
            levels = page.locator("td.cell[data-level]").evaluate_all(
                "cells => cells.map(c => c.dataset.level)"
            )
            assert set(levels) <= {"ok", "warning", "critical", "none"} and "none" not in levels[:3], levels
            page.screenshot(path=str(tmp_path / "grid-full.png"), full_page=True)

            # the campaign ends; the page says so without a reload
            assert proc.wait(CAMPAIGN_DEADLINE_S) == 0, (tmp_path / "run.log").read_text()[-3000:]
            page.locator("#progress .state-finished").wait_for(timeout=30_000)
            assert page.locator("#progress .progress").get_attribute("data-done") == "12"
            # the poll's time is UTC, as every time on the page (it was the browser's local time)
            assert re.fullmatch(r"updated \d\d:\d\d:\d\d UTC", page.locator("#updated").inner_text())

            # one pair's series: both repetitions, the chart and its table
            tcp = page.locator("section[data-grid='tcp/alone/throughput_bps']")
            tcp.locator("td.cell[data-src='a'][data-dst='b'] a").click()
            page.wait_for_url(f"{url}/campaigns/{campaign}/series?*")
            page.locator("#repetitions tbody tr").nth(1).wait_for(timeout=30_000)
            assert page.locator("#chart canvas").count() >= 1
            assert page.locator("#chart").get_attribute("data-points") == "2"
            first_rate = page.locator("#repetitions tbody tr").first.locator("td").nth(4).inner_text()
            assert first_rate.endswith("Mbit/s"), first_rate
            assert 10 < float(first_rate.split()[0]) <= 50  # a 50 mbit link; wide: goodput, a loaded machine
            page.screenshot(path=str(tmp_path / "series.png"), full_page=True)
        for name in ("grid-filling.png", "grid-full.png", "series.png"):
            assert (tmp_path / name).stat().st_size > 10_000, name
        print(f"screenshots in {tmp_path}")
    finally:
        if proc is not None and proc.poll() is None:
            os.killpg(proc.pid, signal.SIGTERM)
            proc.wait(60)
        log.close()
        clean_up(db, tmp_path)
    assert leftovers(db) == []
