"""vnb-probe send --gso over a real veth pair between two namespaces (root).

100 Mbit/s of 1472-byte datagrams for 2 s with a 5 ms pacing quantum (≈ 42 packets per GSO
message): the receiver must count exactly what the sender sent — no loss, duplicates or
reordering — never above the target rate (+0.5 %) and, on a machine with CPU to spare, at no less
than 95 % of it, on the plain veth receive path (the softirq in the
sender's context) and with the receiving veth in threaded NAPI + UDP GRO forwarding (the GSO skb
goes through GRO and is segmented at the socket). The sender runs at SCHED_FIFO 1 (`chrt -f 1`), so
another job on a shared machine cannot hold it off the CPU past the stall threshold: skipped slots
are counted, never lost, but they would lower the rate this test checks.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, NamedTuple

import pytest

from tests.helpers.integration.requirements import missing
from tests.helpers.integration.vethpair import RECEIVER_IP, VethPair, veth_pair
from tests.helpers.timing import best_of, met_or_machine_bound, with_idle

pytestmark = [pytest.mark.root, pytest.mark.timing]

PROBE = str(Path(sys.executable).parent / "vnb-probe")
SKIP = missing(tools=("ethtool", "chrt"), probe=True)
RATE_BPS = 100e6
SIZE = 1472
DURATION_S = 2
PORT = 47300


def run_pair(pair: VethPair) -> tuple[dict[str, Any], dict[str, Any]]:
    recv = subprocess.Popen(
        pair.in_receiver(
            PROBE, "recv", "--bind", f"{RECEIVER_IP}:{PORT}", "--expect-streams", "1",
            "--duration", "30", "--json",
        ),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )  # fmt: skip
    try:
        assert recv.stderr is not None
        ready = recv.stderr.readline()
        assert ready.startswith("READY"), ready
        send = subprocess.run(
            pair.in_sender(
                "chrt", "-f", "1", PROBE, "send", "--dst", f"{RECEIVER_IP}:{PORT}", "--rate", "100M",
                "--size", str(SIZE), "--duration", str(DURATION_S), "--pacing-quantum-us", "5000",
                "--gso", "--json",
            ),
            capture_output=True,
            text=True,
            timeout=60,
        )  # fmt: skip
        assert send.returncode == 0, send.stderr
        out, err = recv.communicate(timeout=30)
        assert recv.returncode == 0, err
    finally:
        if recv.poll() is None:
            recv.kill()
            recv.wait()
    return json.loads(send.stdout), json.loads(out)


class Attempt(NamedTuple):
    """One run's rates as shares of the target, and the mean idle CPUs while it ran."""

    sent: float
    received: float
    idle: float


def _attempt(napi: str) -> Attempt:
    """One run over a fresh pair, checked against what no load can change: every packet sent arrives
    once, in order; the sender never exceeds the target and misses only slots it counts."""
    with veth_pair() as pair:
        if napi == "threaded-napi":
            pair.threaded_napi()
        time.sleep(0.2)
        (s, r), idle = with_idle(lambda: run_pair(pair))

    assert s["gso"] is True
    assert s["gso_segments"] == 65507 // SIZE == 44
    # the 5 ms quantum packs ≈ 42 packets per message; > 1 is the claim, 20 a sanity floor
    assert s["mean_message_packets"] > 20, s["mean_message_packets"]
    assert s["sent_messages"] * 20 < s["sent_packets"]

    target_pps = RATE_BPS / (SIZE * 8)
    assert s["target_pps"] == pytest.approx(target_pps)
    sent = s["sent_packets"]
    assert sent + s["missed_slots_packets"] == round(target_pps * DURATION_S)
    assert s["achieved_to_target_ratio"] <= 1.005, s["achieved_to_target_ratio"]

    st = r["streams"][0]
    assert r["stop_reason"] == "streams_done"
    assert r["foreign_packets"] == 0 and r["truncated_packets"] == 0
    assert st["expected_source"] == "fin" and st["sent_packets"] == sent
    assert st["received_packets"] == st["unique_packets"] == sent
    assert st["lost_packets"] == 0 and st["duplicate_packets"] == 0
    assert st["reordered_packets"] == 0 and st["late_packets"] == 0
    assert st["received_bytes"] == sent * SIZE
    # the receiver's rate follows what was sent (every packet arrived, above): the same packets over
    # the sender's own window, give or take the delivery delay at either end. The receiving window
    # was 1.0062 × the target in a CI run on a busy machine while the sender's own rate was within
    # 1.005: in threaded NAPI the first frames wait for the napi kthread, which runs at normal
    # priority and can be a few ms late; the sender (SCHED_FIFO) is not. So the windows are compared
    # (within 20 ms of 2 s), not the receiver's rate against ±0.5 %.
    gap_ms = (s["send_window_ns"] - st["receive_window_ns"]) / 1e6
    assert abs(gap_ms) <= 20, (gap_ms, s["send_window_ns"], st["receive_window_ns"])
    assert st["received_pps"] == pytest.approx((sent - 1) / st["receive_window_ns"] * 1e9, rel=1e-9)
    return Attempt(s["achieved_to_target_ratio"], st["received_pps"] / target_pps, idle)


@pytest.mark.skipif(SKIP is not None, reason=str(SKIP))
@pytest.mark.parametrize("napi", ["plain-veth", "threaded-napi"])
def test_gso_sender_is_received_exactly_at_the_rate(napi: str) -> None:
    # Below the target only by slots the sender missed (counted, checked on every attempt): a busy
    # machine delays a sender even at SCHED_FIFO 1 (0.992 seen in a tally run; 0.935 alone in the
    # timing phase beside stress-ng --cpu 2 --hdd 1, 0.898 beside a disk writer and two test
    # workers; 0.861 in threaded NAPI, whose kthread competes at normal priority). At least 95 % of
    # the target on the best of three runs; excused only when every run had no CPU to spare and one
    # still reached half (a pacer at a wrong rate, e.g. a slot per message, fails however busy).
    # The pacing's precision is benchmarks/probe's claim, not this test's.
    met, attempts = best_of(lambda: _attempt(napi), lambda a: min(a.sent, a.received) >= 0.95)
    met_or_machine_bound(
        met,
        attempts,
        idle=lambda a: a.idle,
        floor=lambda a: min(a.sent, a.received) >= 0.5,
        numbers=lambda rs: "; ".join(
            f"sent {a.sent:.3f}, received {a.received:.3f} of the target" for a in rs
        ),
    )
