"""Reading a namespace's sockets and UDP counters from /proc/PID/net text, for every provider: the
local one reads the files itself, the SSH provider has a host print them (one round trip)."""

from __future__ import annotations


def socket_rows(text: str) -> list[list[str]]:
    """The socket rows of /proc/PID/net/{tcp,udp}{,6} text (header lines left out): sl, local
    address, remote address, state, ... (addresses as HEXADDR:HEXPORT)."""
    return [fields for line in text.splitlines() if len(fields := line.split()) >= 4 and fields[0] != "sl"]


def connected_to_port(rows: list[list[str]], port: int) -> bool:
    """Whether a socket in rows is connected to remote port `port` (iperf3's UDP client connects its
    stream socket before the handshake)."""
    hex_port = f"{port:04X}"
    return any(remote.rsplit(":", 1)[-1] == hex_port for _, _, remote, *_ in rows)


def udp_datagrams(snmp_text: str) -> int | None:
    """UDP datagrams that reached a socket of the namespace: delivered (InDatagrams) or dropped for
    a full receive buffer (RcvbufErrors), from /proc/PID/net/snmp text. None if it has no Udp rows."""
    rows = [line.split() for line in snmp_text.splitlines() if line.startswith("Udp:")]
    if len(rows) < 2 or len(rows[0]) != len(rows[1]):
        return None
    counters = dict(zip(rows[0][1:], rows[1][1:], strict=True))
    try:
        return int(counters["InDatagrams"]) + int(counters.get("RcvbufErrors", 0))
    except (KeyError, ValueError):
        return None
