"""What a campaign records of the machine it ran on (run/campaign.environment)."""

from __future__ import annotations

from pathlib import Path

from vnetbench.run.campaign import environment


def test_environment_records_the_default_tcp_congestion_control() -> None:
    # The kernel's own file, read independently: a TCP measurement without `congestion:` uses it.
    expected = Path("/proc/sys/net/ipv4/tcp_congestion_control").read_text().strip()
    env = environment()
    assert env["tcp_congestion_control"] == expected
    assert env["kernel"] and env["cpu_count"] >= 1
