"""The live dashboard: a FastAPI app over a store that other processes may be writing.

Pages are HTML shells whose script polls the JSON API every few seconds, so progress and the grid fill
in without a reload. Answers per campaign are cached until the campaign's newest measurement row changes
(rows are only ever added, and a step's rows with their summaries land in one transaction), so twenty
browsers watching one campaign cost one set of queries per stored step.
"""

from __future__ import annotations

import json
import math
import secrets
import threading
import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from fastapi import FastAPI, HTTPException, Query, Request, Response
from fastapi.responses import HTMLResponse, JSONResponse
from fastapi.staticfiles import StaticFiles
from jinja2 import Environment, PackageLoader, select_autoescape

from vnetbench import __version__
from vnetbench.dashboard import views
from vnetbench.store import live
from vnetbench.store.db import Store

HERE = Path(__file__).parent
POLL_MS = 2000  # how often the pages ask for news
VERSION_CHECK_S = 0.25  # how stale an answer may be before the store is asked whether it changed
TOKEN_COOKIE = "vnetbench_token"
CACHE_ENTRIES = 512


class _Cache:
    """Answers keyed by request, each valid for one version of its campaign (its newest row, its state).

    When the version moves on, the first request computes the new answer; requests arriving while it
    does get the previous answer at once (one computation behind, a fraction of a second, for pages that
    poll every few seconds) instead of queueing behind it, and twenty clients cost one computation.
    """

    def __init__(self) -> None:
        self.enabled = True  # off only to measure the queries themselves (benchmarks/dashboard)
        self._lock = threading.Lock()
        self._entries: OrderedDict[tuple[Any, ...], tuple[Any, Any]] = OrderedDict()
        self._computing: dict[tuple[Any, ...], threading.Lock] = {}

    def _entry(self, key: tuple[Any, ...]) -> tuple[Any, Any] | None:
        with self._lock:
            entry = self._entries.get(key)
            if entry is not None:
                self._entries.move_to_end(key)
            return entry

    def get(self, key: tuple[Any, ...], version: Any, make: Callable[[], Any]) -> Any:
        if not self.enabled:
            return make()
        entry = self._entry(key)
        if entry is not None and entry[0] == version:
            return entry[1]
        with self._lock:
            key_lock = self._computing.setdefault(key, threading.Lock())
        if not key_lock.acquire(blocking=False):  # another request is computing this answer
            if entry is not None:
                return entry[1]  # the previous version's, while the new one is made
            key_lock.acquire()  # nothing to show yet: wait for it
        try:
            entry = self._entry(key)
            if entry is not None and entry[0] == version:
                return entry[1]  # made while this request waited
            value = make()
            with self._lock:
                self._entries[key] = (version, value)
                self._entries.move_to_end(key)
                while len(self._entries) > CACHE_ENTRIES:
                    evicted, _ = self._entries.popitem(last=False)
                    self._computing.pop(evicted, None)
            return value
        finally:
            key_lock.release()


