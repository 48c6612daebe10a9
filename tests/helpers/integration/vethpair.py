"""Two network namespaces joined by one veth pair, for tests that run vnb-probe directly.

Names start with "vga" plus a random tag (the tag is this test's own), so nothing else on the
shared machine is touched: the context manager deletes exactly the two namespaces it made (the
veth pair goes with them).
"""

from __future__ import annotations

import secrets
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

SENDER_IP = "198.18.0.1"
RECEIVER_IP = "198.18.0.2"


def sh(*cmd: str) -> str:
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=30)
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)}: {done.stderr.strip()}")
    return done.stdout


@dataclass(frozen=True)
class VethPair:
    sender_ns: str
    receiver_ns: str
    sender_dev: str
    receiver_dev: str

    def in_sender(self, *cmd: str) -> list[str]:
        return ["ip", "netns", "exec", self.sender_ns, *cmd]

    def in_receiver(self, *cmd: str) -> list[str]:
        return ["ip", "netns", "exec", self.receiver_ns, *cmd]

    def threaded_napi(self) -> None:
        """Receive in a NAPI kernel thread (napi/<dev>-N) instead of the sender's softirq. veth
        uses NAPI for a socket's UDP skbs only when GRO and rx-udp-gro-forwarding are on."""
        sh(*self.in_receiver("ethtool", "-K", self.receiver_dev, "gro", "on", "rx-udp-gro-forwarding", "on"))
        sh(*self.in_receiver("sh", "-c", f"echo 1 > /sys/class/net/{self.receiver_dev}/threaded"))
        got = sh(*self.in_receiver("cat", f"/sys/class/net/{self.receiver_dev}/threaded")).strip()
        if got != "1":
            raise RuntimeError(f"{self.receiver_dev}: threaded NAPI did not turn on ({got!r})")


@contextmanager
def veth_pair() -> Iterator[VethPair]:
    tag = secrets.token_hex(3)
    pair = VethPair(f"vga{tag}S", f"vga{tag}R", f"vga{tag}s", f"vga{tag}r")
    made: list[str] = []
    try:
        for ns in (pair.sender_ns, pair.receiver_ns):
            sh("ip", "netns", "add", ns)
            made.append(ns)
        sh(
            "ip", "-n", pair.sender_ns, "link", "add", pair.sender_dev, "type", "veth",
            "peer", "name", pair.receiver_dev, "netns", pair.receiver_ns,
        )  # fmt: skip
        for ns, dev, ip in (
            (pair.sender_ns, pair.sender_dev, SENDER_IP),
            (pair.receiver_ns, pair.receiver_dev, RECEIVER_IP),
        ):
            sh("ip", "-n", ns, "addr", "add", f"{ip}/24", "dev", dev)
            sh("ip", "-n", ns, "link", "set", dev, "up")
            sh("ip", "-n", ns, "link", "set", "lo", "up")
        yield pair
    finally:
        for ns in made:
            subprocess.run(["ip", "netns", "del", ns], capture_output=True, timeout=30)
