"""OVS's own counters: parsing `ovs-appctl dpctl/show -s` (captured from a saturated run) and their
use by the loss localization at an OVS hop."""

from __future__ import annotations

from tests.helpers.counters import _totals
from tests.helpers.specs import SPEC
from vnetbench.analysis.loss import OVS_UNEXPLAINED, OVS_UNREAD, localize
from vnetbench.layout import build_layout
from vnetbench.layout.flowpath import FlowPath, flow_path
from vnetbench.spec import parse_spec
from vnetbench.telemetry.ovsstats import OvsSource, dpctl_show

# ovs-appctl -t .../ovs-vswitchd.ctl dpctl/show -s (OVS 3.1.0, userspace datapath), the final reading
# of tests/integration/telemetry/test_ovs_drops.py: 101051 frames in on p0x0, 60979 looked up.
CAPTURED = """\
netdev@ovs-netdev:
  lookups: hit:60975 missed:4 lost:0
  flows: 4
  port 0: ovs-netdev (tap)
    RX packets:0 errors:0 dropped:0 overruns:0 frame:0
    TX packets:0 errors:0 dropped:0 aborted:0 carrier:0
    collisions:0
    RX bytes:0  TX bytes:0
  port 1: sw0 (tap)
    RX packets:0 errors:0 dropped:0 overruns:0 frame:0
    TX packets:0 errors:0 dropped:1 aborted:0 carrier:0
    collisions:0
    RX bytes:0  TX bytes:0
  port 2: p1x0
    RX packets:18 errors:0 dropped:0 overruns:0 frame:0
    TX packets:60961 errors:0 dropped:0 aborted:0 carrier:0
    collisions:0
    RX bytes:5265 (5.1 KiB)  TX bytes:3658265 (3.5 MiB)
  port 3: p0x0
    RX packets:101051 errors:0 dropped:0 overruns:0 frame:0
    TX packets:18 errors:0 dropped:0 aborted:0 carrier:0
    collisions:0
    RX bytes:6063671 (5.8 MiB)  TX bytes:5265 (5.1 KiB)
"""


def test_dpctl_show_parses_ports_and_datapath() -> None:
    stats = dpctl_show(CAPTURED)
    assert stats["datapath"] == {"lookups_hit": 60975, "lookups_missed": 4, "lookups_lost": 0}
    assert stats["p0x0"]["rx_packets"] == 101051 and stats["p0x0"]["rx_bytes"] == 6063671
    assert stats["p1x0"]["tx_packets"] == 60961 and stats["p1x0"]["tx_bytes"] == 3658265
    assert stats["sw0"]["tx_dropped"] == 1 and stats["sw0"]["collisions"] == 0
    assert set(stats["p0x0"]) >= {"rx_dropped", "rx_errors", "rx_overruns", "tx_dropped", "tx_aborted"}
    assert dpctl_show(CAPTURED.replace("dropped:1", "dropped:?"))["sw0"].get("tx_dropped") is None


def test_ovs_source_keeps_the_flow_s_ports_and_the_datapath() -> None:
    calls: list[tuple[str, ...]] = []

    def appctl(*args: str) -> str:
        calls.append(args)
        return CAPTURED

    out: dict = {}
    OvsSource("ns-h1", appctl, {"p0x0", "p1x0"}).read(out)
    assert calls == [("dpctl/show", "-s")]
    assert sorted(out) == ["ovs:ns-h1/datapath", "ovs:ns-h1/p0x0", "ovs:ns-h1/p1x0"]


