"""Telemetry without root: /proc parsers, flow paths from the layout, fragments, loss localization
on known counter totals, the sampler's deltas, and the tool-CPU table."""

from __future__ import annotations

import pandas as pd
import pytest

from tests.helpers.counters import _totals
from tests.helpers.specs import SPEC
from tests.helpers.timing import wait_until
from vnetbench.analysis.cpu import correlation, tool_cpu_table
from vnetbench.analysis.loss import Localization, localize
from vnetbench.kinds.overhead import fragments_per_datagram
from vnetbench.layout import build_layout
from vnetbench.layout.flowpath import FlowPath, flow_path, mark_shared
from vnetbench.spec import parse_spec
from vnetbench.telemetry import procfs
from vnetbench.telemetry.sampler import Sampler

SNMP = """Ip: Forwarding DefaultTTL InReceives InHdrErrors InAddrErrors ForwDatagrams InUnknownProtos InDiscards InDelivers OutRequests OutDiscards OutNoRoutes ReasmTimeout ReasmReqds ReasmOKs ReasmFails FragOKs FragFails FragCreates
Ip: 2 64 911309 0 0 0 0 0 154659 1187 0 0 0 907980 151330 0 0 0 0
Udp: InDatagrams NoPorts InErrors OutDatagrams RcvbufErrors SndbufErrors InCsumErrors IgnoredMulti MemErrors
Udp: 151312 40 19 41 19 0 0 0 0
"""
DEV = """Inter-|   Receive                                                |  Transmit
 face |bytes    packets errs drop fifo frame compressed multicast|bytes    packets errs drop fifo colls carrier compressed
  eth0: 1000 10 0 2 0 0 0 0 5000 50 0 3 0 0 0 0
"""


def test_proc_parsers_read_the_onl_netstat_example() -> None:
    snmp = procfs.snmp(SNMP)
    # the ONL study's netstat -s: 907,980 reassemblies required, 151,330 OK (6 fragments each), 19 errors
    assert snmp["Ip.ReasmReqds"] == 907980 and snmp["Ip.ReasmOKs"] == 151330
    assert snmp["Udp.RcvbufErrors"] == 19 and snmp["Udp.InErrors"] == 19
    assert "Udp.IgnoredMulti" not in snmp  # read but not kept
    dev = procfs.netdev(DEV)["eth0"]
    assert (dev["rx_packets"], dev["rx_dropped"], dev["tx_packets"], dev["tx_dropped"]) == (10, 2, 50, 3)
    cpu = procfs.cpu_times("cpu  10 0 20 30 0 0 5 1\ncpu0 10 0 20 30 0 0 5 1\n")
    assert (
        cpu["cpu"]["softirq_ns"] == 5 * procfs.NS_PER_TICK and cpu["cpu0"]["steal_ns"] == procfs.NS_PER_TICK
    )
    stat = "42 (iperf3 (x) y) R 1 2 3 4 5 6 7 8 9 10 300 40 0 0 20 0 1 0 99 0"
    assert procfs.process_cpu(stat) == {
        "user_ns": 300 * procfs.NS_PER_TICK,
        "system_ns": 40 * procfs.NS_PER_TICK,
    }
    assert procfs.softnet("00000010 00000002 00000001\n00000001 00000003 00000000\n")["backlog_dropped"] == 5


def test_fragments_per_datagram() -> None:
    assert fragments_per_datagram(1400, 1500) == 1
    assert fragments_per_datagram(1472, 1500) == 1
    assert fragments_per_datagram(1473, 1500) == 2
    assert fragments_per_datagram(8192, 1500) == 6  # the ONL study's 8 KB datagrams: 6 fragments
    assert fragments_per_datagram(18, 1500) == 1


def test_flow_paths_through_switch_wire_and_vxlan() -> None:
    layout = build_layout(parse_spec(SPEC).campaign, "c0ffee00")
    same_switch = flow_path(layout, "n1", "n2")
    assert [(h.label, h.direction, h.shaper) for h in same_switch.hops] == [
        ("node:n1/eth0", "tx", "tbf, network shaping"),
        ("host:h1/p0x0", "rx", None),
        ("host:h1/sw0", "fwd", None),
        ("host:h1/p1x0", "tx", "tbf, network shaping"),
        ("node:n2/eth0", "rx", None),
    ]
    assert same_switch.hops[2].kind == "ovs"
    wire = [h.label for h in flow_path(layout, "n1", "n3").hops]
    assert wire[3:6] == ["host:h1/w2", "host:h2/w2", "host:h2/lb2"]  # host-to-host wire, then n3's bridge
    tunnel = flow_path(layout, "n4", "n1")
    kinds = [(h.label, h.kind) for h in tunnel.hops]
    assert ("host:h3/vx3", "vxlan") in kinds and ("wan/wan0", "linux-bridge") in kinds
    assert tunnel.hops[-1].label == "node:n1/eth1" and tunnel.namespaces[0] == "vnbc0ffee00-n-n4"
    assert FlowPath.from_json(tunnel.to_json()) == tunnel


