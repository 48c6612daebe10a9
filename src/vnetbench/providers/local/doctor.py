"""`vnetbench doctor` without an inventory: what the local provider can build and run on this machine.

The same checks a build's preflight makes (preflight.py), for every feature at once instead of the
ones a campaign needs, each with what its absence changes — so a user learns before writing a
campaign that, say, delays will go through the userspace delay node because the kernel has no netem.
"""

from __future__ import annotations

import os
import platform
import resource
import subprocess
from dataclasses import asdict, dataclass
from typing import Any

from vnetbench.drivers.iperf3 import congestion_note
from vnetbench.drivers.iperf3 import version as iperf3_version
from vnetbench.drivers.ping import version as ping_version
from vnetbench.providers.local import cgroups, delaynode, features, limits, ovs
from vnetbench.providers.local.preflight import missing_tools


@dataclass
class Check:
    what: str
    ok: bool
    detail: str  # a version, the kernel option, or why it failed
    needed: bool  # a campaign with the defaults (veth links, network shaping, iperf3, ping) needs it
    without: str  # what a campaign cannot do, or does instead, when it is missing
    note: str = ""  # what a user should know even though the check passed


# kind -> (needed by a default campaign, what its absence changes)
KERNEL_USES = {
    "veth": (True, "no link can be built"),
    "bridge": (False, "no `kind: linux-bridge` switch and no link between hosts"),
    "vxlan": (False, "no `overlay: vxlan` link"),
    "tbf": (True, "no `shaper: tbf` (the default shaper)"),
    "htb": (False, "no `shaper: htb` (rates above tbf's limit)"),
    "bfifo": (False, "no `shaper: htb` (its queue)"),
    "netem": (False, "delay, jitter and loss go through the userspace delay node (`emulator: auto`)"),
    "ifb": (True, "no `shaping: network` (the default): set `shaping: sender` on every link"),
    "redirect": (True, "no `shaping: network` (the default): set `shaping: sender` on every link"),
}


def _version(argv: list[str], parse: Any) -> tuple[bool, str]:
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.SubprocessError) as err:
        return False, f"not runnable ({err})"
    return True, parse(done.stdout + done.stderr)


def _tools() -> list[Check]:
    checks = []
    for tool, flag, parse, needed, without in (
        ("iperf3", "--version", iperf3_version, True, "no tcp or udp measurement"),
        ("ping", "-V", ping_version, True, "no rtt measurement"),
    ):
        missing = missing_tools([tool])
        ok, detail = (False, missing[0]) if missing else _version([tool, flag], parse)
        checks.append(Check(tool, ok, detail, needed, without))
    probe = delaynode.binary()
    ok, detail = _version([probe, "--version"], lambda s: s.strip()) if probe else (False, "not installed")
    checks.append(
        Check(
            "vnb-probe", ok, detail, False, "no delay node, no pps / trace / probe-rtt / cpushare measurement"
        )
    )
    ovs_missing = missing_tools(ovs.TOOLS)
    checks.append(
        Check(
            "Open vSwitch (userspace)",
            not ovs_missing and ovs.schema_path() is not None and os.path.exists("/dev/net/tun"),
            "; ".join(ovs_missing) or ("installed" if ovs.schema_path() else "vswitch.ovsschema missing"),
            False,
            "no `kind: ovs` switch",
        )
    )
    return checks


TCP_SYSCTL = "/proc/sys/net/ipv4"


def congestion_check(default: str, available: list[str]) -> Check:
    """The TCP congestion control a node inherits, and what that means (`congestion_note`)."""
    detail = f"{default} (available: {' '.join(available)})"
    return Check("TCP congestion control", True, detail, False, "", congestion_note(default, available))


def _congestion() -> Check:
    try:
        with open(f"{TCP_SYSCTL}/tcp_congestion_control") as f:
            default = f.read().strip()
        with open(f"{TCP_SYSCTL}/tcp_available_congestion_control") as f:
            available = f.read().split()
    except OSError as err:
        return Check(
            "TCP congestion control", False, f"unreadable ({err})", False, "TCP uses the kernel's default"
        )
    return congestion_check(default, available)


def check_machine() -> list[Check]:
    """Every check, in the order a user reads them; only the first when this process is not root."""
    root = os.geteuid() == 0
    checks = [
        Check("root", root, "" if root else "no: run as root, e.g. with sudo", True, "nothing can be built")
    ]
    if not root:
        return checks
    found = features.probe()
    checks.append(Check("network namespaces", found.netns, found.error or "", True, "nothing can be built"))
    if found.netns:
        for kind, (needed, without) in KERNEL_USES.items():
            ok = found.has(kind)
            option = "" if ok else features.KERNEL_OPTION[kind].split(" (")[0].split(": ")[-1]
            checks.append(Check(f"kernel: {kind}", ok, option, needed, without))
    checks += _tools()
    checks.append(_congestion())
    controller = cgroups.detect()
    checks.append(
        Check(
            "cgroup cpu controller",
            controller is not None,
            f"cgroup v{controller.version} at {controller.root}" if controller else "not mounted",
            False,
            "no `cpu:` quota on hosts and nodes",
        )
    )
    _, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    most = limits.namespaces_within(hard)
    checks.append(
        Check(
            "open descriptors",
            True,
            f"hard limit {hard} (≈ {most:,} namespaces)" if most is not None else "no limit",
            False,
            'larger topologies: raise the hard limit (docs/local-provider.md, "Large topologies")',
        )
    )
    return checks


def ready(checks: list[Check]) -> bool:
    """Whether a campaign with the defaults can run: every needed check passed."""
    return all(c.ok for c in checks if c.needed)


def as_json(checks: list[Check]) -> dict[str, Any]:
    return {
        "machine": platform.node(),
        "kernel": platform.release(),
        "ready": ready(checks),
        "checks": [asdict(c) for c in checks],
    }