def _through_ovs(path: FlowPath, sent: int, lost: int, ovs: dict[str, dict[str, int]]) -> dict:
    """Totals of a flow that loses `lost` datagrams inside the OVS bridge, with OVS's counters `ovs`."""
    totals = _totals(path, sent, 0, 0)
    fwd = next(i for i, h in enumerate(path.hops) if h.kind == "ovs")
    for hop in path.hops[fwd + 1 :]:
        metrics = totals[f"if:{hop.ns}/{hop.name}"]
        for metric in metrics:
            metrics[metric] -= lost
    snmp = totals[f"snmp:{path.dst_ns}"]
    snmp["Ip.InDelivers"] -= lost
    snmp["Udp.InDatagrams"] -= lost
    for name, counters in ovs.items():
        totals[f"ovs:{path.hops[fwd].ns}/{name}"] = counters
    return totals


def test_loss_at_an_ovs_hop_is_explained_by_ovs_counters() -> None:
    layout = build_layout(parse_spec(SPEC).campaign, "c0ffee00")
    path = flow_path(layout, "n1", "n2")  # n1 -> host h1's OVS bridge sw0 -> n2
    # OVS counted the drop on the egress port
    totals = _through_ovs(path, 10_000, 2_000, {"p1x0": {"tx_dropped": 2_000}, "p0x0": {}})
    loc = localize(path, totals, 10_000, 8_000)
    assert loc.hop_key == "tx:host:h1/p1x0" and loc.cause == "bridge/OVS drop"
    assert loc.counter == "OVS port host:h1/p1x0 tx_dropped" and loc.counter_packets == 2_000
    assert loc.counter_scope == f"ovs:{path.hops[2].ns}/p1x0" and loc.explained_packets == 2_000
    # OVS never read them: its ports received 10 000 + 12 frames, its datapath looked up 8 012
    ovs = {
        "p0x0": {"rx_packets": 10_012},
        "p1x0": {"tx_packets": 8_012},
        "datapath": {"lookups_hit": 8_008, "lookups_missed": 4},
    }
    loc = localize(path, _through_ovs(path, 10_000, 2_000, ovs), 10_000, 8_000)
    assert loc.hop_key == "tx:host:h1/p1x0" and loc.cause == OVS_UNREAD
    assert loc.counter is not None and loc.counter.startswith("OVS datapath host:h1/sw0")
    assert loc.counter_packets == 2_000
    # no OVS counter moved at all (e.g. OVS not sampled): unexplained, but at exactly that hop
    loc = localize(path, _through_ovs(path, 10_000, 2_000, {}), 10_000, 8_000)
    assert loc.hop_key == "tx:host:h1/p1x0" and loc.cause == OVS_UNEXPLAINED and loc.counter is None


def test_hook_reads_our_ovs_for_ovs_hops_and_stores_the_flow_s_ports() -> None:
    from vnetbench.providers.local.ovs import OvsInstance
    from vnetbench.telemetry.observer import _Flow, _ovs_sources, _rows_for
    from vnetbench.telemetry.sampler import Result, Row

    layout = build_layout(parse_spec(SPEC).campaign, "c0ffee00")
    path = flow_path(layout, "n1", "n2")
    ns = path.hops[2].ns

    class Provider:  # only the accessor the hook uses; the instance is a real (unstarted) one
        def ovs_instance(self, name: str) -> OvsInstance | None:
            return OvsInstance(name, "/run/vnetbench/c0ffee00/ovs-h1") if name == ns else None

    (source,) = _ovs_sources(Provider(), [path])  # type: ignore[arg-type]
    assert source.ns == ns and source.ports == {"p0x0", "p1x0"}
    assert _ovs_sources(None, [path]) == []  # no local namespace access (a remote provider): none
    result = Result(0, 1)
    result.rows = [
        Row(1, f"ovs:{ns}/p0x0", "rx_packets", 5.0),
        Row(1, f"ovs:{ns}/datapath", "lookups_hit", 4.0),
        Row(1, f"ovs:{ns}/other", "rx_packets", 9.0),  # a port not on this flow's path
    ]
    flow = _Flow(None, path, None, {})  # type: ignore[arg-type]
    assert [r["scope"] for r in _rows_for(flow, result)] == [f"ovs:{ns}/p0x0", f"ovs:{ns}/datapath"]