@pytest.mark.parametrize("k", [1, 6])
def test_localize_finds_the_hop_and_the_counter(k: int) -> None:
    layout = build_layout(parse_spec(SPEC).campaign, "c0ffee00")
    path = flow_path(layout, "n1", "n2")
    loc = localize(path, _totals(path, 10_000, 3_000, 100, k), 10_000, 6_900, fragments=k)
    assert loc.hop == "sent by host:h1/p1x0 (tbf, network shaping)" and loc.cause == "qdisc drop"
    assert loc.counter == "tbf drops on host:h1/p1x0" and loc.counter_packets == 3000
    socket = next(s for s in loc.stages if s.key == "socket")
    assert socket.lost == 100 and socket.explainers[0].counter == "Udp.RcvbufErrors on node:n2"
    assert loc.explained_packets == 3100 == loc.app_lost
    assert all(s.lost in (None, 0) for s in loc.stages if s.key not in ("socket", "tx:host:h1/p1x0"))
    loc = localize(path, _totals(path, 10_000, 0, 2_000, k), 10_000, 8_000, fragments=k)
    assert loc.hop == "accepted by the receiver's socket" and loc.cause == "socket buffer full"
    no_loss = localize(path, _totals(path, 10_000, 0, 0, k), 10_000, 10_000, fragments=k)
    assert no_loss.hop is None and no_loss.cause is None
    unexplained = _totals(path, 10_000, 0, 0, k)
    unexplained[f"snmp:{path.dst_ns}"]["Ip.InDelivers"] -= 500  # vanished with no counter
    unexplained[f"snmp:{path.dst_ns}"]["Udp.InDatagrams"] -= 500
    loc = localize(path, unexplained, 10_000, 9_500, fragments=k)
    assert loc.hop_key == "receiver-ip" and loc.cause.startswith("unexplained")


class _Counter:
    def __init__(self) -> None:
        self.n = 0

    def read(self, out: dict) -> None:
        self.n += 1
        out["cpu"] = {"user_ns": 10 * self.n, "idle_ns": 5}
        out["if:x/eth0"] = {"tx_packets": 100 * self.n, "rx_packets": 7}
        out["qdisc:x/eth0/tbf:1"] = {"drops": 0, "backlog_bytes": 1500}


def test_sampler_keeps_deltas_and_its_own_cost() -> None:
    source = _Counter()
    sampler = Sampler([source], interval_ns=20_000_000)
    sampler.start()
    # the sampler's thread may be slow to run on a loaded machine: wait for its readings, not a time
    wait_until(lambda: source.n, lambda n: n >= 6, timeout=10)
    result = sampler.stop()
    assert result.readings == source.n - 1 >= 4  # baseline + readings
    tx = [r.value for r in result.rows if r.metric == "tx_packets"]
    assert tx == [100.0] * result.readings  # deltas, not totals
    assert not [r for r in result.rows if r.metric == "rx_packets"]  # zero deltas left out
    assert [r.value for r in result.rows if r.metric == "idle_ns"] == [
        0.0
    ] * result.readings  # cpu always kept
    assert {r.value for r in result.rows if r.metric == "backlog_bytes"} == {1500.0}  # gauges as read
    assert 0 < result.sampler_cpu_ns < result.duration_ns


def test_tool_cpu_table_and_correlation() -> None:
    df = pd.DataFrame(
        {
            "kind": ["udp", "udp", "tcp", "udp", "udp"],
            "rate_bps": [10e6, 10e6, 10e6, 100e6, 100e6],
            "sender_cpu_ratio": [0.04, 0.06, 0.001, 0.2, 0.1],
            "receiver_cpu_ratio": [0.01, 0.02, 0.0, 0.05, 0.07],
            "tool_sender_cpu_ratio": [0.05] * 5,
            "tool_receiver_cpu_ratio": [None] * 5,
            "host_busy_ratio": [0.1, 0.2, 0.3, 0.4, 0.5],
            "loss_ratio": [0.0, 0.01, None, 0.03, 0.04],
        }
    )
    table = {(r["rate_bps"], r["kind"]): r for r in tool_cpu_table(df)}
    assert table[(10e6, "udp")]["sender_cpu_percent"] == pytest.approx(5.0)
    assert table[(10e6, "udp")]["exogeni_sender_cpu_percent"] == 4.0  # ExoGENI Table 18
    assert table[(100e6, "udp")]["exogeni_receiver_cpu_percent"] == 6.0  # Table 19
    assert table[(10e6, "tcp")]["receiver_cpu_percent"] == 0.0
    assert table[(10e6, "udp")]["tool_receiver_cpu_percent"] is None
    corr = correlation(df)
    assert corr["n"] == 4 and corr["r"] == pytest.approx(1.0)  # exactly linear


