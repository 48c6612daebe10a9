"""The pair's series page in a real browser (Playwright driving Debian's chromium) over a real SQLite store:
the repetition table shows what tells a pair's points apart (pattern, offered rate, treatment) where it
varies, and nothing more where it does not. No campaign runs and no root is needed."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path

import pytest

from tests.helpers.browser import chromium_page, missing_browser
from tests.helpers.dashboard_server import serving
from tests.helpers.dashboard_stores import dashboard_store, record
from vnetbench.dashboard import create_app

SKIP = missing_browser()

# (seq, repetition, dst, pattern, offered_bps, factors): a→b measured by two patterns at two offered rates
# (as openstack-bridges a8dc3539's sweep: 'alone' and 'lb-bg'); a→c by one pattern, nothing varying
POINTS = [
    (0, 1, "b", "alone", 1e6, {}),
    (1, 1, "b", "alone", 10e6, {}),
    (2, 1, "b", "with-bg", 1e6, {}),
    (3, 1, "c", "pairs", None, {}),
    (4, 2, "c", "pairs", None, {}),
]


@pytest.fixture
def db(tmp_path: Path) -> Path:
    path = tmp_path / "s.db"
    store = dashboard_store(path, "s1", "finished")
    store.save_measurements(
        [
            replace(
                record("s1", seq, rep, "tcp", "a", dst, {"throughput_bps": 50e6 + seq}),
                key=f"k{seq}",
                pattern=pattern,
                offered_bps=offered,
                factors=factors,
            )
            for seq, rep, dst, pattern, offered, factors in POINTS
        ]
    )
    store.close()
    return path


def _table(page) -> tuple[list[str], list[list[str]]]:
    page.locator("#repetitions tbody tr").first.wait_for(timeout=30_000)
    head = page.locator("#repetitions thead th").all_inner_texts()
    rows = [row.locator("td").all_inner_texts() for row in page.locator("#repetitions tbody tr").all()]
    return head, rows


@pytest.mark.skipif(SKIP is not None, reason=SKIP or "")
def test_the_series_table_names_the_pattern_and_offered_rate_where_they_vary(
    db: Path, tmp_path: Path
) -> None:
    errors: list[str] = []
    with serving(create_app(str(db))) as url, chromium_page(tmp_path / "chromium-profile") as page:
        page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.goto(f"{url}/campaigns/s1/series?measurement=tcp&src=a&dst=b&metric=throughput_bps")
        head, rows = _table(page)
        assert head[:4] == ["repetition", "attempt", "pattern", "offered"]
        assert "treatment" not in head  # no factors: no column
        assert [r[2:4] for r in rows] == [
            ["alone", "1.00 Mbit/s"],
            ["alone", "10.0 Mbit/s"],
            ["with-bg", "1.00 Mbit/s"],
        ]
        page.screenshot(path=str(tmp_path / "series-a-b.png"), full_page=True)

        page.goto(f"{url}/campaigns/s1/series?measurement=tcp&src=a&dst=c&metric=throughput_bps")
        head, rows = _table(page)
        assert head == [
            "repetition", "attempt", "started (UTC)", "status", "value", "samples", "sample min",
            "sample mean", "sample max",
        ]  # fmt: skip
        assert [r[0] for r in rows] == ["1", "2"]
    assert errors == []


@pytest.mark.skipif(SKIP is not None, reason=SKIP or "")
def test_the_chart_time_axis_is_utc_like_the_table_whatever_the_browser_zone(
    db: Path, tmp_path: Path
) -> None:
    # the x axis was labelled in the browser's local time beside a table in UTC, and its two-line date
    # labels ran into each other (quickstart efd6a61d: '11/29/26 4:52am4:53am')
    start_s = 1_700_000_000  # tests/helpers/dashboard_stores.START_NS, in s
    utc = datetime.fromtimestamp(start_s, tz=UTC)
    with (
        serving(create_app(str(db))) as url,
        chromium_page(tmp_path / "chromium-profile", timezone_id="America/New_York") as page,
    ):
        page.goto(f"{url}/campaigns/s1/series?measurement=tcp&src=a&dst=c&metric=throughput_bps")
        page.locator("#repetitions tbody tr").first.wait_for(timeout=30_000)
        assert page.evaluate("new Date(0).getTimezoneOffset()") != 0  # the browser is not in UTC
        labels = page.evaluate(
            "([x, span]) => timeLabels({scales: {x: {min: x - span, max: x}}}, [x])", [start_s, 60]
        )
        assert labels == [utc.strftime("%H:%M:%S")]
        labels = page.evaluate(
            "([x, span]) => timeLabels({scales: {x: {min: x - span, max: x}}}, [x])", [start_s, 3 * 86400]
        )
        assert labels == [utc.strftime("%m-%d %H:%M")]
        assert page.evaluate("chart.axes[0].label") == "started (UTC)"
