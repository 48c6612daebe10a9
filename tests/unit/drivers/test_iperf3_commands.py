"""iperf3 command building: exact argv lists, iperf3 3.12's limits, and the fixtures' commands."""

from __future__ import annotations

import pytest

from tests.helpers.capture import iperf3_capture
from vnetbench.drivers import iperf3
from vnetbench.drivers.base import FlowParams
from vnetbench.spec.models import TcpMeasurement, UdpMeasurement


def tcp(**kw: object) -> TcpMeasurement:
    return TcpMeasurement.model_validate({"name": "t", "kind": "tcp", **kw})


def udp(**kw: object) -> UdpMeasurement:
    return UdpMeasurement.model_validate({"name": "u", "kind": "udp", **kw})


def flow(m: TcpMeasurement | UdpMeasurement, port: int = 5201, address: str = "198.18.0.2") -> FlowParams:
    return FlowParams("a", "b", address, port, m.duration, m.omit)


def test_seconds_are_exact_decimals() -> None:
    assert iperf3._seconds(10**9) == "1"
    assert iperf3._seconds(10 * 10**9) == "10"
    assert iperf3._seconds(500_000_000) == "0.5"
    assert iperf3._seconds(100_000_000) == "0.1"
    assert iperf3._seconds(250_000_000) == "0.25"
    assert iperf3._seconds(1_000_000_001) == "1.000000001"
    assert iperf3._seconds(0) == "0"


def test_tcp_defaults_exact_argv() -> None:
    m = tcp()
    cmds = iperf3.commands(m, flow(m), None)
    assert cmds.server == ["iperf3", "-s", "-1", "-p", "5201", "-J", "-i", "1"]
    assert cmds.client == [
        "iperf3", "-c", "198.18.0.2", "-p", "5201", "-J", "-t", "10", "-O", "0", "-i", "1",
        "--get-server-output", "--connect-timeout", "5000", "-P", "1",
    ]  # fmt: skip
    assert cmds.server_proto == "tcp"


def test_tcp_every_option() -> None:
    m = tcp(
        duration="30s",
        omit="2s",
        streams=4,
        congestion="cubic",
        window="256K",
        reverse=True,
        interval="500ms",
    )
    cmds = iperf3.commands(
        m, flow(m, port=5333, address="198.18.1.7"), 123.0
    )  # offered rate: ignored for TCP
    assert cmds.client == [
        "iperf3", "-c", "198.18.1.7", "-p", "5333", "-J", "-t", "30", "-O", "2", "-i", "0.5",
        "--get-server-output", "--connect-timeout", "5000", "-P", "4",
        "-C", "cubic", "-w", "262144", "-R",
    ]  # fmt: skip
    # the server reports on the client's interval (it would use 1 s otherwise)
    assert cmds.server == ["iperf3", "-s", "-1", "-p", "5333", "-J", "-i", "0.5"]


def test_udp_rate_is_per_stream_payload() -> None:
    m = udp(streams=2, length=1470, duration="5s", interval="200ms")
    cmds = iperf3.commands(m, flow(m), 97_222_222.4)
    assert cmds.client[cmds.client.index("-P") + 1] == "2"
    assert cmds.client == [
        "iperf3", "-c", "198.18.0.2", "-p", "5201", "-J", "-t", "5", "-O", "0", "-i", "0.2",
        "--get-server-output", "--connect-timeout", "5000", "-P", "2",
        "-u", "-b", "48611111", "-l", "1470", "--udp-counters-64bit",
    ]  # fmt: skip
    assert cmds.server_proto == "tcp"  # the control connection: what the readiness check waits for


def test_udp_tiny_rate_never_becomes_unlimited() -> None:
    m = udp(streams=4)
    cmds = iperf3.commands(m, flow(m), 1.0)
    assert cmds.client[cmds.client.index("-b") + 1] == "1"  # -b 0 would mean "as fast as possible"


def test_udp_without_offered_rate_is_refused() -> None:
    m = udp()
    with pytest.raises(ValueError, match="no offered rate"):
        iperf3.commands(m, flow(m), None)


