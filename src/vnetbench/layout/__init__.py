"""spec -> layout: the exact kernel objects that realise a topology, as pure data (no kernel access).

- `objects`         Interface, VethPair, Bridge, Vxlan, Shaper, Netem, DelayNode and the `Layout`
- `build`           `build_layout(campaign, campaign_id)`: every name, address, interface and shaper
- `link_emulation`  where a link's delay/jitter/loss needs a delay node, splice one in (and its command)
- `flowpath`        the hops a packet of a flow crosses (what telemetry reads, what loss analysis walks)
- `summary`         a layout as JSON, kept with every build (provenance)

How a topology is realised (the emulated data centre):
- every node (VM) and every host (hypervisor) is a network namespace; a `wan` namespace carries
  the underlay of VXLAN overlays between hosts;
- a node–node link on one host is a veth pair straight between the two node namespaces;
- a node–switch link is a veth from the node into its host's namespace, enslaved to the switch;
- a link between different hosts is carried host to host by a veth "wire" (same site, plain L2)
  or a VXLAN tunnel over the underlay (`overlay: vxlan`); a node end attaches via a per-link bridge;
- each direction is shaped once, at the interface where it leaves its sending end: with the link's
  `shaping: network` (the default) behind a cloning redirect through an IFB relay, so the sender
  never feels the queue and overload is dropped there; with `shaping: sender` as that interface's
  own qdisc, which pushes back on the sending socket.
Nothing is created in the root namespace, so deleting our namespaces deletes every link with them.
The L2 segments and their addresses follow from the spec alone (`spec/segments.py`).
"""

from vnetbench.layout.build import build_layout, link_one_way_ns, link_shaper
from vnetbench.layout.objects import (
    Bridge,
    DelayNode,
    Interface,
    Layout,
    Netem,
    Placement,
    Shaper,
    VethPair,
    Vxlan,
)

__all__ = [
    "Bridge",
    "DelayNode",
    "Interface",
    "Layout",
    "Netem",
    "Placement",
    "Shaper",
    "VethPair",
    "Vxlan",
    "build_layout",
    "link_one_way_ns",
    "link_shaper",
]