def test_flows_started_together_do_not_count_what_they_share() -> None:
    layout = build_layout(parse_spec(SPEC).campaign, "c0ffee00")
    to_n2, to_n3 = flow_path(layout, "n1", "n2"), flow_path(layout, "n1", "n3")
    mark_shared([to_n2, to_n3])  # a star from n1: n1's interface and stack carry both flows
    assert "src" in to_n2.shared and "dst" not in to_n2.shared
    assert "vnbc0ffee00-n-n1/eth0/tx" in to_n2.shared and "vnbc0ffee00-h-h1/p1x0/tx" not in to_n2.shared
    loc = localize(to_n2, _totals(to_n2, 10_000, 3_000, 0), 10_000, 7_000)
    counted = {s.key: s.count for s in loc.stages}
    assert counted["sender-udp"] is None and counted["tx:node:n1/eth0"] is None
    assert counted["tx:host:h1/p1x0"] == 7_000  # its own port still counts, and still gets the verdict
    assert loc.hop_key == "tx:host:h1/p1x0" and loc.cause == "qdisc drop"


def test_onl_loss_hunt_scenario_plans_the_study_s_cases() -> None:
    from pathlib import Path

    from vnetbench.plan import make_plan
    from vnetbench.scenarios import get_scenario

    scenario = get_scenario("onl-loss-hunt")
    assert scenario.study.startswith("ONL") and "18-byte" in scenario.summary
    spec = parse_spec(scenario.text, "onl-loss-hunt.yaml")
    lengths = {m.name: int(m.length) for m in spec.campaign.measurements}
    assert lengths == {"frag8k": 8192, "p1400": 1400, "p18": 18, "p1400-bridge": 1400, "p18-bridge": 18}
    layout = build_layout(spec.campaign, "c0ffee00")
    assert fragments_per_datagram(lengths["frag8k"], layout.path_mtu("snd", "slow")) == 6  # as in the study
    assert layout.cpu_quota == {"node:slow": 0.05}  # the CPU-limited receiver
    bridge = flow_path(layout, "snd", "far")
    assert [h.label for h in bridge.hops if h.shaper] == ["host:hv/p2x0"]  # the saturated bridge egress
    assert len(make_plan(spec, "c0ffee00", 1).steps) == 15
    assert (Path(__file__).parents[3] / "docs" / "scenarios" / "onl-loss-hunt.md").exists()


def test_udp_window_reaches_iperf3() -> None:
    from vnetbench.drivers import iperf3
    from vnetbench.drivers.base import FlowParams
    from vnetbench.spec.models import UdpMeasurement

    m = UdpMeasurement.model_validate({"name": "u", "kind": "udp", "window": "4k", "length": 1400})
    client = iperf3.commands(m, FlowParams("a", "b", "198.18.0.2", 5201, m.duration), 1e8).client
    assert client[client.index("-w") + 1] == "4096"  # iperf3 hands it to the server's socket too
    plain = UdpMeasurement.model_validate({"name": "u", "kind": "udp"})
    assert (
        "-w"
        not in iperf3.commands(plain, FlowParams("a", "b", "198.18.0.2", 5201, plain.duration), 1e8).client
    )


FABRIC = """
name: fabric
topology:
  nodes: [{name: s1}, {name: s2}, {name: r1}, {name: r2}]
  switches: [{name: lbin}, {name: lbout}]
  links:
    - {name: fabric, endpoints: [lbin, lbout], pps: 60000}
    - {endpoints: [s1, lbin]}
    - {endpoints: [s2, lbin]}
    - {endpoints: [lbout, r1], rate: 1gbit}
    - {endpoints: [lbout, r2], rate: 1gbit}
measurements: [{name: rtt, kind: rtt}]
patterns: [{name: p, kind: pairs, pairs: [[s1, r1]], measurements: [rtt]}]
"""


