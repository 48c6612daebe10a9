"""The dashboard's JSON API and pages over a real uvicorn server on 127.0.0.1 and a real SQLite store:
answers, the token guard, the static report, 404s that name the store, and the CLI's refusal to expose
the dashboard beyond loopback without a token."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from tests.helpers.cli import cli_quick
from tests.helpers.dashboard_server import serving, start_dashboard_cli
from tests.helpers.dashboard_stores import dashboard_store, record
from tests.helpers.timing import wait_until
from vnetbench.dashboard import create_app
from vnetbench.store.db import Store

POLL_DEADLINE_S = 10.0  # the dashboard re-checks the store every 0.25 s; wide for a loaded machine


@pytest.fixture
def db(tmp_path: Path) -> Path:
    path = tmp_path / "d.db"
    store = dashboard_store(path)
    store.save_measurements([record("d1", 0, 1, "tcp", "a", "b", {"throughput_bps": 90e6})])
    store.close()
    return path


def test_campaigns_grid_and_series_answers(db: Path) -> None:
    with serving(create_app(str(db))) as url:
        campaigns = httpx.get(f"{url}/api/campaigns").json()["campaigns"]
        assert [(c["id"], c["status"], c["steps_done"], c["steps_total"]) for c in campaigns] == [
            ("d1", "running", 1, 18)
        ]
        grids = httpx.get(f"{url}/api/campaigns/d1").json()["grids"]
        assert [(g["measurement"], g["metric"], len(g["cells"])) for g in grids] == [
            ("tcp", "throughput_bps", 1)
        ]
        params = {"measurement": "tcp", "src": "a", "dst": "b", "metric": "throughput_bps"}
        series = httpx.get(f"{url}/api/campaigns/d1/series", params=params).json()
        assert [p["value"] for p in series["points"]] == [90e6]
        # another process writes the next result: the answers have it within a poll (no restart)
        store = Store(db)
        store.save_measurements([record("d1", 1, 2, "tcp", "a", "b", {"throughput_bps": 80e6})])
        store.close()
        series = f"{url}/api/campaigns/d1/series"
        series_values = wait_until(
            lambda: [p["value"] for p in httpx.get(series, params=params).json()["points"]],
            lambda v: v == [90e6, 80e6],
            POLL_DEADLINE_S,
        )
        assert series_values == [90e6, 80e6]
        grid_value = wait_until(
            lambda: httpx.get(f"{url}/api/campaigns/d1").json()["grids"][0]["cells"][0]["value"],
            lambda v: v == 80e6,
            POLL_DEADLINE_S,
        )
        assert grid_value == 80e6
        for page in (
            "/",
            "/campaigns/d1",
            "/campaigns/d1/series?measurement=tcp&src=a&dst=b&metric=throughput_bps",
        ):
            answer = httpx.get(url + page)
            assert answer.status_code == 200 and "/static/dashboard.js" in answer.text, page
        assert httpx.get(f"{url}/static/vendor/uPlot.iife.min.js").status_code == 200


def test_unknown_campaign_is_a_404_naming_the_store(db: Path) -> None:
    with serving(create_app(str(db))) as url:
        answer = httpx.get(f"{url}/api/campaigns/nope")
        assert answer.status_code == 404
        assert "no campaign 'nope'" in answer.json()["detail"] and str(db) in answer.json()["detail"]
        # the pages answer a browser with a page (it got raw JSON), linking back to the campaigns
        params = {"measurement": "tcp", "src": "a", "dst": "b", "metric": "throughput_bps"}
        for page in (
            httpx.get(f"{url}/campaigns/nope"),
            httpx.get(f"{url}/campaigns/nope/series", params=params),
        ):
            assert page.status_code == 404 and page.headers["content-type"].startswith("text/html")
            assert "no campaign &#39;nope&#39; in the store" in page.text and 'href="/"' in page.text
        missing = httpx.get(f"{url}/api/campaigns/d1/series", params={"measurement": "tcp"})
        assert missing.status_code == 422  # src, dst and metric are required


def test_token_guard(db: Path) -> None:
    with serving(create_app(str(db), token="s3cret")) as url:
        assert httpx.get(f"{url}/api/campaigns").status_code == 401
        assert httpx.get(f"{url}/static/dashboard.js").status_code == 401
        assert httpx.get(f"{url}/api/campaigns", headers={"Authorization": "Bearer wrong"}).status_code == 401
        assert (
            httpx.get(f"{url}/api/campaigns", headers={"Authorization": "Bearer s3cret"}).status_code == 200
        )
        # a browser opens /?token=T once; the answer sets a cookie that its page's own requests carry
        with httpx.Client(base_url=url) as browser:
            assert browser.get("/campaigns/d1?token=s3cret").status_code == 200
            assert browser.get("/api/campaigns").status_code == 200  # by the cookie alone
            assert browser.get("/static/dashboard.js").status_code == 200
        # a scraper's ?token= on an API path (the monitor's /metrics takes it that way too)
        assert httpx.get(f"{url}/api/campaigns", params={"token": "s3cret"}).status_code == 200


def test_report_dir_is_served_and_linked(db: Path, tmp_path: Path) -> None:
    reports = tmp_path / "reports"
    (reports / "dash-d1").mkdir(parents=True)
    (reports / "dash-d1" / "index.html").write_text("<h1>the static report</h1>")
    (reports / "dash-d1" / "report.json").write_text(json.dumps({"campaign": "d1"}))
    with serving(create_app(str(db), report_dir=reports)) as url:
        (campaign,) = httpx.get(f"{url}/api/campaigns").json()["campaigns"]
        assert campaign["report_url"] == "/report/dash-d1/"
        assert "the static report" in httpx.get(url + campaign["report_url"]).text


@pytest.mark.parametrize("host", ["0.0.0.0", "198.18.0.1", "::"])
def test_cli_refuses_a_non_loopback_host_without_a_token(db: Path, host: str) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "vnetbench.cli", "dashboard", "--db", str(db), "--host", host],
        capture_output=True,
        text=True,
        timeout=60,
        env={"PATH": "/usr/bin:/bin", "COLUMNS": "200"},
    )
    assert done.returncode == 2
    assert f"--host {host}" in done.stderr and "--token" in done.stderr


def test_a_nan_in_the_store_is_null_in_the_answer(db: Path) -> None:
    store = Store(db)
    store.save_measurements([record("d1", 1, 2, "tcp", "a", "b", {"throughput_bps": float("nan")})])
    store.close()
    with serving(create_app(str(db))) as url:
        answer = httpx.get(f"{url}/api/campaigns/d1")
        assert answer.status_code == 200
        (cell,) = answer.json()["grids"][0]["cells"]
        assert cell["value"] is None and cell["level"] == "none"


def _dashboard_cli(*args: str) -> subprocess.CompletedProcess[str]:
    return cli_quick("dashboard", *args, timeout=60)


def test_cli_refuses_a_store_path_with_nothing_there_and_creates_nothing(tmp_path: Path) -> None:
    missing = tmp_path / "typo.db"
    done = _dashboard_cli("--db", str(missing), "--port", "0")
    assert done.returncode == 2
    assert f"--db {missing}: no store there" in done.stderr and "Traceback" not in done.stderr
    assert list(tmp_path.iterdir()) == []  # no empty store (nor its -wal/-shm) left behind


def test_cli_port_in_use_is_a_usage_error_naming_the_port(db: Path) -> None:
    with socket.create_server(("127.0.0.1", 0)) as taken:
        port = taken.getsockname()[1]
        done = _dashboard_cli("--db", str(db), "--port", str(port))
    assert done.returncode == 2, done.stderr
    assert f"--port {port}: cannot listen there" in done.stderr and "choose another --port" in done.stderr
    assert "Traceback" not in done.stderr and "ERROR:" not in done.stderr
    assert "dashboard of" not in done.stderr  # no banner announcing a URL that is not served


def test_cli_port_0_serves_on_a_free_port_and_prints_it(db: Path, tmp_path: Path) -> None:
    proc, port = start_dashboard_cli(db, tmp_path / "stderr")  # asserts the banner names a port, not 0
    try:
        answer = httpx.get(f"http://127.0.0.1:{port}/api/campaigns", timeout=10)
        assert [c["id"] for c in answer.json()["campaigns"]] == ["d1"]
    finally:
        proc.terminate()
        proc.wait(30)


def test_a_monitored_campaign_shows_its_newest_runs_progress(db: Path, tmp_path: Path) -> None:
    from tests.helpers.browser import chromium_page, missing_browser
    from vnetbench.store.monitoring import MonitorStore

    store = Store(db)
    mstore = MonitorStore(store)
    mstore.start_run("d1", 1, 0, 18)
    mstore.step_done("d1", 1, 18, 18, 0)
    mstore.finish_run("d1", 1, "ok")
    mstore.start_run("d1", 2, 0, 18)
    try:
        with serving(create_app(str(db))) as url:
            (campaign,) = httpx.get(f"{url}/api/campaigns").json()["campaigns"]
            assert campaign["monitor_run"] == {
                "run": 2,
                "status": "running",
                "steps_done": 0,
                "steps_total": 18,
            }
            # the pair is the newest run's (it was every run's steps stored against one run's 18)
            assert (campaign["steps_done"], campaign["steps_total"], campaign["runs"]) == (0, 18, 2)
            assert campaign["steps_stored"] == 1  # the one measurement row of the fixture
            # the monitor records a step as done without a new measurement row: the answers follow it
            mstore.step_done("d1", 2, 5, 5, 0)
            for path in ("/api/campaigns", "/api/campaigns/d1"):
                seen = wait_until(
                    lambda path=path: httpx.get(url + path).json(),
                    lambda a: "5" in str((a.get("campaigns") or [a.get("campaign")])[0]["monitor_run"]),
                    POLL_DEADLINE_S,
                )
                shown = (seen.get("campaigns") or [seen.get("campaign")])[0]["monitor_run"]
                assert (shown["run"], shown["steps_done"], shown["steps_total"]) == (2, 5, 18), path
            if missing_browser() is None:  # the bar is run 2's 5 of 18 steps, not a full bar of every run's
                with chromium_page(tmp_path / "chromium") as page:
                    errors: list[str] = []  # e.g. a request for /favicon.ico that answers 404
                    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
                    page.goto(f"{url}/campaigns/d1")
                    progress = page.locator("#progress .progress")
                    progress.wait_for(timeout=30_000)
                    assert progress.get_attribute("data-run") == "2"
                    assert page.locator("#progress .progress-text").inner_text().startswith("run 2: 5 / 18")
                    width = page.locator("#progress .progress .fill").evaluate("e => e.style.width")
                    assert width == f"{100 * 5 / 18:.1f}%"
                    page.get_by_text("updated").wait_for(timeout=30_000)  # a poll has been answered
                    assert errors == []
    finally:
        store.close()


def test_a_threshold_on_a_metric_no_result_stores_is_named(tmp_path: Path) -> None:
    """A typo in `thresholds:` (rtt_man_ns) coloured nothing and said nothing: the campaign's answer
    names it with the closest stored metric once its measurement has results; a correct spec says
    nothing, and neither does a measurement without results (tcp here)."""
    from tests.helpers.dashboard_stores import SPEC
    from tests.helpers.stores import campaign_store

    typo = tmp_path / "typo.db"
    store = campaign_store(
        typo,
        "d2",
        "running",
        spec_text=SPEC.replace(
            "}}\npatterns", "}, rtt_man_ns: {warning: 1.5, critical: 3, of: baseline}}\npatterns"
        ),
    )
    store.save_measurements([record("d2", 0, 1, "rtt", "a", "b", {"loss_ratio": 0.0, "rtt_mean_ns": 1e5})])
    store.close()
    with serving(create_app(str(typo))) as url:
        answer = httpx.get(f"{url}/api/campaigns/d2").json()
    assert answer["threshold_problems"] == [
        "thresholds: no result of rtt stores a metric 'rtt_man_ns', so its threshold colours nothing; "
        "did you mean rtt_mean_ns?"
    ]
    fine = tmp_path / "fine.db"
    store = campaign_store(fine, "d3", "running", spec_text=SPEC)
    store.save_measurements([record("d3", 0, 1, "rtt", "a", "b", {"loss_ratio": 0.0, "rtt_mean_ns": 1e5})])
    store.close()
    with serving(create_app(str(fine))) as url:
        assert httpx.get(f"{url}/api/campaigns/d3").json()["threshold_problems"] == []
