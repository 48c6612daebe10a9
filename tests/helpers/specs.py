"""Campaign specs shared by several test modules."""

from __future__ import annotations

from typing import Any

import pytest

from vnetbench.spec import parse_spec
from vnetbench.spec.loader import SpecInvalid

# Three hosts on two sites, an OVS switch, a VXLAN link across the sites and a direct node–node link.
SPEC = """
name: t
topology:
  sites: [a, b]
  hosts: [{name: h1, site: a}, {name: h2, site: a}, {name: h3, site: b}]
  nodes: [{name: n1, host: h1}, {name: n2, host: h1}, {name: n3, host: h2}, {name: n4, host: h3}]
  switches: [{name: sw, host: h1, kind: ovs}]
  links:
    - {endpoints: [n1, sw], rate: 100mbit}
    - {endpoints: [n2, sw], rate: 100mbit}
    - {endpoints: [n3, sw], rate: 50mbit}
    - {name: wan, endpoints: [n1, n4], rate: 10mbit, overlay: vxlan}
    - {name: direct, endpoints: [n1, n2]}
measurements:
  - {name: tcp, kind: tcp, duration: 2s}
  - {name: udp, kind: udp, duration: 2s, rate: link, rate_factor: 2}
patterns:
  - {kind: pairs, pairs: [[n1, n3]], measurements: [tcp, udp]}
  - {kind: star, source: n1, destinations: [n2, n3], measurements: [tcp]}
  - {kind: mesh, nodes: [n1, n2, n3], measurements: [tcp], max_parallel: 2}
schedule: {repetitions: 3, rebuild: true, interval: 60s}
"""


def two_node_spec(name: str, measurements: dict[str, str], tail: str = "") -> str:
    """Campaign `name`: two nodes on one 100 mbit link, one pattern measuring n1 -> n2 with every
    measurement given (name -> its other fields, in YAML flow style), then `tail` (e.g. a schedule)."""
    listed = "".join(f"  - {{name: {m}, {fields}}}\n" for m, fields in measurements.items())
    return (
        f"name: {name}\n"
        "topology:\n"
        "  nodes: [{name: n1}, {name: n2}]\n"
        "  links:\n"
        "    - {endpoints: [n1, n2], rate: 100mbit}\n"
        f"measurements:\n{listed}"
        "patterns:\n"
        f"  - {{name: p, kind: pairs, pairs: [[n1, n2]], measurements: [{', '.join(measurements)}]}}\n"
        f"{tail}"
    )


# One TCP measurement: a campaign stored without measuring it.
TWO_NODE_TCP = two_node_spec("kept", {"tcp": "kind: tcp, duration: 3s"})

# Two nodes, RTT and TCP, on a 10-minute monitoring schedule.
MONITORED_SPEC = """\
name: mon
topology:
  nodes: [{name: a}, {name: b}]
  links: [{endpoints: [a, b], rate: 100mbit}]
measurements:
  - {name: rtt, kind: rtt, count: 3}
  - {name: tcp, kind: tcp, duration: 1s}
patterns:
  - {name: p, kind: pairs, pairs: [[a, b]], measurements: [rtt, tcp]}
monitor: {repeat: PT10M, slip: 30s}
"""

# Four nodes on one switch, a's link shaped and d held to half a core: the packet-rate specs' topology.
FOUR_NODE_STAR = """topology:
  nodes: [{name: a}, {name: b}, {name: c}, {name: d, cpu: 0.5}]
  switches: [{name: sw}]
  links:
    - {endpoints: [a, sw], rate: 100mbit}
    - {endpoints: [b, sw]}
    - {endpoints: [c, sw]}
    - {endpoints: [d, sw]}
"""


# One link `wan` between two nodes; LINK is replaced by the link's fields (its line is line 5).
ONE_LINK_SPEC = """\
name: d
topology:
  nodes: [{name: a}, {name: b}]
  links:
    - {name: wan, endpoints: [a, b], LINK}
measurements: [{name: p, kind: rtt}]
patterns: [{kind: pairs, pairs: [[a, b]], measurements: [p]}]
"""


def one_link_campaign(fields: str) -> Any:
    """The parsed campaign of ONE_LINK_SPEC with `fields` on its link."""
    return parse_spec(ONE_LINK_SPEC.replace("LINK", fields), "d.yaml").campaign


def one_link_error(fields: str) -> str:
    """'path: message' of the one error ONE_LINK_SPEC with `fields` on its link gets, on the link's line."""
    with pytest.raises(SpecInvalid) as info:
        one_link_campaign(fields)
    (err,) = info.value.errors
    assert err.line == 5, err
    return f"{err.path}: {err.message}"
