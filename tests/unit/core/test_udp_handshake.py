"""The UDP handshake watchdog's decisions (run/handshake.py) and the /proc readers it is fed from
(providers/local/procs.py), on real sockets in this process's namespace."""

from __future__ import annotations

import os
import socket

from vnetbench.drivers.base import HandshakeWatch
from vnetbench.providers.local import procs
from vnetbench.run.handshake import HandshakeClock, Verdict

WATCH = HandshakeWatch(port=5201, streams=2, grace_s=5.0)


def test_the_clock_starts_when_the_client_socket_appears() -> None:
    clock = HandshakeClock(WATCH)
    # the control connection is still being set up: however long, no verdict (iperf3 bounds that)
    assert clock.update(0.0, connected=False, received=100) is Verdict.WAIT
    assert clock.update(30.0, connected=False, received=100) is Verdict.WAIT
    assert clock.update(31.0, connected=True, received=100) is Verdict.WAIT  # the clock starts
    assert clock.update(35.9, connected=True, received=102) is Verdict.WAIT  # two handshakes, no data
    assert clock.update(36.0, connected=True, received=102) is Verdict.LOST  # 5 s after the socket
    assert "in the 5.0 s" in clock.why() and "(2 datagram(s) arrived" in clock.why()


def test_data_at_the_server_means_the_handshake_worked() -> None:
    clock = HandshakeClock(WATCH)
    clock.update(0.0, connected=True, received=7)
    assert clock.update(0.1, connected=True, received=9) is Verdict.WAIT  # the streams' handshakes
    assert clock.update(0.2, connected=True, received=10) is Verdict.FLOWING  # more than 2: data


def test_the_readers_see_a_connected_udp_socket_and_its_datagrams() -> None:
    me = os.getpid()
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as server:
        server.bind(("127.0.0.1", 0))
        port = server.getsockname()[1]
        assert procs.udp_connected_to(me, port) is False
        before = procs.udp_datagrams_in(me)
        assert before is not None
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as client:
            client.connect(("127.0.0.1", port))
            assert procs.udp_connected_to(me, port) is True
            client.send(b"x")
            server.settimeout(5)
            assert server.recv(16) == b"x"
        # counted when read; other tests of this namespace can only add to it
        assert procs.udp_datagrams_in(me) >= before + 1
    assert procs.listening(me, port, "udp") is False  # closed: the shared table reader sees it gone
