"""OVS start-up waits for its daemons to listen, not for their socket files to appear.

A Unix socket's file exists from the server's bind(); a client connecting before its listen()
is refused. A busy CI run hit that window: `ovs-vsctl init` failed with "database connection
failed (Connection refused)" right after db.sock appeared.
"""

from __future__ import annotations

import os
import socket
import sys
from pathlib import Path

from tests.helpers.timing import wait_until
from vnetbench.providers.local import procs
from vnetbench.providers.local.ovs import OvsInstance, accepts_connections

# A daemon with the window made wide: bind, note it, wait, note the listen, listen, stay.
SLOW_LISTENER = """
import socket, sys, time
path, marks = sys.argv[1], sys.argv[2]
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.bind(path)
open(marks, "a").write("bound\\n")
time.sleep(0.5)
open(marks, "a").write("listening\\n")
s.listen(4)
time.sleep(30)
"""


def test_accepts_connections_only_once_the_server_listens(tmp_path: Path) -> None:
    path = str(tmp_path / "db.sock")
    assert accepts_connections(path) is False  # no file yet
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as server:
        server.bind(path)
        assert os.path.exists(path)
        assert accepts_connections(path) is False  # bound, not listening: refused
        server.listen(1)
        assert accepts_connections(path) is True


def test_start_wait_returns_after_the_daemons_listen_not_at_bind(tmp_path: Path) -> None:
    path, marks = str(tmp_path / "db.sock"), tmp_path / "marks"
    ns_fd = os.open("/proc/self/ns/net", os.O_RDONLY)
    try:
        proc = procs.spawn("test", [sys.executable, "-c", SLOW_LISTENER, path, str(marks)], ns_fd, None)
    finally:
        os.close(ns_fd)
    try:
        assert wait_until(lambda: os.path.exists(path), bool, 30, 0.005), (
            "the listener never bound its socket"
        )
        OvsInstance("test-ns", str(tmp_path))._wait_for(path, proc)
        assert marks.read_text().splitlines() == ["bound", "listening"]
        assert accepts_connections(path) is True
    finally:
        proc.kill()
