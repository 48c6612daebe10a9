"""The UDP handshake watchdog (run/handshake.py) over the SSH provider, on real iperf3 3.12 between
namespaced sshd hosts: a handshake the path lost ends the client in seconds, where iperf3 waits 30 s;
a handshake that worked is left alone and its start is timed, with client and server on two hosts
or on one."""

from __future__ import annotations

import contextlib
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.helpers.integration.ssh_provider import ssh_provider
from tests.helpers.integration.sshnet import SshHost, SshNet, leftovers
from vnetbench.drivers import iperf3
from vnetbench.drivers.base import FlowParams
from vnetbench.layout import Layout
from vnetbench.providers.ssh.provider import SshProvider
from vnetbench.run.handshake import Watched, watch_handshakes
from vnetbench.spec.models import UdpMeasurement

PORT = 5321
IPERF3_OWN_WAIT_S = 30.0
DROP_DEV = "vnbudpdrop"  # made by this test inside one of the sshnet's namespaces, and removed


def _ns(host: SshHost, *argv: str) -> None:
    subprocess.run(["ip", "netns", "exec", host.ns, *argv], check=True, capture_output=True, text=True)


@contextlib.contextmanager
def udp_to_port_dropped(host: SshHost) -> Iterator[None]:
    """UDP datagrams the host sends to PORT are redirected to an interface that is down (the kernel
    drops them; this kernel has no act_gact); iperf3's TCP control connection passes."""
    _ns(host, "ip", "link", "add", DROP_DEV, "type", "ifb")  # left down
    try:
        _ns(host, "tc", "qdisc", "add", "dev", "eth0", "clsact")
        try:
            _ns(host, "tc", "filter", "add", "dev", "eth0", "egress", "protocol", "ip", "u32",
                "match", "ip", "protocol", "17", "0xff", "match", "ip", "dport", str(PORT), "0xffff",
                "action", "mirred", "egress", "redirect", "dev", DROP_DEV)  # fmt: skip
            yield
        finally:
            _ns(host, "tc", "qdisc", "del", "dev", "eth0", "clsact")
    finally:
        _ns(host, "ip", "link", "del", DROP_DEV)


def _watch_one(provider: SshProvider, layout: Layout) -> tuple[dict[int, Watched], float, int | None]:
    m = UdpMeasurement.model_validate({"name": "u", "kind": "udp", "duration": "2s"})
    dst = provider.address_of(layout, "b", "a")
    cmds = iperf3.commands(m, FlowParams("a", "b", dst, PORT, m.duration), 10e6)
    assert cmds.server is not None and cmds.handshake is not None
    server = provider.spawn("b", cmds.server)
    try:
        assert provider.wait_listening(server, PORT, "tcp", 10.0)
        client = provider.spawn("a", cmds.client)
        started = time.monotonic()
        seen = watch_handshakes(provider, [(client, server, cmds.handshake)], started + 60)
        fin = client.wait(60)
        return seen, time.monotonic() - started, fin.returncode
    finally:
        server.kill()


def test_a_lost_handshake_over_ssh_ends_the_client_long_before_iperf3_would(
    sshnet: SshNet, tmp_path: Path
) -> None:
    a, b = sshnet.hosts[1], sshnet.hosts[2]
    with udp_to_port_dropped(a), ssh_provider(sshnet, tmp_path, a, b) as (provider, layout):
        seen, took_s, returncode = _watch_one(provider, layout)
    lost = seen[0].lost
    assert list(seen) == [0] and lost is not None and "UDP handshake lost" in lost, seen
    assert returncode != 0  # ended by the watchdog's kill, not by iperf3's own end
    assert took_s < IPERF3_OWN_WAIT_S
    assert leftovers(sshnet) == []


@pytest.mark.parametrize("placement", ["two hosts", "one host"])
def test_a_handshake_over_ssh_that_worked_is_left_alone_and_timed(
    sshnet: SshNet, tmp_path: Path, placement: str
) -> None:
    a = sshnet.hosts[1]
    b = sshnet.hosts[2] if placement == "two hosts" else a
    with ssh_provider(sshnet, tmp_path, a, b) as (provider, layout):
        seen, took_s, returncode = _watch_one(provider, layout)
    assert seen[0].lost is None and returncode == 0
    started = seen[0].data_after_s  # None would mean the provider gave no view (no verdict at all)
    assert started is not None and 0 <= started < took_s
    assert leftovers(sshnet) == []
