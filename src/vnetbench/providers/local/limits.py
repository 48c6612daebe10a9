"""Process limits a large topology meets: open descriptors (RLIMIT_NOFILE).

While the provider builds, every namespace holds two descriptors (the namespace itself, for setns and
for moving veth peers, and a netlink socket); once built, one (the namespace, for spawning tools and
for telemetry). A 1,000-node campaign therefore needs about 2,000 descriptors at its peak, above the
soft limit of 1,024 that many systems start processes with. The soft limit may be raised up to the
hard limit without privileges, so the provider does that; a hard limit that is too low is a
preflight problem with its fix (docs/local-provider.md, "Large topologies").
"""

from __future__ import annotations

import os
import resource

DESCRIPTORS_PER_NAMESPACE = 2  # during the build: the namespace's fd and its netlink socket
# The store, the tools' output files and pidfds, telemetry's sockets, pipes of the start gate ...
RESERVE_DESCRIPTORS = 512


def descriptors_needed(namespaces: int) -> int:
    """Descriptors a build of this many namespaces may hold at once, with room for a step's tools."""
    return namespaces * DESCRIPTORS_PER_NAMESPACE + RESERVE_DESCRIPTORS


def open_descriptors() -> int:
    """Descriptors this process holds now (the store's, a caller's, the interpreter's)."""
    try:
        return len(os.listdir("/proc/self/fd"))
    except OSError:
        return 0


def descriptor_problem(namespaces: int) -> str | None:
    """Why the hard limit cannot fit this build (with the fix), or None."""
    needed = descriptors_needed(namespaces)
    _, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard == resource.RLIM_INFINITY or hard >= needed:
        return None
    return (
        f"{namespaces} network namespaces need about {needed} open descriptors, above this process's "
        f"hard limit of {hard} (RLIMIT_NOFILE): raise it, e.g. `ulimit -Hn {needed}` as root before "
        f"running vnetbench, LimitNOFILE={needed} in a systemd unit, or a `nofile` line in "
        "/etc/security/limits.conf"
    )


def raise_descriptor_limit(namespaces: int) -> tuple[int, int]:
    """Raise the soft limit to the hard one when the build needs more than is left below it;
    returns (old soft, new soft)."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft == resource.RLIM_INFINITY or soft >= open_descriptors() + descriptors_needed(namespaces):
        return soft, soft
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    return soft, hard


def namespaces_within(limit: int) -> int | None:
    """The most namespaces a build can hold with this many descriptors (None: no limit)."""
    if limit == resource.RLIM_INFINITY:
        return None
    return max(0, (limit - RESERVE_DESCRIPTORS) // DESCRIPTORS_PER_NAMESPACE)
