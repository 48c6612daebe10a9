"""The driver registry the runner and the campaign use."""

from __future__ import annotations

import pytest

from tests.helpers.capture import iperf3_capture, ping_capture
from vnetbench.drivers import IPERF3, PING
from vnetbench.drivers.base import FlowParams
from vnetbench.kinds import DRIVERS, driver_for
from vnetbench.spec.models import RttMeasurement, TcpMeasurement, UdpMeasurement


def test_kinds_map_to_tools() -> None:
    assert driver_for("tcp") is IPERF3 and driver_for("udp") is IPERF3
    assert driver_for("rtt") is PING
    assert (IPERF3.tool, PING.tool) == ("iperf3", "ping")
    assert {"tcp", "udp", "rtt"} <= set(DRIVERS)


def test_unknown_kind_names_the_known_ones() -> None:
    with pytest.raises(KeyError, match=r"known: .*rtt, tcp, trace, udp"):
        driver_for("nosuch")


def test_every_driver_has_the_whole_interface() -> None:
    for driver in DRIVERS.values():
        for name in ("problems", "commands", "parse", "version_command", "parse_version"):
            assert callable(getattr(driver, name))
    assert (
        IPERF3.version_command() == ["iperf3", "--version"]
        and IPERF3.parse_version("iperf 3.12 (x)") == "3.12"
    )
    assert PING.version_command() == ["ping", "-V"]


def test_drivers_build_and_parse() -> None:
    flow = FlowParams("a", "b", "198.18.0.2", 5401, 4 * 10**9, 10**9)
    tcp = TcpMeasurement.model_validate({"name": "t", "kind": "tcp", "duration": "4s", "omit": "1s"})
    client, server, meta = iperf3_capture("tcp_single")
    assert driver_for("tcp").commands(tcp, flow, None).client == meta["client_argv"]
    assert driver_for("tcp").parse(client, server).summary["throughput_bps"] > 9e7
    udp = UdpMeasurement.model_validate({"name": "u", "kind": "udp", "duration": "4s", "omit": "1s"})
    assert "-u" in driver_for("udp").commands(udp, flow, 1e6).client
    rtt = RttMeasurement.model_validate({"name": "r", "kind": "rtt"})
    out, _ = ping_capture("ping_normal")
    assert driver_for("rtt").commands(rtt, flow, None).server is None
    assert driver_for("rtt").parse(out, None).summary["received_packets"] == 10
    assert driver_for("rtt").problems(rtt) == [] and driver_for("tcp").problems(tcp) == []
