"""Open vSwitch's own counters, for hops that cross a userspace OVS bridge.

The userspace datapath (datapath_type=netdev) forwards in ovs-vswitchd, not in the kernel: a packet
it drops there moves no kernel counter. ovs-vswitchd keeps per-port counters (RX/TX packets, errors,
dropped ...) and per-datapath ones (lookups hit / missed / lost). They are read live each interval
with `ovs-appctl -t <rundir>/ovs-vswitchd.ctl dpctl/show -s` from OUR daemon's control socket (never
the system's default), as an argv list, from the controller (a unix socket needs no namespace).
(The Interface table's `statistics` column is not used: ovs-vswitchd writes it only every 5 s, so a
short measurement would see zeros.)

Stored under the scopes `ovs:NS/PORT` (rx_packets, rx_dropped, tx_dropped ...) and
`ovs:NS/datapath` (lookups_hit, lookups_missed, lookups_lost).
"""

from __future__ import annotations

import re
import subprocess
from collections.abc import Callable

from vnetbench.telemetry.sources import Counters

APPCTL_TIMEOUT_S = 5
# appctl(*args) -> stdout of ovs-appctl against our ovs-vswitchd
Appctl = Callable[..., str]
PORT_LINE = re.compile(r"^\s*port \d+: (\S+)")
DATAPATH = "datapath"


def dpctl_show(text: str) -> dict[str, dict[str, int]]:
    """`ovs-appctl dpctl/show -s` -> port (or "datapath") -> counter -> value ("?" left out).

    "RX packets:5 errors:0 dropped:1" -> rx_packets, rx_errors, rx_dropped; "collisions:0" as is;
    "lookups: hit:3 missed:2 lost:0" -> datapath lookups_hit, lookups_missed, lookups_lost.
    """
    out: dict[str, dict[str, int]] = {}
    current: dict[str, int] | None = None
    for line in text.splitlines():
        port = PORT_LINE.match(line)
        if port:
            current = out.setdefault(port.group(1), {})
            continue
        tokens = line.split()
        if not tokens:
            continue
        if tokens[0] == "lookups:":
            target, prefix = out.setdefault(DATAPATH, {}), "lookups"
            tokens = tokens[1:]
        elif current is not None:
            target, prefix = current, ""
        else:
            continue
        for token in tokens:
            if token in ("RX", "TX"):
                prefix = token.lower()
                continue
            key, sep, value = token.partition(":")
            if sep and value.isdigit():
                target[f"{prefix}_{key}" if prefix else key] = int(value)
    return out


def appctl_of(ctl: str, env: dict[str, str]) -> Appctl:
    """A caller of our own ovs-vswitchd through its control socket `ctl` (a path)."""

    def run(*args: str) -> str:
        argv = ["ovs-appctl", "-t", ctl, f"--timeout={APPCTL_TIMEOUT_S}", *args]
        result = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=APPCTL_TIMEOUT_S + 1)
        if result.returncode != 0:
            raise RuntimeError(f"ovs-appctl failed: {result.stderr.strip()[-300:]}")
        return result.stdout

    return run


class OvsSource:
    """The counters of the OVS ports a flow crosses (and the datapath's) in one namespace's OVS."""

    def __init__(self, ns: str, appctl: Appctl, ports: set[str]) -> None:
        self.ns = ns
        self.appctl = appctl
        self.ports = ports

    def read(self, out: Counters) -> None:
        for port, counters in dpctl_show(self.appctl("dpctl/show", "-s")).items():
            if port in self.ports or port == DATAPATH:
                out[f"ovs:{self.ns}/{port}"] = counters

    def close(self) -> None:
        pass
