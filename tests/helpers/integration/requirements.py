"""What integration and e2e tests need from this machine, checked once, as a skip reason that names it.

CI runs as root on a kernel with namespaces, veth, bridges and tbf, so there these return None and
every test runs; elsewhere the reason says which feature or package is missing.
"""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

from vnetbench.providers.local import cgroups, features

PACKAGE_OF = {"ping": "iputils-ping", "chrt": "util-linux"}


def missing(tools: tuple[str, ...] = (), cpu_quota: bool = False, probe: bool = False) -> str | None:
    """None when root, namespaces, veth, bridge, tbf and the named tools are there; else why not."""
    if os.geteuid() != 0:
        return "needs root: network namespaces, veth, tc and cgroups (run the suite as root)"
    found = features.probe()
    if not found.netns:
        return f"network namespaces unavailable (CONFIG_NET_NS): {found.error}"
    for kind in ("veth", "bridge", "tbf"):
        if not found.has(kind):
            return f"the kernel lacks {kind} ({features.KERNEL_OPTION[kind]})"
    for tool in tools:
        if shutil.which(tool) is None:
            return f"{tool} is not installed (apt-get install {PACKAGE_OF.get(tool, tool)})"
    if cpu_quota and cgroups.detect() is None:
        return "no cgroup cpu controller (cfs quota) for `cpu: 0.5`"
    if probe and not (Path(sys.executable).parent / "vnb-probe").is_file():
        return "vnb-probe is not built next to this Python (pip install -e .)"
    return None
