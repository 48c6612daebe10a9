"""Parsing /proc/PID/net text (providers/procnet.py) and the SSH provider's one-round-trip dump of it
(providers/ssh/remote.py UDP_STATE). The samples are the kernel's formats (net/ipv4/udp.c
udp4_seq_show, net/ipv4/proc.c snmp_seq_show_ipstats); expected values read off them by hand."""

from __future__ import annotations

import os
import subprocess

from vnetbench.providers import procnet
from vnetbench.providers.ssh import remote

# A client socket 198.18.0.1:41234 connected to 198.18.0.2:5201 (0x1451), and a bound socket on
# 0.0.0.0:5353 (0x14E9) with no peer.
UDP = """\
   sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode ref pointer drops
  101: 010012C6:A112 020012C6:1451 01 00000000:00000000 00:00000000 00000000     0        0 41234 2 0000000000000000 0
  202: 00000000:14E9 00000000:0000 07 00000000:00000000 00:00000000 00000000     0        0 41235 2 0000000000000000 0
"""
SNMP = """\
Ip: Forwarding DefaultTTL InReceives
Ip: 1 64 1000
Udp: InDatagrams NoPorts InErrors OutDatagrams RcvbufErrors SndbufErrors InCsumErrors IgnoredMulti MemErrors
Udp: 120 3 0 77 5 0 0 0 0
UdpLite: InDatagrams NoPorts InErrors OutDatagrams RcvbufErrors SndbufErrors InCsumErrors IgnoredMulti MemErrors
UdpLite: 9 0 0 0 0 0 0 0 0
"""


def test_socket_rows_leave_the_header_out_and_keep_every_socket() -> None:
    rows = procnet.socket_rows(UDP)
    assert [r[0] for r in rows] == ["101:", "202:"]
    assert rows[0][1:4] == ["010012C6:A112", "020012C6:1451", "01"]


def test_connected_to_port_looks_at_the_remote_port_only() -> None:
    rows = procnet.socket_rows(UDP)
    assert procnet.connected_to_port(rows, 5201) is True
    assert procnet.connected_to_port(rows, 5353) is False  # that is a local port, not a peer
    assert procnet.connected_to_port([], 5201) is False


def test_udp_datagrams_are_delivered_plus_receive_buffer_drops_and_not_udplite() -> None:
    assert procnet.udp_datagrams(SNMP) == 120 + 5
    assert procnet.udp_datagrams("Ip: Forwarding\nIp: 1\n") is None
    assert procnet.udp_datagrams("Udp: InDatagrams NoPorts\nUdp: 1\n") is None  # a torn read


def test_the_remote_udp_state_script_prints_both_parts_and_marks_a_gone_pid() -> None:
    """The script itself, run by this machine's sh against this process and a pid that is not there."""
    me = os.getpid()
    out = subprocess.run(
        ["sh", "-c", remote.UDP_STATE, "vnb", str(me), str(me)], capture_output=True, text=True
    )
    parts = remote.parse_udp_state(out.stdout)
    assert set(parts) == {"udp", "snmp"}
    assert parts["udp"] is not None and parts["snmp"] is not None
    assert procnet.udp_datagrams(parts["snmp"]) is not None
    gone = 2**22 + 1  # above the kernel's pid_max limit (4194304): never a live pid
    out = subprocess.run(
        ["sh", "-c", remote.UDP_STATE, "vnb", str(gone), "-"], capture_output=True, text=True
    )
    assert remote.parse_udp_state(out.stdout) == {"udp": None}


def test_parse_udp_state_splits_on_the_markers_only() -> None:
    text = "@@vnb udp\n" + UDP + "@@vnb snmp\n" + SNMP
    parts = remote.parse_udp_state(text)
    assert parts["udp"] is not None and procnet.connected_to_port(procnet.socket_rows(parts["udp"]), 5201)
    assert parts["snmp"] is not None and procnet.udp_datagrams(parts["snmp"]) == 125
    assert remote.parse_udp_state("@@vnb udp\n@@vnb gone\n@@vnb snmp\n" + SNMP)["udp"] is None
