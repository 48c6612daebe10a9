"""`vnetbench dashboard`: serve the live dashboard of a store (vnetbench.dashboard) with uvicorn."""

from __future__ import annotations

import ipaddress
from pathlib import Path
from typing import Annotated

import typer

from vnetbench.cli.common import DbOption, err, fail

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8765


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def dashboard_command(
    db: DbOption = "vnetbench.db",
    report: Annotated[
        Path | None,
        typer.Option(help="directory of static reports to serve under /report/ (e.g. reports)"),
    ] = None,
    host: Annotated[
        str, typer.Option(help="address to listen on; anything but loopback needs --token")
    ] = DEFAULT_HOST,
    port: Annotated[int, typer.Option(help="TCP port")] = DEFAULT_PORT,
    token: Annotated[
        str | None,
        typer.Option(
            envvar="VNETBENCH_DASHBOARD_TOKEN",
            help="every request must carry it (open /?token=T once in a browser)",
        ),
    ] = None,
) -> None:
    """Serve the live dashboard: campaigns with progress, the pair grid coloured by thresholds, each pair's
    series, the static reports. Reads a store that `run`, `resume` or `monitor` may be writing."""
    # imported when the command runs: FastAPI and uvicorn cost the other commands nothing
    import uvicorn

    from vnetbench.dashboard import create_app

    if not is_loopback(host) and not token:
        raise fail(
            f"--host {host}: serving beyond this machine needs a token; add --token T "
            "(or set VNETBENCH_DASHBOARD_TOKEN), or keep the default --host 127.0.0.1"
        )
    if not 0 < port < 65536:
        raise fail(f"--port {port}: use 1-65535 (default {DEFAULT_PORT})")
    if report is not None and not report.is_dir():
        raise fail(
            f"--report {report}: no such directory; write a report first "
            "(vnetbench report --out DIR) or leave --report out"
        )
    try:
        app = create_app(db, token=token, report_dir=report)
    except Exception as exc:  # a bad URL or an unreadable file is the user's to fix
        raise fail(f"--db {db}: cannot open the store: {exc}") from None
    shown = f"[{host}]" if ":" in host else host
    err.print(
        f"dashboard of {db} on http://{shown}:{port}/"
        + ("?token=…" if token else "")
        + "  (Ctrl-C stops it)",
        highlight=False,
    )
    uvicorn.run(app, host=host, port=port, log_level="warning")
