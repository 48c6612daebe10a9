"""Everything that would stop a build, found before anything is created — each with its fix."""

from __future__ import annotations

import os
import platform
import shutil
from collections.abc import Callable, Mapping, Sequence

from vnetbench.layout import Layout
from vnetbench.providers.local import cgroups, delaynode, features, limits, netns, ovs
from vnetbench.providers.local.procs import package_of
from vnetbench.providers.local.shaping import TBF_MAX_RATE_BPS

NETEM_FIELDS = ("delay", "jitter", "loss")


def _rate(bps: float) -> str:
    for unit, scale in (("Gbit/s", 1e9), ("Mbit/s", 1e6), ("kbit/s", 1e3)):
        if bps >= scale:
            return f"{bps / scale:g} {unit}"
    return f"{bps:g} bit/s"


def missing_tools(tools: Sequence[str]) -> list[str]:
    """One line per tool that is not installed, with the package that installs it."""
    return [
        f"{tool} is not installed: apt-get install {package_of(tool)}"
        for tool in tools
        if shutil.which(tool) is None and not os.path.exists(f"/usr/sbin/{tool}")
    ]


def _shaping_needs(layout: Layout, need: Callable[[str, str, str], None]) -> None:
    """The kernel features the layout's shapers use (`need(kind, why, fix)` notes a missing one)."""
    shaper_kinds = {i.shaper.kind for i in layout.interfaces() if i.shaper}
    if "tbf" in shaper_kinds:
        need("tbf", "rate shaping (shaper: tbf)", "use `shaper: htb`, or run where sch_tbf exists")
    if "htb" in shaper_kinds:
        need("htb", "rate shaping (shaper: htb)", "use `shaper: tbf`, or run where sch_htb exists")
        need("bfifo", "the htb shaper's queue", "run where the fifo qdiscs exist")
    if any(i.shaper.placement == "network" for i in layout.interfaces() if i.shaper):
        for kind in ("ifb", "redirect", "bfifo"):  # bfifo: the fifo qdiscs' module, the relay's pfifo
            need(kind, "a link with `shaping: network` (the default)", "set `shaping: sender` on the link")


def problems(
    layout: Layout, tools: Sequence[str] = ("iperf3", "ping"), emulation: Mapping[str, str] | None = None
) -> list[str]:
    """emulation: link -> "netem" | "delay-node" (layout/link_emulation.py); links not in it use netem."""
    if os.geteuid() != 0:
        return [
            "the local provider needs root (network namespaces, tc, cgroups): "
            "run vnetbench as root, e.g. with sudo"
        ]
    found = features.probe()
    if not found.netns:
        return [f"this kernel cannot create network namespaces ({found.error}): CONFIG_NET_NS is needed"]
    out: list[str] = []
    release = platform.release()

    def need(kind: str, why: str, fix: str) -> None:
        if not found.has(kind):
            out.append(
                f"{why} needs the kernel's {kind} ({features.KERNEL_OPTION[kind]}), which this kernel "
                f"({release}) lacks: {fix}"
            )

    if layout.veths:
        need("veth", "every link", "run on a kernel with veth support")
    if any(br.kind == "linux-bridge" for br in layout.bridges):
        need("bridge", "a switch or a link between hosts", "run on a kernel with bridge support")
    if layout.vxlans:
        labels = sorted({link.label for link in layout.links if link.overlay == "vxlan"})
        need("vxlan", f"link {', '.join(labels)} (overlay: vxlan)", "remove `overlay: vxlan` or load vxlan")
    _shaping_needs(layout, need)
    for link in layout.links:
        asked = [f for f in NETEM_FIELDS if getattr(link, f) is not None]
        emulator = (emulation or {}).get(link.label, "netem")
        if asked and emulator == "netem" and not found.has("netem"):
            out.append(
                f"link {link.label}: {'/'.join(asked)} with `emulator: netem` need the kernel's netem "
                f"qdisc (sch_netem, CONFIG_NET_SCH_NETEM), which this kernel ({release}) lacks. Fix: "
                f"set `emulator: auto` or `delay-node` on link {link.label} (a userspace delay node), "
                f"or run where netem exists (`modprobe sch_netem` works there)"
            )
        vxlan_ends = [vx for vx in layout.vxlans if vx.iface.netem and vx.iface.netem.link == link.label]
        if (asked or link.delay_hold) and emulator == "delay-node" and vxlan_ends:
            held = [f for f in ("delay_cdf", "delay_hold") if getattr(link, f) is not None]
            netem = "remove delay_hold (netem cannot hold a delay) and use" if link.delay_hold else "use"
            out.append(
                f"link {link.label}: a delay node cannot sit inside a VXLAN overlay link between "
                f"switches. Fix: put {', '.join(asked + held)} on a node's link, or {netem} "
                f"`emulator: netem` where the kernel has netem"
            )
        if link.rate and link.shaper == "tbf" and link.rate > TBF_MAX_RATE_BPS:
            out.append(
                f"link {link.label}: rate {_rate(link.rate)} is above tbf's limit of "
                f"{_rate(TBF_MAX_RATE_BPS)} (a 32-bit byte rate): use `shaper: htb` for this link"
            )

    out += missing_tools(tools) + _process_problems(layout)
    if layout.delay_nodes and delaynode.binary() is None:
        out.append("delay nodes need vnb-probe, which is not installed: `pip install .` builds it")
    if any(br.kind == "ovs" for br in layout.bridges):
        out += [m + " (userspace Open vSwitch)" for m in missing_tools(ovs.TOOLS)]
        if ovs.schema_path() is None:
            out.append("Open vSwitch's vswitch.ovsschema is missing: apt-get install openvswitch-switch")
        if not os.path.exists("/dev/net/tun"):
            out.append("userspace Open vSwitch needs /dev/net/tun (the tun module) for its bridge port")
    if layout.cpu_quota and cgroups.detect() is None:
        keys = ", ".join(sorted(layout.cpu_quota))
        out.append(
            f"CPU quotas ({keys}) need the cgroup cpu controller, which is not mounted: mount cgroup2 "
            "with the cpu controller enabled (or cgroup v1's cpu), or remove `cpu:` from hosts and nodes"
        )
    return out


def _process_problems(layout: Layout) -> list[str]:
    """What this process and this machine cannot take: descriptors, namespaces' names already taken."""
    out = [p for p in [limits.descriptor_problem(len(layout.namespaces))] if p]
    for name in layout.namespaces:
        if os.path.exists(netns.path_of(name)):
            out.append(
                f"network namespace {name} already exists (left by a killed run?): run `vnetbench clean`"
            )
    return out
