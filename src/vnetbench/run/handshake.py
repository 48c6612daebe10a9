"""The UDP handshake watchdog: a client stuck on a handshake the path lost is ended early.

iperf3 3.12 opens a UDP socket per stream, sends one datagram on it and waits up to 30 s for the
server's answer; on a lossy path (10 % each way: 19 % of the attempts) either datagram can be lost,
and the 30 s wait measures nothing. The runner re-runs a step whose tool setup failed; this watchdog
makes such an attempt cost seconds instead of 30. From the moment the client's socket appears it
counts the UDP datagrams reaching the server's node: no more than one per stream (the handshakes) by
the end of the grace means no data is flowing, so a handshake was lost. Other UDP traffic into the
same node raises the count too: then there is no verdict (iperf3's own 30 s applies), never a wrong one.

The same clock times the start. iperf3 paces UDP to the average rate since the server's TEST_START
(iperf_check_throttle), but sends only once TEST_RUNNING arrives; when a control message is resent
on a lossy path (TCP's RTO: 200 ms or more) or the client stalls, it then sends the missed time's
datagrams at once. A burst longer than the path's queue is dropped at the shaper and counted as the
path's loss (a 20 %-loss link once measured 30.8 %). `late_start` names such an attempt, and the
runner re-runs it as a setup failure: the loss figure of that attempt is the tool's, not the path's.
"""

from __future__ import annotations

import enum
import time
from dataclasses import dataclass

from vnetbench.drivers.base import HandshakeWatch
from vnetbench.kinds import PathFacts
from vnetbench.providers.base import Provider, ToolProcess

POLL_S = 0.05


class Verdict(enum.Enum):
    WAIT = "wait"  # not decided yet
    FLOWING = "flowing"  # data reaches the server: the handshake worked
    LOST = "lost"  # the grace passed with no data at the server


@dataclass
class HandshakeClock:
    """One flow's handshake, fed with what the provider sees: its decisions alone, no processes."""

    watch: HandshakeWatch
    seen_at: float | None = None  # when the client's UDP socket was first seen (monotonic s)
    baseline: int = 0  # datagrams that had reached the server's node by then
    received: int = 0  # since then
    quiet_at: float | None = None  # the last poll that saw no data at the server
    # From the socket to its first data at the server, at least: the last poll that saw none (a poll
    # the runner itself was late for cannot make a start look late).
    data_after_s: float | None = None

    def update(self, now: float, connected: bool, received: int) -> Verdict:
        if self.seen_at is None:
            if connected:  # before: the control connection is being set up (iperf3 bounds that itself)
                self.seen_at, self.baseline, self.quiet_at = now, received, now
            return Verdict.WAIT
        self.received = received - self.baseline
        if self.received > self.watch.streams:
            self.data_after_s = (self.quiet_at or self.seen_at) - self.seen_at
            return Verdict.FLOWING
        self.quiet_at = now
        if now - self.seen_at >= self.watch.grace_s:
            return Verdict.LOST
        return Verdict.WAIT

    def why(self) -> str:
        return (
            f"UDP handshake lost on the path: no data reached the server in the {self.watch.grace_s:.1f} s "
            f"after the client opened its stream socket ({self.received} datagram(s) arrived in that time, "
            f"at most {self.watch.streams} handshake(s) expected); the client was ended instead of "
            "waiting iperf3's 30 s for the answer"
        )


# Between the client's socket and its first datagram at the server a working start takes about 1.5
# round trips (the handshake's, then the data's one way; TEST_START and TEST_RUNNING arrive meanwhile).
# Allowed: two round trips and 0.15 s (polls, scheduling); only time beyond that is a catch-up.
START_ROUND_TRIPS = 2
START_SLACK_S = 0.15


def late_start(
    data_after_s: float, path: PathFacts, offered_bps: float, payload_bytes: int, omit_s: float = 0.0
) -> str | None:
    """Why an attempt whose data reached the server `data_after_s` after the client's socket is the
    tool's burst, not a result. None: on time, or its catch-up fits in the path's queue, or its drops
    are seen (the next datagram after them arrives, once the queue drained) before `omit` ends."""
    excess_s = data_after_s - START_ROUND_TRIPS * path.rtt_s - START_SLACK_S
    burst_bytes = excess_s * offered_bps / 8
    if path.queue_bytes is None or excess_s <= 0 or burst_bytes <= path.queue_bytes:
        return None
    drained_s = path.queue_bytes * 8 / path.rate_bps if path.rate_bps else 0.0
    if data_after_s + drained_s + START_SLACK_S <= omit_s:
        return None
    return (
        f"iperf3 started sending {data_after_s:.2f} s after its stream socket opened, {excess_s:.2f} s "
        "later than the path's round trips explain (a resent control message, or a stalled process); "
        f"its pacing then sends the missed time at once, ~{burst_bytes / payload_bytes:.0f} datagrams, "
        f"more than the path's {path.queue_bytes / 1000:.0f} KB queue holds: the loss it reports would "
        "be that burst's, not the path's"
    )


@dataclass
class Watched:
    """What the watchdog saw of one flow."""

    lost: str | None = None  # why its handshake counts as lost (the client was killed)
    data_after_s: float | None = None  # its data reached the server this long after its socket


def watch_handshakes(
    provider: Provider, flows: list[tuple[ToolProcess, ToolProcess, HandshakeWatch]], deadline: float
) -> dict[int, Watched]:
    """Watch each (client, server, watch) until its data flows, its client exits, or its handshake is
    lost; a lost one's client is killed. Returns what was seen, by index into flows. Bounded by
    deadline (monotonic s); a flow the provider cannot observe is left to the tool."""
    clocks = {i: HandshakeClock(watch) for i, (_, _, watch) in enumerate(flows)}
    seen: dict[int, Watched] = {}
    while clocks and time.monotonic() < deadline:
        for i, clock in list(clocks.items()):
            client, server, watch = flows[i]
            state = (
                None
                if client.poll() is not None
                else provider.udp_handshake_state(client, watch.port, server)
            )
            verdict = Verdict.FLOWING if state is None else clock.update(time.monotonic(), *state)
            if verdict is Verdict.LOST:
                client.kill()
                seen[i] = Watched(lost=clock.why())
            elif verdict is Verdict.FLOWING:
                seen[i] = Watched(data_after_s=clock.data_after_s)
            if verdict is not Verdict.WAIT:
                del clocks[i]
        if clocks:
            time.sleep(POLL_S)
    return seen
