"""The UDP handshake watchdog's decisions (run/handshake.py) and the /proc readers it is fed from
(providers/local/procs.py), on real sockets in this process's namespace."""

from __future__ import annotations

import os
import socket

import pytest

from vnetbench.drivers.base import HandshakeWatch
from vnetbench.kinds import PathFacts
from vnetbench.layout import build_layout
from vnetbench.plan import path_facts
from vnetbench.providers.local import procs
from vnetbench.run.handshake import HandshakeClock, Verdict, late_start
from vnetbench.spec import parse_spec

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
    # timed from the socket to the last poll without data (0.1 s): the data came after it
    assert clock.data_after_s == pytest.approx(0.1)


def test_a_poll_the_runner_was_late_for_does_not_make_the_start_late() -> None:
    clock = HandshakeClock(WATCH)
    clock.update(0.0, connected=True, received=0)
    assert clock.update(0.05, connected=True, received=0) is Verdict.WAIT
    # the runner stalled for 0.6 s: the data may have come right after the poll at 0.05 s
    assert clock.update(0.65, connected=True, received=50) is Verdict.FLOWING
    assert clock.data_after_s == pytest.approx(0.05)
    first = HandshakeClock(WATCH)  # data already at the first poll after the socket: no delay seen
    first.update(1.0, connected=True, received=0)
    first.update(1.05, connected=True, received=9)
    assert first.data_after_s == 0.0


# The fidelity benchmark's lossy link: 20 mbit, 10 ms each way. Its queue by hand (layout/build.py's
# rule): max(BDP 2.5 MB/s x 20 ms = 50 000, min(125 000, 50 ms at rate = 125 000), 4 frames) = 125 000.
LOSSY = """
name: late
topology:
  nodes: [{name: a}, {name: b}]
  links: [{endpoints: [a, b], rate: 20mbit, delay: 10ms, loss: 0.2}]
measurements: [{name: u, kind: udp, duration: 5s, rate: 10mbit}]
patterns: [{kind: pairs, pairs: [[a, b]], measurements: [u]}]
"""


def test_the_path_facts_give_the_round_trip_and_the_shortest_queue() -> None:
    campaign = parse_spec(LOSSY).campaign
    path = path_facts(build_layout(campaign, "c0ffee00"), "a", "b")
    assert path.rtt_s == pytest.approx(0.020)
    assert path.queue_bytes == 125_000
    assert path.rate_bps == 20_000_000


def test_a_start_late_enough_to_overflow_the_queue_is_no_result() -> None:
    # allowance 2 x 20 ms + 0.15 s = 0.19 s; at 10 Mbit/s (1.25 MB/s) the queue holds 0.1 s of catch-up
    path, rate, payload = PathFacts(20_000_000, rtt_s=0.020, queue_bytes=125_000), 10e6, 1460
    assert late_start(0.15, path, rate, payload) is None  # on time
    assert late_start(0.27, path, rate, payload) is None  # 0.08 s late: 100 KB, the queue holds it
    why = late_start(0.50, path, rate, payload)  # 0.31 s late: 387.5 KB, 265 datagrams
    assert why is not None and "0.50 s after" in why and "0.31 s later" in why
    assert "~265 datagrams" in why and "125 KB queue" in why
    assert late_start(0.50, PathFacts(None, rtt_s=0.020), rate, payload) is None  # unshaped: no drops
    assert late_start(0.50, PathFacts(20_000_000, rtt_s=0.2, queue_bytes=125_000), rate, payload) is None
    # (a 200 ms round trip allows 0.55 s)


def test_a_burst_whose_drops_fall_inside_omit_is_left_alone() -> None:
    # the queue drains in 125 KB x 8 / 20 Mbit/s = 0.05 s; the drops are seen by 0.50 + 0.05 + 0.15 s
    path, rate, payload = PathFacts(20_000_000, rtt_s=0.020, queue_bytes=125_000), 10e6, 1460
    assert late_start(0.50, path, rate, payload, omit_s=1.0) is None  # counted in the warm-up
    assert late_start(0.90, path, rate, payload, omit_s=1.0) is not None  # seen after it: counted


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
