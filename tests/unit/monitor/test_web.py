"""The monitor's HTTP endpoints over a real uvicorn server on 127.0.0.1: the token guard, /health,
/api/alerts, and the glue that adds them to the dashboard's app when `vnetbench.dashboard` exists."""

from __future__ import annotations

import json
import sys
import types
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi import FastAPI

from tests.helpers.dashboard_server import start_dashboard_cli
from tests.helpers.http import http_get
from tests.helpers.stores import campaign_store
from vnetbench.monitor.web import WebServer, add_alerts, build_app
from vnetbench.store.db import Store
from vnetbench.store.monitoring import MonitorStore
from vnetbench.store.records import now_utc_ns


@pytest.fixture
def db(tmp_path: Path) -> str:
    path = str(tmp_path / "s.db")
    store = campaign_store(path, status="monitoring")
    MonitorStore(store).register("c1", "name: t", "tests", pid=0)
    store.close()
    return path


@pytest.fixture
def serve() -> Iterator:
    servers: list[WebServer] = []

    def start(app: FastAPI) -> str:
        server = WebServer(app, "127.0.0.1", 0)
        servers.append(server)
        return server.start()

    yield start
    for server in servers:
        server.stop()


def test_without_the_dashboard_the_monitor_serves_its_own_routes_behind_the_token(db: str, serve) -> None:
    base = serve(build_app(db, token="s3cret"))
    for path in ("/health", "/metrics", "/api/alerts"):
        assert http_get(base + path)[0] == 401
        assert http_get(base + path, {"Authorization": "Bearer wrong"})[0] == 401
        assert http_get(base + path, {"Authorization": "Bearer s3cret"})[0] == 200
    assert http_get(base + "/health?token=s3cret")[0] == 200
    assert http_get(base + "/health", {"Cookie": "vnetbench_token=s3cret"})[0] == 200
    _, body = http_get(base + "/health?token=s3cret")
    health = json.loads(body)
    assert health["status"] == "ok" and [c["campaign_id"] for c in health["campaigns"]] == ["c1"]
    assert health["campaigns"][0]["state"] == "waiting" and health["alerts_firing"] == []
    assert json.loads(http_get(base + "/api/alerts?token=s3cret")[1]) == []


def test_the_dashboards_app_gets_the_monitor_routes(db: str, serve, monkeypatch: pytest.MonkeyPatch) -> None:
    """A stand-in for the dashboard package (until it is on main): create_app's app keeps its own routes
    and gains /metrics, /health and /api/alerts."""
    calls = []

    def create_app(store_url: str, *, token: str | None = None, report_dir: Path | None = None) -> FastAPI:
        calls.append((store_url, token, report_dir))
        app = FastAPI()
        app.get("/")(lambda: {"page": "dashboard"})
        return app

    monkeypatch.setitem(sys.modules, "vnetbench.dashboard", types.SimpleNamespace(create_app=create_app))
    base = serve(build_app(db, report_dir=Path("/tmp/reports")))
    assert calls == [(db, None, Path("/tmp/reports"))]
    assert json.loads(http_get(base + "/")[1]) == {"page": "dashboard"}
    assert http_get(base + "/health")[0] == 200
    assert "vnetbench_monitor_runs" in http_get(base + "/metrics")[1]


def test_a_campaign_page_asks_for_alerts_only_where_the_monitor_serves_them(db: str, serve) -> None:
    from vnetbench.dashboard import create_app

    # create_app alone has no /api/alerts (`vnetbench dashboard` adds it): its page must not ask (a 404
    # in the browser's console)
    plain, monitor = serve(create_app(db)), serve(build_app(db))
    assert 'data-alerts="0"' in http_get(plain + "/campaigns/c1")[1]
    assert 'data-alerts="1"' in http_get(monitor + "/campaigns/c1")[1]
    assert http_get(monitor + "/api/alerts?campaign=c1")[0] == 200


def _open_slow_episode(db: str) -> None:
    store = Store(db)
    MonitorStore(store).open_episode(
        campaign_id="c1", rule="slow", severity="warning", condition="throughput_bps < 200.0 Mbit/s for 2 runs",
        measurement="tcp", src="a", dst="b", metric="throughput_bps", threshold=2e8, opened_run=2,
        value=94_403_935.8,
    )  # fmt: skip
    store.close()


