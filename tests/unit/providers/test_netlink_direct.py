"""Link and address requests packed without pyroute2 (netlink._direct) are byte for byte pyroute2's encoding.

The layouts: the integration tests' every-link fixture (veths into Linux bridges and OVS, a
cross-host wire, VXLAN between sites, shaped links) and a sites topology of 60 nodes on 10 hosts.
Every request the provider would send is encoded both ways; the reference is pyroute2's ifinfmsg.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from vnetbench.layout import build_layout
from vnetbench.providers.local import links, netlink
from vnetbench.spec import parse_spec

FIXTURE = Path(__file__).parents[2] / "integration" / "providers" / "fixtures" / "every_link.yaml"


def _sites(nodes: int = 60, hosts: int = 10) -> str:
    per = nodes // hosts
    lines = ["name: sites", "topology:", "  sites: [s1, s2, s3]", "  hosts:"]
    lines += [f"    - {{name: h{h}, site: s{h % 3 + 1}}}" for h in range(1, hosts + 1)]
    lines += ["  nodes:"] + [
        f"    - {{name: n{i}, host: h{(i - 1) // per + 1}}}" for i in range(1, nodes + 1)
    ]
    lines += ["  switches:"] + [f"    - {{name: sw{h}, host: h{h}}}" for h in range(1, hosts + 1)]
    lines += ["  links:"] + [
        f"    - {{endpoints: [n{i}, sw{(i - 1) // per + 1}], rate: 100mbit}}" for i in range(1, nodes + 1)
    ]
    lines += [
        f"    - {{name: x{h}, endpoints: [n{(h - 1) * per + 1}, n{h * per + 1}], overlay: vxlan}}"
        for h in range(1, hosts)
    ]
    lines += [
        "measurements: [{name: rtt, kind: rtt}]",
        "patterns: [{name: p, kind: pairs, pairs: [[n1, n2]], measurements: [rtt]}]",
    ]
    return "\n".join(lines) + "\n"


def _pyroute2(op: netlink.Op, seq: int, monkeypatch: pytest.MonkeyPatch) -> bytes:
    with monkeypatch.context() as m:
        m.setattr(netlink, "_direct", lambda _op, _seq: None)
        m.setattr(netlink, "_templates", {})
        return netlink.encode(op, seq)


@pytest.mark.parametrize("spec", [FIXTURE.read_text(), _sites()], ids=["every-link", "sites"])
def test_direct_link_requests_equal_pyroute2s(spec: str, monkeypatch: pytest.MonkeyPatch) -> None:
    layout = build_layout(parse_spec(spec).campaign, "c0ffee01")
    fds = {name: 100 + i for i, name in enumerate(layout.namespaces)}
    ops = [op for plan in links.plan_requests(layout, fds).values() for op in plan.round1 + plan.round2]
    direct = [(seq, op) for seq, op in enumerate(ops, start=1) if netlink._direct(op, seq) is not None]
    kinds = {op.what.split()[1] for _, op in direct if op.what.startswith("create")}
    assert {"veth", "bridge"} <= kinds  # the requests a build sends most of
    assert any(op.kind == "addr" for _, op in direct)
    for seq, op in direct:
        assert netlink.encode(op, seq) == _pyroute2(op, seq, monkeypatch), op.what
    vxlans = [op for op in ops if op.what.startswith("create vxlan")]
    assert all(netlink._direct(op, 1) is None for op in vxlans)  # not known here: pyroute2 encodes them
