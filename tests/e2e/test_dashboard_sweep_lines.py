"""A sweep's cells and a pair's lines in a real browser (Playwright driving Debian's chromium) over a real
SQLite store shaped like openstack-bridges (tests/helpers/dashboard_sweeps.py): the grid's sweep cells say
'knee 60 K pps', contended flows have a grid per pattern, and the series page draws one line per pattern
and sweep point, the first 8 of them or the one chosen, saying how many it left out, each broken (and
marked) at a failed attempt of its own. No campaign runs and no root is needed."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from tests.helpers.browser import chromium_page, missing_browser
from tests.helpers.dashboard_server import serving
from tests.helpers.dashboard_stores import dashboard_store, record
from tests.helpers.dashboard_sweeps import mixed_patterns_store, sweep_store
from vnetbench.dashboard import create_app

SKIP = missing_browser()


@pytest.mark.skipif(SKIP is not None, reason=SKIP or "")
def test_sweep_cells_and_one_line_per_pattern_and_sweep_point(tmp_path: Path) -> None:
    sweep_store(tmp_path / "o.db")
    errors: list[str] = []
    with serving(create_app(str(tmp_path / "o.db"))) as url, chromium_page(tmp_path / "chromium") as page:
        page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.goto(f"{url}/campaigns/o1")
        alone = page.locator("section[data-grid='sweep/alone/throughput_bps']")
        cell = alone.locator("td.cell[data-src='lb-s1'][data-dst='lb-r1']")
        cell.wait_for(timeout=30_000)
        assert cell.locator(".value").all_inner_texts() == ["18 B: knee 60 K pps", "1472 B: knee 60 K pps"]
        assert cell.get_attribute("data-level") == "ok"
        # the level in words and in a colour a colour-blind reader tells apart (palette.py's OK, CRITICAL)
        assert cell.locator(".level-name").inner_text() == "ok"
        assert cell.evaluate("(td) => getComputedStyle(td).backgroundColor") == "rgb(0, 114, 178)"
        assert "knee of its newest complete sweep" in alone.locator(".levels").inner_text()
        # one grid per pattern for the flows measured with others; lb-bg's 1472-byte knee fell to 10 K
        background = page.locator("section[data-grid='sweep/contended:lb-bg/throughput_bps']")
        assert background.locator("h2").inner_text() == "sweep (with others: lb-bg) · throughput_bps"
        bg_cell = background.locator("td.cell[data-src='lb-s1'][data-dst='lb-r1']")
        assert bg_cell.get_attribute("data-level") == "critical"
        assert bg_cell.locator(".level-name").inner_text() == "critical"
        assert bg_cell.evaluate("(td) => getComputedStyle(td).backgroundColor") == "rgb(213, 94, 0)"
        assert bg_cell.locator(".compared").inner_text() == "× 0.33 of the earlier best knee"
        tenants = page.locator(
            "section[data-grid='sweep/contended:lb-2tenants/throughput_bps'] td.cell[data-level]"
        )
        assert tenants.count() == 2
        page.screenshot(path=str(tmp_path / "sweep-grid.png"), full_page=True)

        # the lb-bg cell opens the pair's contended series with lb-bg's lines chosen
        bg_cell.locator("a").click()
        page.wait_for_url(f"{url}/campaigns/o1/series?*pattern=lb-bg*")
        page.locator("#repetitions tbody tr").first.wait_for(timeout=30_000)
        chart = page.locator("#chart")
        assert page.locator("#line-select").input_value() == "pattern:lb-bg"
        assert chart.get_attribute("data-lines") == "7"  # 12 lines of lb-bg: the first 7
        note = page.locator("#lines-note")
        assert note.inner_text() == (
            "24 lines: one per pattern, sweep point or offered rate and treatment, never joined; "
            "showing 7, 17 left out — choose a line or pattern above"
        )
        labels = page.evaluate("chart.series.slice(1).map((s) => s.label)")
        assert labels[:2] == ["lb-bg · 18 B at 1 K pps", "lb-bg · 18 B at 10 K pps"]
        strokes = page.evaluate(
            "chart.series.slice(1).map((s, i) => typeof s.stroke === 'function' ? s.stroke(chart, i + 1) : s.stroke)"
        )
        assert strokes == ["#0072B2", "#000000", "#840474", "#3594FF", "#009E73", "#CC79A7", "#7700CC"]
        assert page.locator("#changepoints").inner_text() == (
            "change points, searched within each line: 7 lines with too few runs to look (10 needed)"
        )
        page.screenshot(path=str(tmp_path / "sweep-7-lines.png"), full_page=True)

        # one line chosen: its three repetitions only, with its band
        page.locator("#line-select").select_option(label="lb-bg · 1472 B at 30 K pps")
        page.wait_for_function("document.getElementById('chart').dataset.lines === '1'", timeout=30_000)
        assert page.evaluate("chart.series[1].label") == "lb-bg · 1472 B at 30 K pps"
        drawn = page.evaluate("chart.data[1].filter((v) => v != null)")  # not null, not undefined
        # 30 K pps of 1472 bytes received whole in repetitions 1 and 2 (353 Mbit/s), a third of it in 3
        assert drawn == pytest.approx([353.28, 353.28, 353.28 / 3], rel=1e-3)
        assert page.evaluate("chart.series.slice(2).map((s) => s.label)") == ["sample max", "sample min"]
        assert "showing 1, 23 left out" in note.inner_text()
        assert page.locator("#changepoints").inner_text() == (
            "change points, searched within each line: lb-bg · 1472 B at 30 K pps: too few runs to look for "
            "any (10 needed)"
        )
        page.screenshot(path=str(tmp_path / "sweep-lines.png"), full_page=True)
    assert errors == []


@pytest.mark.skipif(SKIP is not None, reason=SKIP or "")
def test_change_points_are_drawn_and_named_per_line(tmp_path: Path) -> None:
    # 'pairs' steps from 100 to 80 Mbit/s at its run 11; 'slow' (50 Mbit/s) is flat; 'rare' has 4 runs
    mixed_patterns_store(tmp_path / "c.db")
    errors: list[str] = []
    with serving(create_app(str(tmp_path / "c.db"))) as url, chromium_page(tmp_path / "chromium") as page:
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.goto(f"{url}/campaigns/c1/series?measurement=tcp&src=a&dst=b&metric=throughput_bps")
        page.locator("#repetitions tbody tr").first.wait_for(timeout=30_000)
        assert page.locator("#chart").get_attribute("data-lines") == "3"
        assert page.evaluate("chart.series.slice(1).map((s) => s.label)") == ["pairs", "slow", "rare"]
        # each line's own points only: 20, 20 and 4
        counts = page.evaluate("chart.data.slice(1).map((d) => d.filter((v) => v != null).length)")
        assert counts == [20, 20, 4]
        assert page.locator("#changepoints").inner_text() == (
            "change points, searched within each line: pairs: repetition 11; none in 1 line; "
            "1 line with too few runs to look (10 needed)"
        )
        assert page.locator("#lines-note").inner_text() == (
            "3 lines: one per pattern, sweep point or offered rate and treatment, never joined"
        )
        page.screenshot(path=str(tmp_path / "change-points.png"), full_page=True)
    assert errors == []


# a→b tcp by two patterns in turn: 'pairs' (about 90 Mbit/s) fails its repetition 3, 'slow' (about
# 50 Mbit/s) never fails; (repetition, pattern, status, throughput)
ATTEMPTS = [
    (1, "pairs", "ok", 90e6),
    (1, "slow", "ok", 50e6),
    (2, "pairs", "ok", 92e6),
    (2, "slow", "ok", 51e6),
    (3, "pairs", "failed", None),
    (3, "slow", "ok", 50e6),
    (4, "pairs", "ok", 91e6),
    (4, "slow", "ok", 50e6),
]


@pytest.mark.skipif(SKIP is not None, reason=SKIP or "")
def test_a_line_breaks_at_its_failed_attempt_and_marks_it(tmp_path: Path) -> None:
    # before: 'pairs' was drawn straight from its repetition 2 to its repetition 4 across the failed
    # attempt the table lists, as if measured throughout
    store = dashboard_store(tmp_path / "f.db", "f1", "finished")
    records = []
    for seq, (rep, pattern, status, value) in enumerate(ATTEMPTS):
        summary = {} if value is None else {"throughput_bps": value}
        base = record("f1", seq, rep, "tcp", "a", "b", summary, status=status)
        records.append(replace(base, key=f"k{seq}", pattern=pattern))
    store.save_measurements(records)
    store.close()
    errors: list[str] = []
    with serving(create_app(str(tmp_path / "f.db"))) as url, chromium_page(tmp_path / "chromium") as page:
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.goto(f"{url}/campaigns/f1/series?measurement=tcp&src=a&dst=b&metric=throughput_bps")
        page.locator("#repetitions tbody tr").first.wait_for(timeout=30_000)
        assert page.evaluate("chart.series.slice(1).map((s) => s.label)") == ["pairs", "slow"]
        # null (a gap) from the value before the failed attempt to the value after it; undefined
        # (joined) at the other line's times
        rows = page.evaluate(
            "chart.data.slice(1).map((d) => d.map((v) => v === null ? 'gap' : v === undefined ? 'join' : v))"
        )
        assert rows == [
            [90, "join", 92, "gap", "gap", "gap", 91, "join"],
            ["join", 50, "join", 51, "join", 50, "join", 50],
        ]
        # what uPlot drew: one gap in 'pairs', from repetition 2's point to repetition 4's; none in 'slow'
        gaps = page.evaluate("chart.series.slice(1).map((s) => s._paths.gaps)")
        xs = page.evaluate("chart.data[0].map((x) => chart.valToPos(x, 'x', true))")
        ((start, end),) = gaps[0]
        assert (start, end) == (pytest.approx(xs[2], abs=1.5), pytest.approx(xs[6], abs=1.5))
        assert gaps[1] == []
        # the failed attempt marked in the gap, at its time and the level of the line before it, in the
        # colour of its row in the table
        (mark,) = page.evaluate("chart.vnbFailed.map((m) => [m.index, m.x, m.y])")
        assert mark[0] == 4 and mark[1] == pytest.approx(xs[4], abs=0.5)
        assert mark[2] == pytest.approx(page.evaluate("chart.valToPos(92, 'y', true)"), abs=0.5)
        red = page.evaluate(
            """([x, y]) => {
              const d = chart.ctx.getImageData(Math.round(x) - 1, Math.round(y) - 1, 3, 3).data;
              let found = false;  // #b71c1c: (183, 28, 28)
              for (let i = 0; i < d.length; i += 4) {
                found ||= Math.abs(d[i] - 183) < 20 && d[i + 1] < 50 && d[i + 2] < 50;
              }
              return found;
            }""",
            mark[1:],
        )
        assert red
        failed_row = page.locator("#repetitions tbody tr[data-status='failed'] td").first
        assert failed_row.evaluate("(td) => getComputedStyle(td).color") == "rgb(183, 28, 28)"
        page.screenshot(path=str(tmp_path / "failed-attempt.png"), full_page=True)
    assert errors == []
