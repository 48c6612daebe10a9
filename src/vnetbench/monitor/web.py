"""The monitor's HTTP side: /metrics, /health and /api/alerts, added to the dashboard's app
(vnetbench.dashboard.create_app, when that package is installed) and served by uvicorn in a thread of
the monitor process. Binds 127.0.0.1 unless told otherwise; a token, when given, is required on every
request (`Authorization: Bearer TOKEN` or `?token=TOKEN`)."""

from __future__ import annotations

import datetime as dt
import functools
import secrets
import socket
import threading
import time
from pathlib import Path
from typing import Any

from fastapi import APIRouter, Depends, FastAPI, HTTPException, Request
from fastapi.responses import JSONResponse, Response

from vnetbench.monitor.alerts import value_detail
from vnetbench.monitor.metrics import StoreCollector
from vnetbench.spec.units import format_metric
from vnetbench.store.db import Store
from vnetbench.store.monitoring import HEARTBEAT_STALE_S, MonitorStore
from vnetbench.store.records import now_utc_ns

TOKEN_COOKIE = "vnetbench_token"  # the dashboard's pages carry the token in this cookie
HEALTHY = {"ok", "warning"}  # /health answers 200 for these, 503 otherwise


def token_check(token: str | None) -> Any:
    def check(request: Request) -> None:
        if token is None:
            return
        header = request.headers.get("authorization", "")
        offered = [
            header[7:].strip() if header.lower().startswith("bearer ") else "",
            request.query_params.get("token", ""),
            request.cookies.get(TOKEN_COOKIE, ""),
        ]
        if not any(o and secrets.compare_digest(o.encode(), token.encode()) for o in offered):
            raise HTTPException(
                401, "a token is required (Authorization: Bearer TOKEN)", {"WWW-Authenticate": "Bearer"}
            )

    return check


def _iso(ns: int | None) -> str | None:
    return None if ns is None else dt.datetime.fromtimestamp(ns / 1e9, dt.UTC).isoformat(timespec="seconds")


def _monitor_of(m: dict[str, Any], now_ns: int) -> tuple[str, dict[str, Any]]:
    """The campaign's state as /health shows it, and its monitor: pid, host, heartbeat and its age. A
    waiting or running campaign whose heartbeat is older than HEARTBEAT_STALE_S is `stale`: its
    monitor (on another host, a shared store) died or was cut off, and no other has taken it over."""
    age_s = round((now_ns - int(m["updated_utc_ns"])) / 1e9, 1)
    stale = m["state"] in ("waiting", "running") and age_s > HEARTBEAT_STALE_S
    return "stale" if stale else m["state"], {
        "pid": m["pid"],
        "hostname": m["hostname"],
        "heartbeat_utc": _iso(m["updated_utc_ns"]),
        "heartbeat_age_s": max(age_s, 0.0),  # a heartbeat from the future (clocks apart) is fresh
        "stale_after_s": HEARTBEAT_STALE_S,
    }


def health(mstore: MonitorStore, campaign_ids: list[str] | None = None) -> dict[str, Any]:
    """ok | warning (a warning alert is firing) | critical (a critical one is) | failing (the latest
    run of a campaign failed, its monitor stopped on an error, or its monitor's heartbeat is stale)."""
    monitored = [
        m for m in mstore.all_monitored() if campaign_ids is None or m["campaign_id"] in campaign_ids
    ]
    ids = {m["campaign_id"] for m in monitored}
    episodes = [e for e in mstore.open_episodes() if e["campaign_id"] in ids]
    counts = mstore.run_counts()
    campaigns = []
    failing = False
    now_ns = now_utc_ns()
    for m in monitored:
        last = mstore.last_run(m["campaign_id"])
        state, monitor = _monitor_of(m, now_ns)
        failing |= state in ("failed", "stale") or (last is not None and last["status"] == "failed")
        campaigns.append(
            {
                "campaign_id": m["campaign_id"],
                "name": m["name"],
                "state": state,
                "monitor": monitor,
                "message": m["message"],
                "runs": counts.get(m["campaign_id"], {}),
                "last_run": None
                if last is None
                else {
                    "run": last["run"],
                    "status": last["status"],
                    "steps_done": last["steps_done"],
                    "steps_total": last["steps_total"],
                    "started_utc": _iso(last["started_utc_ns"]),
                    "finished_utc": _iso(last["finished_utc_ns"]),
                },
                "next_run_utc": _iso(m["next_run_utc_ns"]),
                "alerts_firing": sum(e["campaign_id"] == m["campaign_id"] for e in episodes),
            }
        )
    severities = {e["severity"] for e in episodes}
    status = (
        "critical"
        if "critical" in severities
        else "failing"
        if failing
        else "warning"
        if severities
        else "ok"
    )
    return {"status": status, "campaigns": campaigns, "alerts_firing": [_episode(e) for e in episodes]}