@pytest.mark.parametrize(
    ("m", "needle"),
    [
        (tcp(duration="1500ms"), "whole seconds from 1"),
        (tcp(duration="500ms"), "whole seconds from 1"),
        (tcp(omit="61s"), "from 0 to 60"),
        (tcp(omit="1500ms"), "whole seconds from 0"),
        (tcp(interval="50ms"), "every 0.1 to 60 s"),
        (tcp(interval="2m"), "every 0.1 to 60 s"),
        (tcp(window="1024M"), "512 MiB"),
        (udp(length=8), "16 to 65507"),
        (udp(length=65508), "16 to 65507"),
    ],
)
def test_problems_name_the_fix(m: TcpMeasurement | UdpMeasurement, needle: str) -> None:
    found = iperf3.problems(m)
    assert len(found) == 1
    assert needle in found[0]
    assert found[0].startswith(f"measurement '{m.name}': ")
    with pytest.raises(ValueError, match="measurement"):
        iperf3.commands(m, flow(m), 1e6)


def test_valid_measurements_have_no_problems() -> None:
    assert iperf3.problems(tcp()) == []
    assert iperf3.problems(udp(length=16)) == []
    assert iperf3.problems(tcp(duration="86400s", omit="60s", interval="60s")) == []


def test_flow_durations_are_checked_too() -> None:
    m = tcp()
    bad = FlowParams("a", "b", "198.18.0.2", 5201, 2_500_000_000, 0)
    with pytest.raises(ValueError, match=r"duration 2\.5 s"):
        iperf3.commands(m, bad, None)


@pytest.mark.parametrize(
    ("name", "m", "offered"),
    [
        ("tcp_single", tcp(duration="4s", omit="1s"), None),
        ("tcp_parallel3", tcp(duration="3s", interval="500ms", streams=3, congestion="cubic"), None),
        ("tcp_reverse", tcp(duration="3s", streams=2, window=262144, reverse=True), None),
        ("udp_noloss", udp(duration="3s", streams=2, length=1470), 50_000_000),
        ("udp_loss", udp(duration="3s", interval="500ms", length=1470), 97_222_222),
        ("udp_loss_omit", udp(duration="3s", omit="1s", interval="500ms", length=1470), 97_222_222),
    ],
)
def test_fixtures_were_captured_with_the_commands_we_build(
    name: str, m: TcpMeasurement | UdpMeasurement, offered: float | None
) -> None:
    _, _, meta = iperf3_capture(name)
    port = int(meta["client_argv"][meta["client_argv"].index("-p") + 1])
    cmds = iperf3.commands(m, flow(m, port=port), offered)
    assert cmds.client == meta["client_argv"]
    assert cmds.server == meta["server_argv"]


def test_version() -> None:
    text = "iperf 3.12 (cJSON 1.7.15)\nLinux vm 6.18.44 #1 SMP x86_64\nOptional features available: ...\n"
    assert iperf3.version(text) == "3.12"
    assert iperf3.version("iperf 3.17.1 (cJSON 1.7.15)") == "3.17.1"
    assert iperf3.version("iperf 3.9-dev\n") == "3.9-dev"
    assert iperf3.version("something else entirely\n") == "something else entirely"
    assert iperf3.version("") == "unknown"
    assert iperf3.version_command() == ["iperf3", "--version"]


def test_udp_handshake_is_watched_and_tcp_is_not() -> None:
    m = udp(streams=2, length=1470)
    watch = iperf3.commands(m, flow(m, port=5333), 20e6).handshake
    # the rule (iperf3.handshake_grace_s): 5 s for resent control messages, a quarter second per
    # further stream, three datagrams' time at the per-stream rate: 3 × 1470 × 8 / 10e6 = 3.528 ms
    expected = iperf3.HandshakeWatch(
        port=5333, streams=2, grace_s=pytest.approx(5.25 + 0.003528), payload_bytes=1470
    )
    assert watch == expected
    slow = udp(length=1470)  # 10 kbit/s: a datagram every 1.176 s, three of them 3.528 s
    assert iperf3.commands(slow, flow(slow), 10_000).handshake.grace_s == pytest.approx(8.528)
    assert iperf3.commands(tcp(), flow(tcp()), None).handshake is None
