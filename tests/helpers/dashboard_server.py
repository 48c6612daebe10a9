"""Serve a dashboard app with a real uvicorn server on 127.0.0.1 (a free port) for the length of a test."""

from __future__ import annotations

import re
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import uvicorn
from fastapi import FastAPI

from tests.helpers.timing import wait_until


@contextmanager
def serving(app: FastAPI, start_timeout_s: float = 30.0) -> Iterator[str]:
    """Yields the base URL; the server is stopped (and its thread joined) afterwards."""
    server = uvicorn.Server(
        uvicorn.Config(app, host="127.0.0.1", port=0, log_level="warning", lifespan="off")
    )
    thread = threading.Thread(target=server.run, name="dashboard-under-test", daemon=True)
    thread.start()
    deadline = time.monotonic() + start_timeout_s
    while not server.started:
        assert thread.is_alive(), "the dashboard server stopped while starting"
        assert time.monotonic() < deadline, f"the dashboard server did not start within {start_timeout_s} s"
        time.sleep(0.02)
    port = server.servers[0].sockets[0].getsockname()[1]
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(30)


def start_dashboard_cli(db: Path, log: Path) -> tuple[subprocess.Popen[bytes], int]:
    """`vnetbench dashboard --db DB --port 0` in its own process, its stderr in `log`; returns the
    process and the port its banner names, once it prints it (the caller stops the process)."""
    with log.open("w") as stderr:
        proc = subprocess.Popen(
            [sys.executable, "-m", "vnetbench.cli", "dashboard", "--db", str(db), "--port", "0"],
            stderr=stderr,
            env={"PATH": "/usr/bin:/bin", "COLUMNS": "200", "PYTHONPATH": ":".join(sys.path)},
        )
    try:
        banner = wait_until(
            log.read_text, lambda text: "(Ctrl-C stops it)" in text or proc.poll() is not None, 60
        )
        match = re.search(r"on http://127\.0\.0\.1:(\d+)/ ", banner)
        assert match and match.group(1) != "0", banner
    except BaseException:
        proc.kill()
        proc.wait(30)
        raise
    return proc, int(match.group(1))
