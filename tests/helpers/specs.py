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

# Two nodes, one 100 mbit link, one TCP measurement: a campaign stored without measuring it.
TWO_NODE_TCP = """\
name: kept
topology:
  nodes: [{name: n1}, {name: n2}]
  links:
    - {endpoints: [n1, n2], rate: 100mbit}
measurements:
  - {name: tcp, kind: tcp, duration: 3s}
patterns:
  - {name: p, kind: pairs, pairs: [[n1, n2]], measurements: [tcp]}
"""

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
