"""Telemetry on remote hosts without SSH: the fixed remote scripts run by a local shell (the same
command lines the SSH provider sends), parsed by telemetry/remote.py and procfs.py."""

from __future__ import annotations

import os
import shutil
import subprocess

import pytest

from vnetbench.providers.ssh import remote
from vnetbench.providers.ssh.telemetry import SshTelemetryReader, split_parts
from vnetbench.telemetry import procfs
from vnetbench.telemetry.remote import HostPlan, RemoteSource, pid_scope, remote_flow_path


class ShellReader(SshTelemetryReader):
    """The SSH reader with its command run by this machine's shell instead of a remote one."""

    def __init__(self, host: str) -> None:
        self.host = host

    def reachable(self) -> bool:
        return True

    def _run(self, command: str) -> str:
        return subprocess.run(["sh", "-c", command], capture_output=True, text=True, check=True).stdout


def test_one_reading_parses_into_the_local_sources_counters() -> None:
    me = os.getpid()
    source = RemoteSource([HostPlan(ShellReader("h1"), [me, 2**22 + 7], {"lo"}, qdiscs=True)])
    out: dict[str, dict[str, int]] = {}
    try:
        source.read(out)
    finally:
        source.close()
    assert out["cpu@h1"]["idle_ns"] > 0 and "cpu0@h1" in out
    assert "backlog_dropped" in out["softnet@h1"]
    assert "Udp.RcvbufErrors" in out["snmp:h1"] and "TcpExt.TCPTimeouts" in out["snmp:h1"]
    assert set(k for k in out if k.startswith("if:")) == {"if:h1/lo"}
    assert out[pid_scope(me, "h1")]["user_ns"] >= 0
    assert pid_scope(2**22 + 7, "h1") not in out  # no such process: no reading, no error
    if shutil.which("tc") is None:
        assert source.notes == ["host h1: no tc, so no qdisc statistics (install iproute2)"]
    else:
        assert source.notes == []


def test_the_path_comes_from_the_hosts_routing() -> None:
    if shutil.which("ip") is None:
        pytest.skip("no ip (iproute2)")
    path = remote_flow_path("a", "b", ShellReader("h1"), ShellReader("h2"), "127.0.0.1")
    assert (path.src_ns, path.dst_ns, path.mtu) == ("h1", "h2", 65536)
    assert [(h.ns, h.name, h.direction, h.where) for h in path.hops] == [
        ("h1", "lo", "tx", "node:a"),
        ("h2", "lo", "rx", "node:b"),
    ]
    with pytest.raises(ValueError, match="same host"):
        remote_flow_path("a", "b", ShellReader("h1"), ShellReader("h1"), "127.0.0.1")
    with pytest.raises(ValueError, match="holds"):
        remote_flow_path("a", "b", ShellReader("h1"), ShellReader("h2"), "127.0.0.2")


@pytest.mark.parametrize("bad", ["1; touch x", "$(id)", "-1", "0", ""])
def test_only_integers_and_addresses_reach_the_scripts(bad: str) -> None:
    with pytest.raises(ValueError):
        remote.telemetry_command([bad], qdiscs=False)  # type: ignore[list-item]
    with pytest.raises(ValueError):
        remote.route_command(bad)


def test_parts_and_tc_json() -> None:
    text = "/proc/stat:cpu 1 2\n/proc/7/stat:7 (a:b) S\n/etc/x:no\n/proc/net/dev:\n@@vnb tc\n[]\n"
    assert split_parts(text) == {"stat": "cpu 1 2\n", "pid:7": "7 (a:b) S\n", "dev": "\n", "tc": "[]\n"}
    text = (
        '[{"kind":"noqueue","handle":"0:","dev":"lo","bytes":0,"packets":0,"drops":0},'
        '{"kind":"tbf","handle":"8001:","dev":"eth0","root":true,"bytes":9,"packets":3,"drops":2,'
        '"overlimits":5,"requeues":0,"backlog":1500,"qlen":1}]'
    )
    assert procfs.tc_qdiscs(text) == {
        ("eth0", "tbf:8001"): {
            "packets": 3,
            "bytes": 9,
            "drops": 2,
            "overlimits": 5,
            "requeues": 0,
            "backlog_bytes": 1500,
            "qlen_packets": 1,
        }
    }


def test_a_tc_without_json_is_a_note_not_a_lost_reading() -> None:
    plan = HostPlan(ShellReader("h1"), [], {"eth0"}, qdiscs=True)
    source = RemoteSource([plan])
    out: dict[str, dict[str, int]] = {}
    try:
        source._parse(plan, {"stat": "cpu 1 2 3 4\n", "tc": 'Option "-j" is unknown\n'}, out)
    finally:
        source.close()
    assert out["cpu@h1"]["idle_ns"] > 0
    assert source.notes == ["host h1: `tc -s -j qdisc show` gave no JSON, so no qdisc statistics"]
