"""Serve a dashboard app with a real uvicorn server on 127.0.0.1 (a free port) for the length of a test."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

import uvicorn
from fastapi import FastAPI


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
