"""The local provider: network namespaces, veths, bridges, VXLAN, tc and cgroups on this machine.

One module per job: kernel (syscalls), netns (namespaces without forking), netlink (batched
requests), links + shaping (Layout -> requests, pure), offload (ethtool), cgroups, ovs (userspace
Open vSwitch), procs (spawn, gate, listening), features + preflight (what the kernel can do),
runtime (/run paths, registry of live builds), provider (LocalProvider).
"""

from vnetbench.providers.local.provider import LocalProvider

__all__ = ["LocalProvider"]