def test_loss_on_a_hop_two_flows_share_is_named_by_that_hops_counter() -> None:
    # Two tenants through one shaped link between bridges (docs/fidelity-notes.md §8): the fabric's
    # hops carry both flows, so neither flow's count is read there, and its loss shows at the first
    # own count after them (the port towards its receiver), which dropped nothing. The cause is the
    # fabric's tbf (100,000 frames of both flows), named with that caveat, not "unexplained".
    layout = build_layout(parse_spec(FABRIC).campaign, "c0ffee00")
    one, two = flow_path(layout, "s1", "r1"), flow_path(layout, "s2", "r2")
    mark_shared([one, two])
    shared = [h for h in one.hops if h.key in one.shared]
    assert shared and all(h.ns == layout.host_ns["host"] for h in shared)
    sent, delivered, tcp = 120_000, 60_000, 0
    totals: dict = {
        f"snmp:{one.src_ns}": {"Udp.OutDatagrams": sent, "Ip.OutRequests": sent, "Tcp.OutSegs": tcp},
        f"snmp:{one.dst_ns}": {"Ip.InDelivers": delivered, "Tcp.InSegs": 0, "Udp.InDatagrams": delivered},
    }
    passed = sent
    for hop in one.hops:
        if hop.direction == "fwd":
            continue
        if hop.key in one.shared and hop.direction == "tx":  # the fabric's shaped end: both flows
            totals[f"qdisc:{hop.ns}/{hop.name}/tbf:1"] = {"drops": 100_000}
            passed = delivered
        metric = "tx_packets" if hop.direction == "tx" else "rx_packets"
        totals.setdefault(f"if:{hop.ns}/{hop.name}", {})[metric] = (
            2 * passed if hop.key in one.shared else passed
        )
    loc = localize(one, totals, sent, delivered)
    fabric_end = next(h for h in shared if h.direction == "tx")
    assert loc.app_lost == 60_000 and loc.hop_lost == 60_000
    assert loc.hop_key is not None and loc.hop_key not in {f"tx:{h.label}" for h in shared}  # first own count
    assert loc.cause == f"qdisc drop at {fabric_end.label}, shared with the step's other flows"
    assert loc.counter == f"tbf drops on {fabric_end.label} (all flows through it)"
    assert loc.counter_packets == 100_000
    assert loc.explained_packets == 0  # how much of the shared drops were this flow's: unknown


def _fabric_flow(path: FlowPath, sent: int, delivered: int, drops: int, mid: int) -> Localization:
    """One tenant's flow through FABRIC: `drops` at the shared tbf (every flow's), `sent - delivered`
    of this flow's lost there."""
    totals: dict = {
        f"snmp:{path.src_ns}": {"Udp.OutDatagrams": sent, "Ip.OutRequests": sent, "Tcp.OutSegs": 0},
        f"snmp:{path.dst_ns}": {"Ip.InDelivers": delivered, "Tcp.InSegs": 0, "Udp.InDatagrams": delivered},
    }
    passed = sent
    for hop in path.hops:
        if hop.direction == "fwd":
            continue
        if hop.key in path.shared and hop.direction == "tx":
            totals[f"qdisc:{hop.ns}/{hop.name}/tbf:1"] = {"drops": drops}
            passed = delivered
        metric = "tx_packets" if hop.direction == "tx" else "rx_packets"
        totals.setdefault(f"if:{hop.ns}/{hop.name}", {})[metric] = (
            2 * passed if hop.key in path.shared else passed
        )
    return localize(path, totals, sent, delivered, measurement_id=mid)


def test_a_shared_queues_drops_explain_a_flow_up_to_its_loss_and_the_step_exactly() -> None:
    # Two tenants through FABRIC's shared tbf, which dropped 100,000 of their frames: flow one lost
    # 60,000, flow two 40,000. explained_packets stays 0 (the flows' own counters saw none); by hand,
    # the shared counter can account for min(100,000, 60,000) = 60,000 of flow one's and
    # min(100,000, 40,000) = 40,000 of flow two's; over the step: 60,000 + 40,000 = 100,000 lost
    # there, by 2 flows, against its 100,000 drops. (Before: no field said any of this.)
    from vnetbench.analysis.loss import _step_totals

    layout = build_layout(parse_spec(FABRIC).campaign, "c0ffee00")
    one, two = flow_path(layout, "s1", "r1"), flow_path(layout, "s2", "r2")
    mark_shared([one, two])
    a = _fabric_flow(one, 120_000, 60_000, 100_000, 1)
    b = _fabric_flow(two, 120_000, 80_000, 100_000, 2)
    assert a.counter_shared and b.counter_shared and a.explained_packets == b.explained_packets == 0
    assert (a.shared_explained_packets, b.shared_explained_packets) == (60_000, 40_000)
    assert a.to_json()["shared_explained_packets"] == 60_000
    _step_totals([a, b], pd.DataFrame({"id": [1, 2, 3], "step_key": ["s", "s", "t"]}))
    assert (a.step_flows, a.step_lost) == (b.step_flows, b.step_lost) == (2, 100_000)
    assert a.counter_packets == 100_000
