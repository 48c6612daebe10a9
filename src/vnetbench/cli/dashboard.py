"""`vnetbench dashboard`: serve the live dashboard of a store (vnetbench.dashboard) with uvicorn."""

from __future__ import annotations

import errno
import signal
import socket
from pathlib import Path
from typing import Annotated, Any

import typer

from vnetbench.cli.common import (
    TOKEN_ENV,
    DbOption,
    err,
    fail,
    is_loopback,
    open_store,
    reports_dir_problem,
    sqlite_path,
    unresolved_host,
)

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8765


STOP_SIGNALS = (signal.SIGTERM, signal.SIGINT)


class _Stopped(BaseException):
    """SIGTERM or SIGINT arrived: a clean stop (exit 0). A BaseException, so no `except Exception` on
    the way turns it into an error."""


def _stop(_signum: int, _frame: object) -> None:
    raise _Stopped


def serve_until_stopped(server: Any, sock: socket.socket) -> None:
    """Run uvicorn until SIGTERM or Ctrl-C (SIGINT), each a clean stop, as the monitor's. uvicorn catches
    both, shuts down, then raises the signal again under the handler it found: the default ones ended
    the process by SIGTERM (exit 143, a failure to a service manager) or KeyboardInterrupt (exit 130);
    this one ends the run quietly."""
    previous = {sig: signal.signal(sig, _stop) for sig in STOP_SIGNALS}
    try:
        server.run(sockets=[sock])
    except _Stopped:
        pass
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def listen(host: str, port: int, other_fix: str = "") -> socket.socket:
    """A listening socket on host:port, bound here so that a port in use is a usage error (exit 2)
    before anything is printed, not a message from the server after the banner. `other_fix` is added
    to the fix a port in use names (monitor: ", or --no-dashboard")."""
    unresolved = unresolved_host(host)
    if unresolved:
        raise fail(unresolved)
    try:
        family, _, _, _, address = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0]
        return socket.create_server(address[:2], family=family, backlog=2048)
    except (socket.gaierror, OSError) as exc:
        if isinstance(exc, socket.gaierror) or exc.errno == errno.EADDRNOTAVAIL:  # the host, not the port
            raise fail(
                f"--host {host}: not an address of this machine ({exc.strerror or exc}); give one of its "
                "addresses, e.g. the default 127.0.0.1"
            ) from None
        raise fail(
            f"--host {host} --port {port}: cannot listen there ({exc.strerror or exc}); "
            f"choose another --port (another dashboard or monitor may be serving on {port}){other_fix}"
        ) from None


def dashboard_command(
    db: DbOption = "vnetbench.db",
    report: Annotated[
        Path | None,
        typer.Option(help="directory of static reports to serve under /report/ (e.g. reports)"),
    ] = None,
    host: Annotated[
        str, typer.Option(help="address to listen on; anything but loopback needs --token")
    ] = DEFAULT_HOST,
    port: Annotated[
        int, typer.Option(help="TCP port (0: any free port; the URL printed says which)")
    ] = DEFAULT_PORT,
    token: Annotated[
        str | None,
        typer.Option(
            envvar=TOKEN_ENV,
            help="every request must carry it (open /?token=T once in a browser)",
        ),
    ] = None,
) -> None:
    """Serve the live dashboard: campaigns with progress, the pair grid coloured by thresholds, each pair's
    series, the static reports, a monitor's alerts. Reads a store that `run`, `resume` or `monitor` may
    be writing.

    SIGTERM (a service manager's stop) and Ctrl-C stop it cleanly: exit 0."""
    # imported when the command runs: FastAPI and uvicorn cost the other commands nothing
    import uvicorn

    from vnetbench.dashboard import create_app
    from vnetbench.monitor.web import add_alerts

    if not is_loopback(host) and not token:
        raise fail(
            f"--host {host}: serving beyond this machine needs a token; add --token T "
            "(or set VNETBENCH_TOKEN), or keep the default --host 127.0.0.1"
        )
    if not 0 <= port < 65536:
        raise fail(f"--port {port}: use 1-65535, or 0 for any free port (default {DEFAULT_PORT})")
    path = sqlite_path(db)
    if path is not None and not path.exists():  # a reader: a mistyped --db is not a new empty store
        raise fail(
            f"--db {db}: no store there; give the store that `vnetbench run` or `vnetbench monitor` "
            "writes (--db, or VNETBENCH_DB; the default is vnetbench.db in this directory)"
        )
    problem = reports_dir_problem("--report", report)
    if problem:
        raise fail(problem)
    open_store(db)  # a bad URL or a file that is no store: the error every command gives, with its fix
    try:
        app = add_alerts(create_app(db, token=token, report_dir=report), db)
    except Exception as exc:  # a bad URL or an unreadable file is the user's to fix
        raise fail(f"--db {db}: cannot open the store: {exc}") from None
    sock = listen(host, port)
    port = sock.getsockname()[1]  # the one chosen for --port 0
    shown = f"[{host}]" if ":" in host else host
    err.print(
        f"dashboard of {db} on http://{shown}:{port}/"
        + ("?token=…" if token else "")
        + "  (Ctrl-C stops it)",
        highlight=False,
        soft_wrap=True,
    )
    serve_until_stopped(uvicorn.Server(uvicorn.Config(app, host=host, port=port, log_level="warning")), sock)
