"""`vnetbench dashboard` as a service: SIGTERM (what systemd's stop sends) and SIGINT (Ctrl-C) are a
clean stop with exit 0, as the monitor's. uvicorn caught each, shut down, then raised it again under the
handler it found: SIGTERM killed the process (exit 143 in a shell, -15 from Popen), which a service
manager reads as a failure; SIGINT became a KeyboardInterrupt, exit 130."""

from __future__ import annotations

import signal
import socket
from pathlib import Path

import httpx
import pytest

from tests.helpers.dashboard_server import start_dashboard_cli
from tests.helpers.dashboard_stores import dashboard_store, record


@pytest.fixture
def db(tmp_path: Path) -> Path:
    path = tmp_path / "d.db"
    store = dashboard_store(path)
    store.save_measurements([record("d1", 0, 1, "tcp", "a", "b", {"throughput_bps": 90e6})])
    store.close()
    return path


def _refused(port: int) -> bool:
    with socket.socket() as s:
        return s.connect_ex(("127.0.0.1", port)) != 0


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_a_signal_stops_the_dashboard_with_exit_0(db: Path, tmp_path: Path, sig: signal.Signals) -> None:
    log = tmp_path / "stderr"
    proc, port = start_dashboard_cli(db, log)
    try:
        # it serves the store (so the signal stops a running server, not one still starting)
        answer = httpx.get(f"http://127.0.0.1:{port}/api/campaigns", timeout=10)
        assert [c["id"] for c in answer.json()["campaigns"]] == ["d1"]
        proc.send_signal(sig)
        assert proc.wait(30) == 0, log.read_text()
        assert _refused(port)  # the port is released
        assert "Traceback" not in log.read_text()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(30)
