"""`vnetbench monitor`: run campaigns on their schedule for days, like perfSONAR's pScheduler.

One spec runs in this process. Several specs run in one child process each (this process serves the
web endpoints and forwards SIGTERM); their throughput tests still never overlap (monitor/locks.py).
"""

from __future__ import annotations

import ctypes
import datetime as dt
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Annotated, Any

import typer

from vnetbench.cli.common import (
    TOKEN_ENV,
    SetOption,
    err,
    fail,
    is_loopback,
    open_store,
    parse_sets,
    reports_dir_problem,
    spec_errors,
    unresolved_host,
)
from vnetbench.cli.dashboard import listen
from vnetbench.monitor.schedule import Limits
from vnetbench.spec.loader import LoadedSpec, SpecInvalid, load_spec
from vnetbench.spec.monitoring import parse_period_ns
from vnetbench.store.monitoring import MonitorStore
from vnetbench.store.records import now_utc_ns

PR_SET_PDEATHSIG = 1
# exit code of a monitor stopped by an unexpected error: the systemd unit restarts it (1, 2 and 4 it does not)
CRASHED = 3


def parse_until(value: str | None) -> dt.datetime | None:
    """An ISO-8601 time (UTC if no zone) or a duration from now (PT24H, 24h)."""
    if value is None:
        return None
    try:
        when = dt.datetime.fromisoformat(value)
        when = when if when.tzinfo else when.replace(tzinfo=dt.UTC)
    except ValueError:
        try:
            when = dt.datetime.fromtimestamp((now_utc_ns() + parse_period_ns(value)) / 1e9, dt.UTC)
        except ValueError:
            raise fail(
                f"--until {value!r}: expected a time like 2026-12-01T00:00:00Z or a duration like PT24H "
                "or 24h"
            ) from None
    if when.timestamp() * 1e9 <= now_utc_ns():  # started a campaign, measured nothing, exit 0
        raise fail(
            f"--until {value!r}: {when.isoformat()} has passed, so no run would start; give a later time "
            "or a duration from now such as PT24H"
        )
    return when


def check_webhook(url: str | None) -> None:
    """--webhook is an http(s) URL: anything else failed only when the first alert fired, days later."""
    from urllib.parse import urlsplit

    if url is not None and (urlsplit(url).scheme not in ("http", "https") or not urlsplit(url).netloc):
        raise fail(
            f"--webhook {url!r}: not an http:// or https:// URL; give e.g. https://hooks.example.org/x"
        )


SpecsArg = Annotated[list[Path], typer.Argument(help="campaign YAML files, each with a monitor: block")]
StoreOption = Annotated[
    str,
    typer.Option(
        "--db", envvar="VNETBENCH_DB", help="store: a SQLite file or a URL (postgresql://user@host/db)"
    ),
]
MaxRunsOption = Annotated[
    int | None,
    typer.Option(
        "--max-runs",
        min=1,
        help="the last run: stop once the campaign has this many runs, counted across restarts "
        "(overrides the spec)",
    ),
]
UntilOption = Annotated[
    str | None,
    typer.Option(help="start no run after this time (2026-12-01T00:00:00Z) or after this long (PT24H, 24h)"),
]
WebhookOption = Annotated[
    str | None,
    typer.Option(envvar="VNETBENCH_WEBHOOK", help="POST alert episodes as JSON to this URL (and only there)"),
]
DashboardOption = Annotated[
    bool,
    typer.Option(
        "--dashboard/--no-dashboard", help="serve the dashboard, /metrics, /health and /api/alerts over HTTP"
    ),
]
HostOption = Annotated[str, typer.Option(help="address to serve on; anything but loopback needs --token")]
PortOption = Annotated[int, typer.Option(min=0, max=65535, help="port to serve on (0: any free port)")]
TokenOption = Annotated[
    str | None, typer.Option(envvar=TOKEN_ENV, help="require this token on every HTTP request")
]
ReportsOption = Annotated[
    Path | None,
    typer.Option(
        "--reports",
        "--report",
        help="directory of static reports the dashboard links to (as dashboard --report)",
    ),
]
NewCampaignOption = Annotated[
    bool,
    typer.Option(
        "--new-campaign", help="start a new campaign instead of continuing the one of the same name"
    ),
]
CampaignIdOption = Annotated[str | None, typer.Option("--campaign-id", hidden=True)]  # a child's campaign


