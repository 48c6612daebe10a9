"""Parsers for the /proc files the sampler reads. Pure functions over text: testable without root.

Every parser returns flat {metric: counter} dicts of raw (cumulative) kernel counters; the sampler
keeps deltas. CPU times are converted from clock ticks to nanoseconds so metric names carry a unit.
"""

from __future__ import annotations

import json
import os

CLK_TCK = os.sysconf("SC_CLK_TCK")
NS_PER_TICK = 10**9 // CLK_TCK
# /proc/stat cpu columns, in order (proc(5)).
CPU_FIELDS = ("user", "nice", "system", "idle", "iowait", "irq", "softirq", "steal")
# /proc/net/dev columns, in order.
DEV_RX = (
    "rx_bytes",
    "rx_packets",
    "rx_errors",
    "rx_dropped",
    "rx_fifo",
    "rx_frame",
    "rx_compressed",
    "rx_mc",
)
DEV_TX = (
    "tx_bytes",
    "tx_packets",
    "tx_errors",
    "tx_dropped",
    "tx_fifo",
    "tx_colls",
    "tx_carrier",
    "tx_compr",
)
# SNMP counters kept (the rest of /proc/net/snmp and netstat is read but not stored).
SNMP_KEEP = {
    "Ip": (
        "InReceives", "InHdrErrors", "InAddrErrors", "InDiscards", "InDelivers", "OutRequests",
        "OutDiscards", "OutNoRoutes", "ReasmTimeout", "ReasmReqds", "ReasmOKs", "ReasmFails",
        "FragOKs", "FragFails", "FragCreates",
    ),
    "Icmp": ("InMsgs", "OutMsgs"),
    "Tcp": ("InSegs", "OutSegs", "RetransSegs", "InErrs", "OutRsts"),
    "Udp": (
        "InDatagrams", "NoPorts", "InErrors", "OutDatagrams", "RcvbufErrors", "SndbufErrors",
        "InCsumErrors", "MemErrors",
    ),
    "TcpExt": (
        "TCPLostRetransmit", "TCPFastRetrans", "TCPSlowStartRetrans", "TCPTimeouts", "TCPBacklogDrop",
        "TCPRcvQDrop", "TCPOFOQueue", "TCPOFODrop", "ListenDrops", "TCPSpuriousRTOs",
    ),
    "IpExt": ("InNoRoutes", "InTruncatedPkts", "InCsumErrors"),
}  # fmt: skip


def cpu_times(text: str) -> dict[str, dict[str, int]]:
    """/proc/stat -> {"cpu": {...}, "cpu0": {...}} in ns per field."""
    out: dict[str, dict[str, int]] = {}
    for line in text.splitlines():
        if not line.startswith("cpu"):
            continue
        name, *values = line.split()
        out[name] = {f"{f}_ns": int(v) * NS_PER_TICK for f, v in zip(CPU_FIELDS, values, strict=False)}
    return out


def process_cpu(text: str) -> dict[str, int]:
    """/proc/PID/stat -> user and system CPU time of the process (ns). The comm may contain spaces."""
    rest = text[text.rindex(")") + 2 :].split()
    # fields after comm start at field 3 (state); utime is field 14, stime field 15 (1-based).
    return {"user_ns": int(rest[11]) * NS_PER_TICK, "system_ns": int(rest[12]) * NS_PER_TICK}


def snmp(text: str) -> dict[str, int]:
    """/proc/net/snmp or /proc/net/netstat: header/value line pairs -> {"Udp.RcvbufErrors": n, ...}."""
    out: dict[str, int] = {}
    lines = text.splitlines()
    for header, values in zip(lines[::2], lines[1::2], strict=False):
        proto, _, names = header.partition(":")
        _, _, nums = values.partition(":")
        keep = SNMP_KEEP.get(proto)
        if keep is None:
            continue
        for name, num in zip(names.split(), nums.split(), strict=False):
            if name in keep:
                out[f"{proto}.{name}"] = int(num)
    return out


def netdev(text: str) -> dict[str, dict[str, int]]:
    """/proc/net/dev -> {ifname: {rx_packets: ..., tx_dropped: ...}}."""
    out: dict[str, dict[str, int]] = {}
    for line in text.splitlines()[2:]:
        name, _, rest = line.partition(":")
        values = [int(v) for v in rest.split()]
        out[name.strip()] = dict(zip(DEV_RX + DEV_TX, values, strict=False))
    return out


def softnet(text: str) -> dict[str, int]:
    """/proc/net/softnet_stat (per CPU, host-wide): backlog drops and time squeezes, summed over CPUs."""
    processed = dropped = squeezed = 0
    for line in text.splitlines():
        cols = line.split()
        if len(cols) >= 3:
            processed += int(cols[0], 16)
            dropped += int(cols[1], 16)
            squeezed += int(cols[2], 16)
    return {"backlog_processed": processed, "backlog_dropped": dropped, "time_squeeze": squeezed}


TC_COUNTERS = {"packets": "packets", "bytes": "bytes", "drops": "drops", "overlimits": "overlimits"}
TC_COUNTERS |= {"requeues": "requeues", "backlog": "backlog_bytes", "qlen": "qlen_packets"}


def tc_qdiscs(text: str) -> dict[tuple[str, str], dict[str, int]]:
    """`tc -s -j qdisc show` -> {(dev, "KIND:MAJOR"): counters}, named as sources.qdisc_stats names them
    (noqueue left out)."""
    out: dict[tuple[str, str], dict[str, int]] = {}
    for q in json.loads(text or "[]"):
        kind, dev = q.get("kind"), q.get("dev")
        if not kind or not dev or kind == "noqueue":
            continue
        major = str(q.get("handle", "0:")).split(":")[0] or "0"
        out[(dev, f"{kind}:{major}")] = {name: int(q.get(key, 0)) for key, name in TC_COUNTERS.items()}
    return out