class Dashboard:
    """The app's state: the store, parsed specs, the answer cache and where the reports are."""

    def __init__(self, store_url: str, report_dir: Path | None) -> None:
        self.store = Store(store_url)
        self.engine = self.store.engine
        self.reports = views.ReportIndex(report_dir) if report_dir is not None else None
        self.cache = _Cache()
        self._specs: dict[str, views.CampaignSpec] = {}
        self._specs_lock = threading.Lock()
        self._versions: dict[str, tuple[float, tuple[Any, ...]]] = {}

    def version(self, campaign_id: str) -> tuple[Any, ...]:
        """(newest row id, state, report URL) of a campaign, read at most every VERSION_CHECK_S: under
        many clients most requests then answer from the cache without a query."""
        now = time.monotonic()
        known = self._versions.get(campaign_id)
        if known is not None and now - known[0] < VERSION_CHECK_S:
            return known[1]
        found = live.campaign_version(self.engine, campaign_id)
        if found is None:
            raise self.not_found(campaign_id)
        version = (*found, self.report_urls().get(campaign_id))
        self._versions[campaign_id] = (now, version)
        return version

    def spec(self, campaign_id: str) -> views.CampaignSpec:
        with self._specs_lock:
            known = self._specs.get(campaign_id)
        if known is None:
            row = live.campaign_spec_row(self.engine, campaign_id)
            if row is None:
                raise self.not_found(campaign_id)
            known = views.read_campaign_spec(row)
            with self._specs_lock:
                self._specs[campaign_id] = known
        return known

    def not_found(self, campaign_id: str) -> HTTPException:
        return HTTPException(404, f"no campaign '{campaign_id}' in the store {self.store.location}")

    def campaign_row(self, campaign_id: str) -> dict[str, Any]:
        rows = live.campaign_rows(self.engine, campaign_id)
        if not rows:
            raise self.not_found(campaign_id)
        return rows[0]

    def report_urls(self) -> dict[str, str]:
        return self.reports.urls() if self.reports is not None else {}

    def campaigns(self) -> bytes:
        """Every campaign with its progress as JSON; recomputed when a row is added anywhere in the store
        or a campaign is added or changes state."""
        rows = live.campaign_rows(self.engine)
        reports = self.report_urls()
        states = tuple((r["id"], r["status"]) for r in rows)
        runs = live.latest_monitor_runs(self.engine)  # a run's progress moves without a new row
        version = (
            live.newest_measurement_id(self.engine),
            states,
            tuple(sorted(reports.items())),
            tuple(sorted(runs.items())),
        )

        def make() -> bytes:
            progress = live.campaign_progress(self.engine)
            return _json(
                {
                    "campaigns": [
                        views.campaign_json(
                            r,
                            self.spec(r["id"]),
                            progress.get(r["id"]),
                            reports.get(r["id"]),
                            runs.get(r["id"]),
                        )
                        for r in rows
                    ]
                }
            )

        return self.cache.get(("campaigns",), version, make)

    def campaign(self, campaign_id: str) -> bytes:
        """Progress and grids as JSON; recomputed only when a row is added or the campaign's state changes."""
        monitor_run = live.latest_monitor_runs(self.engine, [campaign_id]).get(campaign_id)
        version = (*self.version(campaign_id), monitor_run)  # a run's progress moves without a new row

        def make() -> bytes:
            row = self.campaign_row(campaign_id)
            report_url = self.report_urls().get(campaign_id)
            spec = self.spec(campaign_id)
            progress = live.campaign_progress(self.engine, [campaign_id]).get(campaign_id)
            cells = live.grid_cells(self.engine, campaign_id, spec.metrics, spec.background_patterns)
            # a sweep's cell is its newest complete sweep's knee: its points, not only its newest row
            sweeps = live.sweep_rows(self.engine, campaign_id, spec.sweeps, spec.background_patterns)
            # what a contended point's step offered with its other flows: their capacity is shared
            loads = live.step_loads(self.engine, campaign_id, {r.step_key for r in sweeps if r.contended})
            stored = live.stored_metrics(self.engine, campaign_id)
            return _json(
                {
                    "campaign": views.campaign_json(row, spec, progress, report_url, monitor_run),
                    "grids": views.grid_json(cells, spec, sweeps, loads),
                    "spec_problem": spec.problem,
                    "threshold_problems": views.threshold_problems(spec, stored),
                    "without_grid": views.without_grid(spec, stored),
                }
            )

        return self.cache.get(("campaign", campaign_id), version, make)

    def series(
        self, campaign_id: str, measurement: str, src: str, dst: str, metric: str, contended: bool
    ) -> bytes:
        """A pair's series as JSON; recomputed only when a row is added to the campaign."""
        version = self.version(campaign_id)

        def make() -> bytes:
            spec = self.spec(campaign_id)
            sample_metric = views.sample_metric_of(metric)
            points = live.pair_series(
                self.engine,
                campaign_id,
                measurement,
                src,
                dst,
                metric,
                sample_metric,
                contended,
                spec.background_patterns,
            )
            th = spec.thresholds_of(measurement).get(metric)
            head = {"campaign_id": campaign_id, "measurement": measurement, "src": src, "dst": dst}
            return _json(
                {
                    **head,
                    "contended": contended,
                    **views.series_json(points, th, metric, sample_metric, spec.sweeps.get(measurement)),
                }
            )

        key = ("series", campaign_id, measurement, src, dst, metric, contended)
        return self.cache.get(key, version, make)


def _json(payload: dict[str, Any]) -> bytes:
    # encoded once per answer version: cached answers skip FastAPI's per-request encoding
    try:
        return json.dumps(payload, separators=(",", ":"), allow_nan=False).encode()
    except ValueError:  # a NaN or infinity in the store: null, which JSON.parse accepts
        return json.dumps(_finite(payload), separators=(",", ":"), allow_nan=False).encode()


def _finite(value: Any) -> Any:
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_finite(v) for v in value]
    return value


def _json_response(body: bytes) -> Response:
    return Response(body, media_type="application/json")