def monitor_command(
    specs: SpecsArg,
    db: StoreOption = "vnetbench.db",
    max_runs: MaxRunsOption = None,
    until: UntilOption = None,
    webhook: WebhookOption = None,
    dashboard: DashboardOption = True,
    host: HostOption = "127.0.0.1",
    port: PortOption = 8765,
    token: TokenOption = None,
    reports: ReportsOption = None,
    new_campaign: NewCampaignOption = False,
    set_: SetOption = None,
    campaign_id: CampaignIdOption = None,
) -> None:
    """Run campaigns on their schedule for days (docs/monitoring.md).

    Each spec's `monitor:` block says when: `repeat: PT10M` (ISO 8601) or `cron: "*/10 * * * *"`, a random
    `slip`, `max_runs`, `until`.

    Each spec is ONE campaign in the store (run n = repetition n), continued across restarts: a monitor
    killed and started again finishes the interrupted run and measures nothing twice.

    `--set PATH=VALUE` overrides a field of every spec, as for run; the stored spec records it, and a
    restart must give the same measured fields (a different --set is a changed spec).

    Throughput tests never overlap on a node or SSH host (RTT may). Alert rules (`alerts:`) are checked
    after every run; episodes are stored and POSTed to --webhook.

    Exit: 0 done or stopped (SIGTERM, or Ctrl-C / SIGINT), 1 done with an alert firing or a failed last
    run, 2 usage error, 3 stopped by an unexpected error (start it again to continue), 4 another monitor
    took the campaign over (this one's heartbeat was stale): it stopped without writing to it.
    """
    if dashboard and not is_loopback(host) and not token:
        raise fail(
            f"--host {host} exposes the dashboard beyond this machine; give --token (or VNETBENCH_TOKEN)"
        )
    until_at = parse_until(until)
    check_webhook(webhook)
    problem = (reports_dir_problem("--reports", reports) or unresolved_host(host)) if dashboard else None
    if problem:  # before anything is created or started
        raise fail(problem)
    overrides = parse_sets(set_)
    loaded = _load_all(specs, overrides)  # before the store: a bad spec leaves no new, empty store behind
    store = open_store(db, create=True)
    prepared = _prepare(loaded, store, new_campaign, campaign_id)
    ids = [m.campaign_id for m in prepared]
    sock = _listen(store, host, port, ids) if dashboard else None  # before any child starts
    children: list[subprocess.Popen[bytes]] = []
    if len(prepared) > 1:
        children = [
            _spawn(spec, m.campaign_id, db, max_runs, until_at, webhook, set_ or [])
            for spec, m in zip(specs, prepared, strict=True)
        ]
    server = None
    if dashboard:
        server = _serve(store, db, sock, host, port, token, reports, ids)
    try:
        code = _supervise(children) if children else _run_one(store, prepared[0], max_runs, until_at, webhook)
    except Exception as exc:  # a bug or a failure it cannot handle: not the 1 of "done, alert firing"
        err.print_exception()
        err.print(
            f"error: the monitor stopped on an unexpected error ({type(exc).__name__}: {exc}); starting it "
            "again continues the campaign from the store",
            highlight=False,
            soft_wrap=True,
        )
        code = CRASHED
    finally:
        if server is not None:
            server.stop()
    raise typer.Exit(code)


def _load_all(specs: list[Path], overrides: dict[str, Any]) -> list[LoadedSpec]:
    """Load every spec with the --set overrides and check it (usage errors exit 2); nothing is opened
    or written."""
    from vnetbench.monitor.service import check_monitorable  # the run machinery: start-up time

    loaded = [_load(spec, overrides) for spec in specs]
    names = [s.campaign.name for s in loaded]
    if len(set(names)) != len(names):
        raise fail(f"two specs name the same campaign: {names}; each monitored campaign needs its own name")
    for spec in loaded:
        try:
            check_monitorable(spec)
        except SpecInvalid as exc:
            raise spec_errors(exc) from None
    return loaded


def _prepare(loaded: list[LoadedSpec], store: Any, new_campaign: bool, campaign_id: str | None) -> list[Any]:
    """Find or create each spec's monitored campaign (usage errors exit 2)."""
    from vnetbench.monitor.service import MonitorError, prepare  # the run machinery: start-up time

    try:
        prepared = [prepare(s, store, new_campaign=new_campaign, campaign_id=campaign_id) for s in loaded]
    except SpecInvalid as exc:
        raise spec_errors(exc) from None
    except MonitorError as exc:
        raise fail(str(exc)) from None
    for monitored in prepared:
        if monitored.took_over:
            err.print(f"monitor: {monitored.took_over}", highlight=False, soft_wrap=True)
    return prepared


