"""A saturated userspace OVS bridge: where does the loss report put the lost datagrams? (root)

18-byte UDP payloads at a high rate through an OVS switch (datapath_type=netdev) on a host with a
small CPU quota: ovs-vswitchd, which forwards every packet in userspace, cannot keep up. The OVS
hop must be named, with OVS's own port counter when OVS counted the drop, or else as the exact
hop where the count fell ("no kernel or OVS counter saw it").
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers.integration.loss_runs import run_spec
from tests.helpers.integration.requirements import missing
from vnetbench.analysis.loss import OVS_UNEXPLAINED
from vnetbench.analysis.loss import loss_analysis as analysis
from vnetbench.providers.local.ovs import TOOLS, schema_path
from vnetbench.store import schema as t

SKIP = missing(("iperf3", *TOOLS), cpu_quota=True) or (
    None if schema_path() else "Open vSwitch's schema is missing"
)
pytestmark = [pytest.mark.root, pytest.mark.skipif(SKIP is not None, reason=SKIP or "")]

SPEC = """
name: ovs-saturated
topology:
  hosts: [{name: h1, cpu: 0.3}]
  nodes: [{name: a}, {name: b}]
  switches: [{name: sw, kind: ovs}]
  links:
    - {endpoints: [a, sw]}
    - {endpoints: [b, sw]}
measurements:
  - {name: udp, kind: udp, duration: 3s, rate: 400mbit, length: 18}
patterns:
  - {kind: pairs, pairs: [[a, b]], measurements: [udp]}
telemetry: {interval: 500ms}
"""


def test_saturated_ovs_bridge_names_the_ovs_hop(tmp_path: Path) -> None:
    store, cid = run_spec(tmp_path, SPEC)
    (loc,) = analysis(store, cid)["loss_localization"]
    with store.engine.connect() as conn:
        scopes = {r[0] for r in conn.execute(t.telemetry.select().with_only_columns(t.telemetry.c.scope))}
    ovs_scopes = sorted(s for s in scopes if s.startswith("ovs:"))
    # OVS's counters were sampled: both ports the flow crosses, and the datapath
    assert [s.rsplit("/", 1)[1] for s in ovs_scopes] == ["datapath", "p0x0", "p1x0"], scopes
    assert loc["app_lost"] > 0.05 * loc["sent"], "the OVS bridge should have been saturated"
    stages = {s["key"]: s for s in loc["stages"]}
    ovs_stages = [k for k, s in stages.items() if s["after_ovs"]]
    assert len(ovs_stages) == 1
    # the verdict is the hop right after the OVS bridge ...
    assert loc["hop_key"] == ovs_stages[0], loc
    # ... explained by an OVS port counter, or said to be seen by no counter at that exact hop
    if loc["counter"] is not None:
        assert loc["counter"].startswith(("OVS port ", "OVS datapath ")), loc["counter"]
        assert loc["counter_scope"] in ovs_scopes
        assert loc["counter_packets"] == pytest.approx(loc["hop_lost"], rel=0.01)  # and all of it
    else:
        assert loc["cause"] == OVS_UNEXPLAINED
    # the hops' counts add up: the loss at the OVS hop is most of the application's loss
    assert loc["hop_lost"] > 0.5 * loc["app_lost"]