def _token_guard(
    token: str, public_paths: set[str]
) -> Callable[[Request, Callable[[Request], Awaitable[Response]]], Awaitable[Response]]:
    """Every request needs the token: `Authorization: Bearer T`, `?token=T` (as a scraper or a first visit
    sends it; the answer sets a cookie), or that cookie (what the pages' own requests carry)."""

    async def guard(request: Request, call_next: Callable[[Request], Awaitable[Response]]) -> Response:
        if request.url.path in public_paths:
            return await call_next(request)
        header = request.headers.get("authorization", "")
        bearer = header[7:].strip() if header.lower().startswith("bearer ") else ""
        in_query = request.query_params.get("token", "")
        if any(o and secrets.compare_digest(o.encode(), token.encode()) for o in (bearer, in_query)):
            response = await call_next(request)
            if in_query:
                response.set_cookie(TOKEN_COOKIE, token, httponly=True, samesite="strict")
            return response
        cookie = request.cookies.get(TOKEN_COOKIE, "")
        if cookie and secrets.compare_digest(cookie.encode(), token.encode()):
            return await call_next(request)
        return JSONResponse(
            {"detail": "this dashboard needs its token: open /?token=T or send 'Authorization: Bearer T'"},
            status_code=401,
            headers={"WWW-Authenticate": "Bearer"},
        )

    return guard


def create_app(store_url: str, *, token: str | None = None, report_dir: Path | None = None) -> FastAPI:
    """The dashboard over the store at `store_url` (a SQLite path or a SQLAlchemy URL).

    With `token`, every request must carry it (see _token_guard); paths added to
    `app.state.public_paths` (e.g. a health check) are exempt. `report_dir` is served under /report/,
    and each campaign whose report.json is there (or in a sub-directory) links to it.
    """
    # no /docs or /redoc: their pages load scripts from a CDN, and these machines have no internet
    app = FastAPI(title="vnetbench dashboard", version=__version__, docs_url=None, redoc_url=None)
    dash = Dashboard(store_url, report_dir)
    app.state.dashboard = dash
    app.state.public_paths = set()
    app.state.has_alerts = False  # `monitor` and `dashboard` add /api/alerts (monitor/web.py) and set this
    if token:
        app.middleware("http")(_token_guard(token, app.state.public_paths))
    app.mount("/static", StaticFiles(directory=HERE / "static"), name="static")
    if report_dir is not None:
        app.mount("/report", StaticFiles(directory=report_dir, html=True, check_dir=False), name="report")

    # ------------------------------------------------------------ JSON API

    @app.get("/api/campaigns")
    def api_campaigns() -> Response:
        return _json_response(dash.campaigns())

    @app.get("/api/campaigns/{campaign_id}")
    def api_campaign(campaign_id: str) -> Response:
        return _json_response(dash.campaign(campaign_id))

    @app.get("/api/campaigns/{campaign_id}/series")
    def api_series(
        campaign_id: str,
        measurement: str = Query(description="measurement name from the spec"),
        src: str = Query(description="source node"),
        dst: str = Query(description="destination node"),
        metric: str = Query(description="summary metric, e.g. throughput_bps"),
        contended: bool = Query(False, description="flows measured while others ran"),
    ) -> Response:
        return _json_response(dash.series(campaign_id, measurement, src, dst, metric, contended))

    _add_pages(app, dash, report_dir)
    return app


def _add_pages(app: FastAPI, dash: Dashboard, report_dir: Path | None) -> None:
    """The HTML pages: shells whose script polls the JSON API."""
    pages = Environment(
        loader=PackageLoader("vnetbench.dashboard", "templates"), autoescape=select_autoescape()
    )

    def page(name: str, **context: Any) -> HTMLResponse:
        html = pages.get_template(name).render(poll_ms=POLL_MS, version=__version__, **context)
        return HTMLResponse(html)

    @app.get("/", response_class=HTMLResponse)
    def campaigns_page() -> HTMLResponse:
        return page("campaigns.html", has_report=report_dir is not None)

    def campaign_row_or_page(campaign_id: str) -> dict[str, Any] | HTMLResponse:
        """The campaign, or a page (404) saying there is none: a browser shows it, not raw JSON."""
        try:
            return dash.campaign_row(campaign_id)
        except HTTPException as exc:
            response = page("notfound.html", detail=exc.detail)
            response.status_code = exc.status_code
            return response

    @app.get("/campaigns/{campaign_id}", response_class=HTMLResponse)
    def campaign_page(campaign_id: str) -> HTMLResponse:
        row = campaign_row_or_page(campaign_id)
        if isinstance(row, HTMLResponse):
            return row
        return page("campaign.html", campaign=row, has_alerts=app.state.has_alerts)

    @app.get("/campaigns/{campaign_id}/series", response_class=HTMLResponse)
    def series_page(
        campaign_id: str,
        measurement: str,
        src: str,
        dst: str,
        metric: str,
        contended: bool = False,
        pattern: str = "",
    ) -> HTMLResponse:
        row = campaign_row_or_page(campaign_id)
        if isinstance(row, HTMLResponse):
            return row
        return page(
            "series.html",
            campaign=row,
            measurement=measurement,
            src=src,
            dst=dst,
            metric=metric,
            contended=contended,
            pattern=pattern,  # the grid cell's pattern: its lines are shown first
        )
