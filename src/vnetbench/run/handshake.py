"""The UDP handshake watchdog: a client stuck on a handshake the path lost is ended early.

iperf3 3.12 opens a UDP socket per stream, sends one datagram on it and waits up to 30 s for the
server's answer; on a lossy path (10 % each way: 19 % of the attempts) either datagram can be lost,
and the 30 s wait measures nothing. The runner re-runs a step whose tool setup failed; this watchdog
makes such an attempt cost seconds instead of 30. From the moment the client's socket appears it
counts the UDP datagrams reaching the server's node: no more than one per stream (the handshakes) by
the end of the grace means no data is flowing, so a handshake was lost. Other UDP traffic into the
same node raises the count too: then there is no verdict (iperf3's own 30 s applies), never a wrong one.
"""

from __future__ import annotations

import enum
import time
from dataclasses import dataclass

from vnetbench.drivers.base import HandshakeWatch
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

    def update(self, now: float, connected: bool, received: int) -> Verdict:
        if self.seen_at is None:
            if connected:  # before: the control connection is being set up (iperf3 bounds that itself)
                self.seen_at, self.baseline = now, received
            return Verdict.WAIT
        self.received = received - self.baseline
        if self.received > self.watch.streams:
            return Verdict.FLOWING
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


def watch_handshakes(
    provider: Provider, flows: list[tuple[ToolProcess, ToolProcess, HandshakeWatch]], deadline: float
) -> dict[int, str]:
    """Watch each (client, server, watch) until its data flows, its client exits, or its handshake is
    lost; a lost one's client is killed. Returns why, by index into flows. Bounded by deadline
    (monotonic s); a flow the provider cannot observe is left to the tool."""
    clocks = {i: HandshakeClock(watch) for i, (_, _, watch) in enumerate(flows)}
    lost: dict[int, str] = {}
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
                lost[i] = clock.why()
            if verdict is not Verdict.WAIT:
                del clocks[i]
        if clocks:
            time.sleep(POLL_S)
    return lost
