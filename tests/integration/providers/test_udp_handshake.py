"""The UDP handshake watchdog (run/handshake.py) on real iperf3 3.12: a handshake the path lost ends
the client in seconds, where iperf3 waits 30 s for the answer; a handshake that worked is left alone."""

from __future__ import annotations

import json
import time
from pathlib import Path

from tests.helpers.integration.topology import Built, built_topology, need
from vnetbench.drivers import iperf3
from vnetbench.drivers.base import FlowParams
from vnetbench.run.handshake import Watched, watch_handshakes
from vnetbench.spec.models import UdpMeasurement

PORT = 5311
IPERF3_OWN_WAIT_S = 30.0


def _run(built: Built, node: str, argv: list[str]) -> None:
    fin = built.provider.spawn(node, argv).wait(10)
    assert fin.returncode == 0, f"{argv}: {fin.stderr}"


def _drop_udp_leaving(built: Built, node: str) -> None:
    """Every UDP datagram the node sends is redirected to an interface that is down (the kernel drops
    it; this kernel has no act_gact); TCP, iperf3's control connection, passes."""
    links = json.loads(built.provider.spawn(node, ["ip", "-j", "link", "show"]).wait(10).stdout)
    (ifname,) = [x["ifname"] for x in links if x["ifname"] != "lo"]
    _run(built, node, ["ip", "link", "add", "vnbdown", "type", "ifb"])  # left down; gone with the namespace
    _run(built, node, ["tc", "qdisc", "add", "dev", ifname, "clsact"])
    _run(built, node, [
        "tc", "filter", "add", "dev", ifname, "egress", "protocol", "ip", "u32",
        "match", "ip", "protocol", "17", "0xff", "action", "mirred", "egress", "redirect", "dev", "vnbdown",
    ])  # fmt: skip


def _watch_one(built: Built) -> tuple[dict[int, Watched], float, int | None]:
    m = UdpMeasurement.model_validate({"name": "u", "kind": "udp", "duration": "3s"})
    dst = built.provider.address_of(built.layout, "b", "a")
    cmds = iperf3.commands(m, FlowParams("a", "b", dst, PORT, m.duration), 10e6)
    assert cmds.server is not None and cmds.handshake is not None
    server = built.provider.spawn("b", cmds.server)
    try:
        assert built.provider.wait_listening(server, PORT, "tcp", 10.0)
        client = built.provider.spawn("a", cmds.client)
        started = time.monotonic()
        seen = watch_handshakes(built.provider, [(client, server, cmds.handshake)], started + 60)
        fin = client.wait(60)
        return seen, time.monotonic() - started, fin.returncode
    finally:
        server.kill()


def test_a_lost_handshake_ends_the_client_long_before_iperf3_would(tmp_path: Path) -> None:
    need("iperf3", "tc", "ip")
    with built_topology(tmp_path, "pair.yaml", ("iperf3",)) as built:
        _drop_udp_leaving(built, "a")
        seen, took_s, returncode = _watch_one(built)
    lost = seen[0].lost
    assert list(seen) == [0] and lost is not None and "UDP handshake lost" in lost, seen
    assert "(0 datagram(s) arrived" in lost  # the connect datagram never arrived
    assert returncode is not None and returncode < 0  # ended by the watchdog's signal, not by iperf3
    assert took_s < IPERF3_OWN_WAIT_S  # the behaviour: it did not sit out iperf3's own wait


def test_a_handshake_that_worked_is_left_alone(tmp_path: Path) -> None:
    need("iperf3")
    with built_topology(tmp_path, "pair.yaml", ("iperf3",)) as built:
        seen, took_s, returncode = _watch_one(built)
    assert seen[0].lost is None and returncode == 0
    # its data was seen at the server, timed from the client's socket (within the watch's own time)
    started = seen[0].data_after_s
    assert started is not None and 0 <= started < took_s