def _load(spec: Path, overrides: dict[str, Any]) -> LoadedSpec:
    try:
        return load_spec(spec, overrides=overrides or None)
    except SpecInvalid as exc:
        raise spec_errors(exc) from None


def _listen(store: Any, host: str, port: int, ids: list[str]) -> Any:
    """The socket the web endpoints will serve on: a port in use is one line naming --port (exit 2)."""
    try:
        return listen(host, port, ", or --no-dashboard")
    except typer.Exit:
        for cid in ids:  # claimed by prepare(): not "waiting" under a process that is gone
            MonitorStore(store).set_state(
                cid, state="stopped", pid=None, message=f"not started: cannot listen on {host}:{port}"
            )
        raise


def _serve(
    store: Any,
    db: str,
    sock: Any,
    host: str,
    port: int,
    token: str | None,
    reports: Path | None,
    ids: list[str],
) -> Any:
    from vnetbench.monitor.web import WebServer, build_app  # fastapi, uvicorn: start-up time

    app = build_app(db, token=token, report_dir=reports, campaign_ids=ids)
    server = WebServer(app, host, port, sock)
    try:
        url = server.start()
    except OSError as exc:
        for cid in ids:  # claimed by prepare(): not "waiting" under a process that is gone
            MonitorStore(store).set_state(cid, state="stopped", pid=None, message=f"not started: {exc}")
        raise fail(f"{exc}; choose another --port, or --no-dashboard") from None
    for cid in ids:
        MonitorStore(store).set_state(cid, url=url)
    err.print(f"serving {url}  (dashboard, /metrics, /health, /api/alerts)", highlight=False)
    return server


def _run_one(
    store: Any, monitored: Any, max_runs: int | None, until: dt.datetime | None, webhook: str | None
) -> int:
    from vnetbench.monitor.service import Monitor  # the run machinery: start-up time

    schedule = monitored.loaded.campaign.monitor
    limits = Limits.of(schedule, max_runs, until)
    verb = "continuing" if monitored.resumed else "started"
    err.print(
        f"monitor: {verb} campaign [bold]{monitored.name}[/bold] id [bold]{monitored.campaign_id}[/bold] "
        f"in {store.location}",
        highlight=False,
    )
    outcome = Monitor(store, monitored, limits, webhook, err).run()
    return outcome.code


def _set_parent_death_signal() -> None:
    """In the child, before exec: SIGTERM when the parent monitor dies, even by SIGKILL."""
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)


def _spawn(
    spec: Path,
    campaign_id: str,
    db: str,
    max_runs: int | None,
    until: dt.datetime | None,
    webhook: str | None,
    sets: list[str],
) -> subprocess.Popen[bytes]:
    argv = [sys.executable, "-m", "vnetbench.cli", "monitor", str(spec), "--db", db, "--no-dashboard"]
    argv += ["--campaign-id", campaign_id]
    for item in sets:  # the child loads the spec as the parent did: its stored text has them
        argv += ["--set", item]
    if max_runs is not None:
        argv += ["--max-runs", str(max_runs)]
    if until is not None:
        argv += ["--until", until.isoformat()]
    if webhook:
        argv += ["--webhook", webhook]
    return subprocess.Popen(argv, preexec_fn=_set_parent_death_signal)  # before the web thread starts


def _supervise(children: list[subprocess.Popen[bytes]]) -> int:
    """Wait for every child; SIGTERM/SIGINT are passed on to them (each stops its campaign cleanly)."""

    def forward(signum: int, _frame: Any) -> None:
        for child in children:
            if child.poll() is None:
                os.kill(child.pid, signum)

    previous = {sig: signal.signal(sig, forward) for sig in (signal.SIGTERM, signal.SIGINT)}
    try:
        codes = [child.wait() for child in children]
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    # a child killed by a signal (negative code) did not stop cleanly: restarted as a crash is. A crash
    # outranks every other code, so the unit restarts the parent: the highest code would let a child
    # taken over (4) hide another one's crash (3); the restarted monitor of the taken-over campaign
    # then finds its new owner alive and exits 2
    if any(c < 0 or c == CRASHED for c in codes):
        return CRASHED
    return max(codes, default=0)