def test_the_dashboard_command_lists_the_alerts_a_monitor_stored(db: str, tmp_path: Path) -> None:
    """`vnetbench dashboard` apart from the monitor (e.g. on a shared PostgreSQL store) listed no alert
    episodes: only the monitor's own server had /api/alerts. Now the command serves it from the store;
    the monitor's /metrics and /health stay the monitor's."""
    _open_slow_episode(db)
    proc, port = start_dashboard_cli(Path(db), tmp_path / "stderr")
    try:
        base = f"http://127.0.0.1:{port}"
        status, body = http_get(base + "/api/alerts?campaign=c1")
        assert status == 200, body
        (episode,) = json.loads(body)
        assert (episode["rule"], episode["state"], episode["detail_text"]) == (
            "slow",
            "firing",
            "(value 94.40 Mbit/s in run 2)",
        )
        assert json.loads(http_get(base + "/api/alerts?campaign=other")[1]) == []
        assert 'data-alerts="1"' in http_get(base + "/campaigns/c1")[1]
        assert [http_get(base + p)[0] for p in ("/metrics", "/health")] == [404, 404]
    finally:
        proc.terminate()
        proc.wait(30)


def test_the_dashboards_alerts_are_behind_its_token(db: str, serve) -> None:
    from vnetbench.dashboard import create_app

    base = serve(add_alerts(create_app(db, token="s3cret"), db))
    assert http_get(base + "/api/alerts")[0] == 401
    assert http_get(base + "/api/alerts", {"Authorization": "Bearer s3cret"})[0] == 200


def test_an_alert_episode_carries_its_value_in_the_metrics_unit(db: str, serve, tmp_path: Path) -> None:
    # the dashboard's alert list showed the rule and the pair but not the value that opened it; then
    # it built "(value … in run …)" itself beside the monitor's own line: now the server words it once
    from tests.helpers.browser import chromium_page, missing_browser

    _open_slow_episode(db)
    base = serve(build_app(db))
    (episode,) = json.loads(http_get(base + "/api/alerts")[1])
    assert (episode["value_text"], episode["opened_run"], episode["state"]) == ("94.40 Mbit/s", 2, "firing")
    # the monitor's line ends with these words too (test_alerts_and_metrics checks that line)
    assert episode["detail_text"] == "(value 94.40 Mbit/s in run 2)"
    if missing_browser() is not None:
        pytest.skip(missing_browser())
    with chromium_page(tmp_path / "chromium") as page:
        page.goto(f"{base}/campaigns/c1")
        shown = page.locator("#alerts .alert-firing")
        shown.wait_for(timeout=30_000)
        assert page.locator("#alerts .alert-detail").inner_text() == episode["detail_text"]
        assert shown.inner_text().endswith(
            "slow: throughput_bps < 200.0 Mbit/s for 2 runs — tcp a → b (value 94.40 Mbit/s in run 2)"
        ), shown.inner_text()


def test_health_shows_each_monitor_s_heartbeat_age_and_a_stale_one_as_stale(tmp_path: Path, serve) -> None:
    """A campaign whose monitor on another host died showed as `waiting`, for ever, without the age of
    its heartbeat. The ages expected are the ones this test writes (its own clock)."""
    from vnetbench.store.monitoring import HEARTBEAT_STALE_S

    path = str(tmp_path / "s.db")
    store = campaign_store(path, campaign_id="alive", status="monitoring")
    campaign_store(path, campaign_id="dead", status="monitoring").close()
    mstore = MonitorStore(store)
    beats = {"alive": now_utc_ns() - 5 * 10**9, "dead": now_utc_ns() - int((HEARTBEAT_STALE_S + 30) * 1e9)}
    for cid, beat in beats.items():
        mstore.register(cid, "name: t", "tests", pid=4242)
        mstore.set_state(cid, state="waiting", hostname="vnb-test-elsewhere", updated_utc_ns=beat)
    store.close()
    base = serve(build_app(path))
    asked = now_utc_ns()
    code, body = http_get(base + "/health")
    answered = now_utc_ns()
    health = json.loads(body)
    assert (code, health["status"]) == (503, "failing")  # a campaign no monitor runs is no health
    shown = {c["campaign_id"]: c for c in health["campaigns"]}
    assert {cid: c["state"] for cid, c in shown.items()} == {"alive": "waiting", "dead": "stale"}
    for cid, beat in beats.items():
        monitor = shown[cid]["monitor"]
        assert (monitor["pid"], monitor["hostname"]) == (4242, "vnb-test-elsewhere")
        assert monitor["stale_after_s"] == HEARTBEAT_STALE_S
        # now minus the heartbeat written, now read between the request and its answer; rounded to 0.1 s
        low, high = (asked - beat) / 1e9 - 0.1, (answered - beat) / 1e9 + 0.1
        assert low <= monitor["heartbeat_age_s"] <= high, (monitor, low, high)