def _episode(e: dict[str, Any]) -> dict[str, Any]:
    out = {k: v for k, v in e.items() if not k.endswith("_utc_ns")}
    out.update({k.removesuffix("_ns"): _iso(v) for k, v in e.items() if k.endswith("_utc_ns")})
    out["state"] = "firing" if e["closed_run"] is None else "resolved"
    # the value that opened it, in the metric's unit, and the text the dashboard shows: the monitor's
    # own line's words (alerts.value_detail), made here once so the two cannot drift apart
    out["value_text"] = format_metric(e["metric"], e["value"]) if e.get("value") is not None else None
    out["detail_text"] = value_detail(e["metric"], e.get("value"), e["opened_run"])
    return out


def monitor_router(store_url: str, token: str | None, campaign_ids: list[str] | None = None) -> APIRouter:
    """The routes the monitor adds to the dashboard app (guarded by `token` when one is given)."""
    from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, generate_latest

    mstore = MonitorStore(Store(store_url))
    registry = CollectorRegistry(auto_describe=False)
    registry.register(StoreCollector(mstore))
    router = APIRouter(dependencies=[Depends(token_check(token))] if token else [])

    @router.get("/metrics", include_in_schema=False)
    def metrics() -> Response:
        return Response(generate_latest(registry), media_type=CONTENT_TYPE_LATEST)

    @router.get("/health")
    def get_health() -> JSONResponse:
        body = health(mstore, campaign_ids)
        return JSONResponse(body, status_code=200 if body["status"] in HEALTHY else 503)

    router.include_router(alerts_router(mstore))
    return router


def alerts_router(mstore: MonitorStore) -> APIRouter:
    """/api/alerts: the alert episodes the store holds, whichever monitor opened them."""
    router = APIRouter()

    @router.get("/api/alerts")
    def alerts(campaign: str | None = None, limit: int = 200) -> list[dict[str, Any]]:
        """Alert episodes, newest first (open and resolved)."""
        return [_episode(e) for e in mstore.episodes(campaign, limit=max(1, min(limit, 5000)))]

    return router


def add_alerts(app: FastAPI, store_url: str) -> FastAPI:
    """The dashboard's app with /api/alerts, and its campaign pages listing the episodes: what
    `vnetbench dashboard` serves, so a dashboard apart from the monitor (on a store the monitor writes,
    e.g. a shared PostgreSQL) shows its alerts too. /metrics and /health stay the monitor's own."""
    app.include_router(alerts_router(MonitorStore(Store(store_url))))
    app.state.has_alerts = True
    return app


def build_app(
    store_url: str,
    *,
    token: str | None = None,
    report_dir: Path | None = None,
    campaign_ids: list[str] | None = None,
) -> FastAPI:
    """The dashboard's app (if the dashboard package is installed) with the monitor's routes added.

    create_app(store_url, token=..., report_dir=...) guards every path of its app with the token
    (header, ?token= or its cookie), the monitor's routes included; without the dashboard, the monitor's
    own small app guards its routes the same way.
    """
    try:
        from vnetbench.dashboard import create_app  # type: ignore[import-not-found, unused-ignore]
    except ImportError:
        app = FastAPI(title="vnetbench monitor", docs_url=None, redoc_url=None)
        app.include_router(monitor_router(store_url, token, campaign_ids))
    else:
        app = create_app(store_url, token=token, report_dir=report_dir)
        app.include_router(monitor_router(store_url, None, campaign_ids))
        app.state.has_alerts = True  # the campaign pages list the alert episodes
    return app


class WebServer:
    """uvicorn in a daemon thread (signals stay with the monitor's main thread)."""

    def __init__(self, app: FastAPI, host: str, port: int, sock: socket.socket | None = None) -> None:
        """`sock`: a socket already listening on host:port (bound by the caller, so that a port in use is
        refused before anything is created); else uvicorn binds host:port itself."""
        import uvicorn

        self.host = host
        self.server = uvicorn.Server(uvicorn.Config(app, host=host, port=port, log_level="warning"))
        run = functools.partial(self.server.run, sockets=None if sock is None else [sock])
        self.thread = threading.Thread(target=run, name="vnb-web", daemon=True)

    def start(self, timeout_s: float = 30.0) -> str:
        """Start serving; returns the URL (with the port chosen when port 0 was asked)."""
        self.thread.start()
        deadline = time.monotonic() + timeout_s
        while not self.server.started:
            if not self.thread.is_alive() or time.monotonic() > deadline:
                raise OSError(
                    f"cannot serve on {self.host}:{self.server.config.port} (see the message above)"
                )
            time.sleep(0.05)
        port = self.server.servers[0].sockets[0].getsockname()[1]
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{port}"

    def stop(self) -> None:
        self.server.should_exit = True
        self.thread.join(15)
