"""Where did the packets go? Hop-by-hop loss localization of a UDP or packet-rate measurement.

Input: the flow's path (telemetry_runs.path), the counter totals over the measurement (sum of the
stored deltas per scope and metric), and what the application says it sent and received. Any
measurement kind plugs in by giving those two counts (iperf3 UDP: packets_sent / packets_received;
a packet-rate probe: the same summary metrics, see APP_COUNTS).

The chain of counts, in datagrams (interface counters count frames: divided by the fragments per
datagram on the path):

    sent by the application
    -> accepted by the sender's UDP stack      Udp.OutDatagrams           explains: Udp.SndbufErrors
    -> left the sender's IP layer              Ip.OutRequests - TCP - ICMP   Ip.OutDiscards, FragFails
                                               (TCP = Tcp.OutSegs + Tcp.RetransSegs)
    -> each interface on the path, tx / rx     tx_packets / rx_packets    qdisc drops, tx/rx_dropped,
                                                                           bridge drops, backlog drops
    -> delivered by the receiver's IP layer    Ip.InDelivers - TCP - ICMP Ip.ReasmFails, InDiscards
    -> accepted by the socket                  (above) - Udp.InErrors - NoPorts   Udp.RcvbufErrors
    -> read from the socket (kernel)           Udp.InDatagrams            unread when the receiver closed
    -> read by the application                 the tool's received count

The hop where the count drops most is the verdict, with the counter that explains it.
"""

from __future__ import annotations

import json
import math
from dataclasses import asdict, dataclass, field
from typing import Any

import pandas as pd

from vnetbench.analysis.cpu import correlation, cpu_frame, tool_cpu_table
from vnetbench.layout.flowpath import FlowPath, Hop
from vnetbench.store.db import Store, Totals

# measurement kind -> (sent metric, received metric) in the summaries table
APP_COUNTS: dict[str, tuple[str, str]] = {
    "udp": ("packets_sent", "packets_received"),  # iperf3
    "pps": ("sent_packets", "received_packets"),  # vnb-probe send/recv
    "trace": ("sent_packets", "received_packets"),
    "background": ("sent_packets", "received_packets"),
}
# kinds that lose packets but whose loss no one-way chain of counters can follow
ROUND_TRIP = (
    "a round trip: requests and replies cross the path in both directions, and its loss is "
    "the tool's own count of unanswered probes"
)
NOT_ACCOUNTED_KINDS = {"rtt": ROUND_TRIP, "probe-rtt": ROUND_TRIP}
# A drop of a few packets between two counting points is within what the counters cannot separate
# (the tool's control connection, a neighbour solicitation): no verdict below it.
NOISE_PACKETS = 3.0
QDISC_DROP = "qdisc drop"  # the cause of a drop a shaper's own counter saw
RECEIVER_STAGES = ("receiver-ip", "socket", "socket-read")


@dataclass
class Explainer:
    counter: str  # e.g. "Udp.RcvbufErrors on node:b", "tbf drops on host:h/p1x0"
    packets: float  # in datagrams
    cause: str  # socket buffer full | qdisc drop | bridge/OVS drop | reassembly failure | ...
    scope: str | None = None  # where its time series is stored (telemetry.scope / metric)
    metric: str | None = None


@dataclass
class Stage:
    key: str
    label: str
    where: str
    count: float | None  # datagrams at this point (None: counter missing)
    lost: float | None = None  # since the previous stage with a count; never negative
    extra: float = 0.0  # counted below what passed it downstream (other traffic subtracted, read apart)
    explainers: list[Explainer] = field(default_factory=list)
    after_ovs: str | None = None  # the userspace OVS bridge the packet crossed just before this hop
    shared: bool = False  # carries the step's other flows too: not counted, its counters are theirs too

    @property
    def explained(self) -> float:
        return sum(e.packets for e in self.explainers)


@dataclass
class Localization:
    measurement_id: int | None
    src: str
    dst: str
    sent: float
    received: float
    app_lost: float
    fragments_per_datagram: int
    stages: list[Stage]
    hop: str | None  # the stage where most packets were lost (None: no loss, or not located)
    hop_key: str | None  # its key: sender-udp, tx:host:h1/p1x0, socket ...
    hop_where: str | None
    hop_lost: float
    cause: str | None
    counter: str | None
    counter_packets: float
    counter_scope: str | None  # the counter's time series: telemetry rows with this scope and metric
    counter_metric: str | None
    explained_packets: float  # lost packets that a kernel counter accounts for, over all stages
    note: str = ""
    verdict: str = ""  # the hop's label, "no loss", or why the loss is not located
    # The verdict's counter is on a point the step's other flows crossed too (a shared queue): it
    # counts every flow's drops, so it cannot say how many were this flow's; explained_packets leaves
    # it out. shared_explained_packets = the most of this flow's loss it can account for:
    # min(its drops, the loss at the hop that the flow's own counters there do not explain).
    counter_shared: bool = False
    shared_explained_packets: float = 0.0
    # Over the step's flows whose verdict names the same shared counter (campaign_accounting): how
    # many, and their loss it can account for, summed — against counter_packets, exact for the step.
    step_flows: int = 0
    step_lost: float = 0.0

    def to_json(self) -> dict[str, Any]:
        out = asdict(self)
        for stage, data in zip(self.stages, out["stages"], strict=True):
            data["explained"] = stage.explained
        return out


def _get(totals: Totals, scope: str, metric: str) -> float | None:
    values = totals.get(scope)
    if values is None:
        return None
    return float(values.get(metric, 0.0))


def _sum(*values: float | None) -> float | None:
    return None if any(v is None for v in values) else float(sum(v for v in values if v is not None))


def _sender_other(totals: Totals, s_snmp: str, setup: float) -> float | None:
    """Packets the sender's IP layer sent that were not the flow's datagrams: TCP (the tool's control
    connection, SSH), ICMP and the tool's set-up datagrams. Tcp.OutSegs leaves retransmitted segments
    out (RFC 1213's tcpOutSegs; Linux counts them in RetransSegs only), so both are needed: without
    RetransSegs each retransmission on a lossy path was taken for a datagram, and then for its loss."""
    tcp = _sum(_get(totals, s_snmp, "Tcp.OutSegs"), _get(totals, s_snmp, "Tcp.RetransSegs"))
    return _sum(tcp, _get(totals, s_snmp, "Icmp.OutMsgs"), setup)


def _snmp_explainers(totals: Totals, ns: str, where: str, names: dict[str, str]) -> list[Explainer]:
    out = []
    for counter, cause in names.items():
        v = _get(totals, f"snmp:{ns}", counter)
        if v:
            out.append(Explainer(f"{counter} on {where}", v, cause, f"snmp:{ns}", counter))
    return out


def _less(explainers: list[Explainer], packets: float, metric: str = "Udp.SndbufErrors") -> list[Explainer]:
    """Explainers without `packets` of `metric` (drops that another stage's counter explains)."""
    out = []
    for e in explainers:
        if e.metric == metric and packets:
            e.packets -= packets
            if e.packets <= 0:
                continue
        out.append(e)
    return out


OVS_INGRESS = ("rx_dropped", "rx_errors", "rx_missed_errors")
OVS_EGRESS = ("tx_dropped", "tx_errors")
OVS_UNEXPLAINED = "unexplained: no kernel or OVS counter saw it"
OVS_UNREAD = "not read by userspace OVS (its socket queue overflowed)"


def _ovs_explainers(totals: Totals, hop: Hop, fwd: Hop, before: Hop | None, k: int) -> list[Explainer]:
    """OVS's own port counters (scope ovs:NS/PORT) of the port the packet entered and the one it left."""
    out = []
    for port, metrics in ((before, OVS_INGRESS), (hop, OVS_EGRESS)):
        if port is None or port.ns != fwd.ns:
            continue
        scope = f"ovs:{port.ns}/{port.name}"
        values = totals.get(scope, {})
        extra = [m for m in values if m.endswith("_drops") and m not in metrics]  # netdev-specific ones
        for metric in (*metrics, *extra):
            v = values.get(metric)
            if v:
                counter = f"OVS port {port.where}/{port.name} {metric}"
                out.append(Explainer(counter, v / k, "bridge/OVS drop", scope, metric))
    datapath = f"ovs:{fwd.ns}/datapath"
    lookups = totals.get(datapath)
    if lookups is None:
        return out
    if lookups.get("lookups_lost"):  # a packet the datapath could not hand to its upcall handler
        counter = f"OVS datapath {fwd.label} lookups lost"
        lost = lookups["lookups_lost"] / k
        out.append(Explainer(counter, lost, "bridge/OVS drop", datapath, "lookups_lost"))
    # A port's RX packets are the kernel's count of the device; what ovs-vswitchd read and processed is
    # the datapath's lookups. Frames the ports received that were never looked up were never read: the
    # kernel dropped them in ovs-vswitchd's socket queue, and no counter of either says so.
    received = sum(
        m.get("rx_packets", 0.0)
        for scope, m in totals.items()
        if scope.startswith(f"ovs:{fwd.ns}/") and scope != datapath
    )
    processed = sum(lookups.get(f"lookups_{m}", 0.0) for m in ("hit", "missed", "lost"))
    if received - processed > NOISE_PACKETS:
        counter = f"OVS datapath {fwd.label} never read (ports RX − lookups)"
        out.append(Explainer(counter, (received - processed) / k, OVS_UNREAD, datapath, "lookups_hit"))
    return out


def _hop_stage(
    hop: Hop,
    prev: Hop | None,
    totals: Totals,
    k: int,
    other: float,
    shared: bool,
    before: Hop | None = None,
) -> Stage:
    """One interface on the path; `other` = frames the sender sent that are not the flow's (TCP, ICMP).

    `prev` is the hop before this one, `before` the one before that (the port a bridge received on).
    """
    scope = f"if:{hop.ns}/{hop.name}"
    metric = "tx_packets" if hop.direction == "tx" else "rx_packets"
    frames = _get(totals, scope, metric)
    verb = "sent by" if hop.direction == "tx" else "received by"
    stage = Stage(
        f"{hop.direction}:{hop.label}",
        f"{verb} {hop.label}" + (f" ({hop.shaper})" if hop.shaper else ""),
        hop.label,
        None if frames is None or shared else (frames - other) / k,
    )
    if shared:
        stage.label += " (shared with the step's other flows: not counted)"
        stage.shared = True
    ex = stage.explainers
    if hop.direction == "tx":
        for qscope, metrics in totals.items():
            if qscope.startswith(f"qdisc:{hop.ns}/{hop.name}/") and metrics.get("drops"):
                kind = qscope.rsplit("/", 1)[1].split(":")[0]
                ex.append(
                    Explainer(
                        f"{kind} drops on {hop.label}", metrics["drops"] / k, QDISC_DROP, qscope, "drops"
                    )
                )
        dropped = _get(totals, scope, "tx_dropped")
        if dropped:
            cause = "backlog full at the peer (netdev_max_backlog)" if hop.kind == "veth" else "device drop"
            ex.append(Explainer(f"tx_dropped on {hop.label}", dropped / k, cause, scope, "tx_dropped"))
        if prev is not None and prev.direction == "fwd":
            for metric in ("rx_dropped", "tx_dropped"):
                v = _get(totals, f"if:{prev.ns}/{prev.name}", metric)
                if v:
                    bridge = f"if:{prev.ns}/{prev.name}"
                    ex.append(
                        Explainer(
                            f"{metric} on bridge {prev.label}", v / k, "bridge/OVS drop", bridge, metric
                        )
                    )
            if prev.kind == "delay-node" and before is not None:
                arrived = _get(totals, f"if:{before.ns}/{before.name}", "rx_packets")
                held = (arrived - frames) / k if arrived is not None and frames is not None else 0.0
                if held > 0:
                    ex.append(
                        Explainer(
                            f"not forwarded by the delay node {prev.label} (received − sent)",
                            held,
                            "delay node: emulated loss or its queue (its report at teardown splits them)",
                            f"if:{prev.ns}",
                            "rx_packets − tx_packets",
                        )
                    )
            if prev.kind == "ovs":
                ex.extend(_ovs_explainers(totals, hop, prev, before, k))
                stage.after_ovs = prev.label
    else:
        for metric in ("rx_dropped", "rx_errors"):
            v = _get(totals, scope, metric)
            if v:
                ex.append(Explainer(f"{metric} on {hop.label}", v / k, "receive drop", scope, metric))
    return stage


def localize(
    path: FlowPath,
    totals: Totals,
    sent: float,
    received: float,
    fragments: int = 1,
    measurement_id: int | None = None,
    setup_datagrams: float = 0.0,
) -> Localization:
    """Where the flow's datagrams were lost: the count at every stage of the path and the verdict.

    `setup_datagrams`: datagrams of the flow's 5-tuple that the tool sends outside its own count
    (iperf3's UDP "connect" message, one per stream; vnb-probe's FIN copies). Every kernel counter
    on the path sees them and the tool's counts do not, so they are taken out like the sender's TCP
    and ICMP packets; left in, every flow showed them "lost" between the socket and the application."""
    k = max(1, fragments)
    d_snmp = f"snmp:{path.dst_ns}"
    stages = _sender_stages(path, totals, sent, k, setup_datagrams)
    other_in = _sum(_get(totals, d_snmp, "Tcp.InSegs"), _get(totals, d_snmp, "Icmp.InMsgs"), setup_datagrams)
    stages += _hop_stages(path, totals, k, other_in, setup_datagrams)
    stages += _receiver_stages(path, totals, received, k, other_in, setup_datagrams)
    for stage in stages:  # a namespace's SNMP counters are per namespace, not per flow
        end = "src" if stage.key.startswith("sender-") else "dst" if stage.key in RECEIVER_STAGES else None
        if end and end in path.shared:
            stage.count = None
            stage.shared = True
            stage.label += " (namespace shared with the step's other flows: not counted)"
    _count_losses(stages)
    return _verdict(path, stages, sent, received, k, measurement_id)


def _sender_stages(path: FlowPath, totals: Totals, sent: float, k: int, setup: float) -> list[Stage]:
    """Sent by the application, accepted by the sender's UDP stack, left its IP layer."""
    src, s_snmp, g = f"node:{path.src}", f"snmp:{path.src_ns}", _get
    stages: list[Stage] = [Stage("app-sent", "sent by the application", src, sent)]
    # A qdisc on the sender's own interface that drops tells the socket (ENOBUFS): the kernel counts
    # the datagram in Udp.SndbufErrors and Ip.OutDiscards, not in Udp.OutDatagrams, though it was
    # accepted and left the IP layer. Those are counted where they were lost: at that qdisc.
    own = [h for h in path.hops if h.ns == path.src_ns and h.direction == "tx"]
    own_drops = sum(
        m.get("drops", 0.0)
        for scope, m in totals.items()
        if any(scope.startswith(f"qdisc:{h.ns}/{h.name}/") for h in own)
    )
    reported = min(own_drops / k, g(totals, s_snmp, "Udp.SndbufErrors") or 0.0)
    out_udp = g(totals, s_snmp, "Udp.OutDatagrams")
    stages.append(
        Stage(
            "sender-udp",
            "accepted by the sender's UDP stack",
            src,
            None if out_udp is None else out_udp + reported - setup,
            explainers=_less(
                _snmp_explainers(totals, path.src_ns, src, {"Udp.SndbufErrors": "socket send buffer full"}),
                reported,
            ),
        )
    )
    ip_out = _sum(g(totals, s_snmp, "Ip.OutRequests"))
    other = _sender_other(totals, s_snmp, setup)
    ip_explainers = _snmp_explainers(
        totals,
        path.src_ns,
        src,
        {
            "Ip.OutDiscards": "IP output discard",
            "Ip.OutNoRoutes": "no route",
            "Ip.FragFails": "fragmentation failure",
        },
    )
    stages.append(
        Stage(
            "sender-ip",
            "left the sender's IP layer",
            src,
            None if ip_out is None or other is None else ip_out - other,
            explainers=_less(ip_explainers, reported, "Ip.OutDiscards"),
        )
    )
    return stages


def _hop_stages(path: FlowPath, totals: Totals, k: int, other_in: float | None, setup: float) -> list[Stage]:
    """Every interface on the path, tx and rx (bridges forward between them: no stage of their own)."""
    other = _sender_other(totals, f"snmp:{path.src_ns}", setup)
    stages = []
    prev: Hop | None = None
    before: Hop | None = None
    for hop in path.hops:
        # the receiver's own interface also receives what others send it (on a remote host: the
        # controller's SSH): its non-UDP frames are the receiver's TCP and ICMP input
        own = hop.ns == path.dst_ns and hop.direction == "rx" and other_in is not None
        hop_other = other_in if own and "dst" not in path.shared else other
        if hop.direction != "fwd":
            stages.append(_hop_stage(hop, prev, totals, k, hop_other or 0.0, hop.key in path.shared, before))
        before, prev = prev, hop
    return stages


def _receiver_stages(
    path: FlowPath, totals: Totals, received: float, k: int, other_in: float | None, setup: float
) -> list[Stage]:
    """Delivered by the receiver's IP layer, accepted by its socket, read from it, read by the tool."""
    dst, d_snmp, g = f"node:{path.dst}", f"snmp:{path.dst_ns}", _get
    delivered = g(totals, d_snmp, "Ip.InDelivers")
    ip_stage = Stage(
        "receiver-ip",
        "delivered by the receiver's IP layer" + (" (reassembled)" if k > 1 else ""),
        dst,
        None if delivered is None or other_in is None else delivered - other_in,
        explainers=_snmp_explainers(
            totals,
            path.dst_ns,
            dst,
            {
                "Ip.ReasmFails": "reassembly failure",
                "Ip.ReasmTimeout": "reassembly timeout",
                "Ip.InDiscards": "IP input discard",
                "Ip.InHdrErrors": "IP header error",
                "Ip.InAddrErrors": "IP address error",
                "IpExt.InTruncatedPkts": "truncated packet",
            },
        ),
    )
    udp_err = _sum(g(totals, d_snmp, "Udp.InErrors"), g(totals, d_snmp, "Udp.NoPorts"))
    socket = Stage(
        "socket",
        "accepted by the receiver's socket",
        dst,
        None if ip_stage.count is None or udp_err is None else ip_stage.count - udp_err,
        explainers=_snmp_explainers(
            totals,
            path.dst_ns,
            dst,
            {
                "Udp.RcvbufErrors": "socket buffer full",
                "Udp.MemErrors": "socket memory limit",
                "Udp.InCsumErrors": "checksum error",
                "Udp.NoPorts": "no socket on the port",
            },
        ),
    )
    in_udp = g(totals, d_snmp, "Udp.InDatagrams")
    read = Stage(
        "socket-read", "read from the socket (kernel count)", dst, None if in_udp is None else in_udp - setup
    )
    return [ip_stage, socket, read, Stage("app-received", "read by the application", dst, received)]


def _count_losses(stages: list[Stage]) -> None:
    """Each stage's loss since the previous stage with a count; what stayed in the socket when the
    receiver stopped has no counter of its own.

    No packet is created on the way, so a count below one further downstream was too low (the other
    flows' TCP control packets subtracted at a shared sender, counters read a moment apart): such a
    stage counts as what passed it later, and the difference is its `extra`, never a loss here and a
    negative loss there."""
    downstream = -math.inf
    passed: dict[int, float] = {}
    for i in reversed(range(len(stages))):
        count = stages[i].count
        if count is not None and i > 0:  # the application's own count is the reference
            downstream = max(downstream, count)
            passed[i] = downstream
            stages[i].extra = downstream - count
    last: float | None = None
    for i, stage in enumerate(stages):
        if stage.count is None:
            continue
        here = passed.get(i, stage.count)
        if last is not None:
            stage.lost = max(0.0, last - here)
        last = here
    if stages[-2].lost and stages[-2].lost > 0:
        stages[-2].explainers.append(
            Explainer(
                "no counter: left in the socket buffer when the receiver stopped", stages[-2].lost, "unread"
            )
        )


def _verdict(
    path: FlowPath, stages: list[Stage], sent: float, received: float, k: int, measurement_id: int | None
) -> Localization:
    """The stage that lost the most, and the counter that explains most of it. A loss of a few
    datagrams is located only where a counter saw it: below NOISE_PACKETS a drop between two counts
    may be another packet counted (the tool's control connection, a neighbour solicitation)."""
    app_lost = sent - received
    lossy = [s for s in stages if s.lost]
    if app_lost > NOISE_PACKETS:
        worst = max(lossy, key=lambda s: s.lost or 0.0) if lossy else None
    else:  # a few datagrams: where a counter saw them, or not located
        seen = [s for s in lossy if s.explained > 0]
        worst = max(seen, key=lambda s: min(s.lost or 0.0, s.explained)) if app_lost > 0 and seen else None
    top = max(worst.explainers, key=lambda e: e.packets) if worst and worst.explainers else None
    shared = None
    if worst is not None and worst.explained < 0.5 * (worst.lost or 0.0):
        shared = _shared_explainer(stages, worst)
        top = shared or top
    explained = sum(min(s.lost or 0.0, s.explained) for s in stages)
    # what the shared counter can account for: the hop's loss that the flow's own counters leave
    own_left = max(0.0, (worst.lost or 0.0) - worst.explained) if worst is not None else 0.0
    loc = Localization(
        measurement_id,
        path.src,
        path.dst,
        sent,
        received,
        app_lost,
        k,
        stages,
        worst.label if worst else None,
        worst.key if worst else None,
        worst.where if worst else None,
        worst.lost or 0.0 if worst else 0.0,
        top.cause if top else (_unexplained(worst) if worst else None),
        top.counter if top else None,
        top.packets if top else 0.0,
        top.scope if top else None,
        top.metric if top else None,
        explained,
        note=(f"{k} IPv4 fragments per datagram: interface counts are frames / {k}" if k > 1 else ""),
        verdict=worst.label if worst else _not_located(app_lost, lossy),
    )
    if shared is not None:
        loc.counter_shared = True
        loc.shared_explained_packets = min(shared.packets, own_left)
        loc.step_flows, loc.step_lost = 1, own_left
    return loc


def _shared_explainer(stages: list[Stage], worst: Stage) -> Explainer | None:
    """The largest drop counter on the uncounted shared stages just before `worst`: its loss was
    counted there (the first count after them) but may have happened in them. The counter holds
    every flow's frames, so it names the cause without saying how much of it was this flow's."""
    i = stages.index(worst)
    between: list[Stage] = []
    for stage in reversed(stages[:i]):
        if stage.count is not None:
            break
        between.append(stage)
    found = [(e, st) for st in between if st.shared for e in st.explainers if e.packets > 0]
    if not found:
        return None
    e, st = max(found, key=lambda pair: pair[0].packets)
    return Explainer(
        e.counter + " (all flows through it)",
        e.packets,
        f"{e.cause} at {st.where}, shared with the step's other flows",
        e.scope,
        e.metric,
    )


def _not_located(app_lost: float, lossy: list[Stage]) -> str:
    if app_lost <= 0:
        return (
            "no loss" if app_lost == 0 else f"no loss ({-app_lost:,.0f} more received than sent: duplicates)"
        )
    if not lossy:
        return "not located: no counter on the path dropped"
    return (
        f"not located: {app_lost:,.0f} lost, too few to tell from other packets counted (≤ {NOISE_PACKETS:g})"
    )


def _unexplained(stage: Stage) -> str:
    if stage.after_ovs:  # userspace OVS: its drops move no kernel counter, and not all move its own
        return OVS_UNEXPLAINED
    return "unexplained: no kernel counter saw it"


# ---------------------------------------------------------------------- a stored campaign


@dataclass
class NotAccounted:
    """A measurement that lost (or may have lost) packets which the counters cannot account for."""

    measurement_id: int
    kind: str
    src: str
    dst: str
    lost: float | None  # the tool's own count, where it has one
    reason: str


def campaign_losses(store: Store, campaign_id: str, frame: pd.DataFrame | None = None) -> list[Localization]:
    """Loss localization of every measurement of a campaign that has app counts and telemetry."""
    return campaign_accounting(store, campaign_id, frame)[0]


def campaign_accounting(
    store: Store, campaign_id: str, frame: pd.DataFrame | None = None
) -> tuple[list[Localization], list[NotAccounted]]:
    """Every packet flow of a campaign: localized hop by hop, or listed with the reason it cannot be."""
    frame = store.measurements_frame(campaign_id) if frame is None else frame
    if frame.empty:
        return [], []
    runs = store.telemetry_runs_frame(campaign_id)
    runs = runs.set_index("measurement_id") if not runs.empty else runs
    rows, skipped = [], []
    for _, m in frame.iterrows():
        kind = str(m["kind"])
        if kind not in APP_COUNTS and kind not in NOT_ACCOUNTED_KINDS:
            continue  # TCP retransmits what it loses; CPU share sends nothing
        sent, received = _app_counts(m)
        reason = _why_not(m, kind, sent, received, runs)
        if reason:
            lost = None if sent is None or received is None else sent - received
            skipped.append(NotAccounted(int(m["id"]), kind, str(m["src"]), str(m["dst"]), lost, reason))
        else:
            rows.append((int(m["id"]), float(sent), float(received), _setup_datagrams(m), _whole_run_note(m)))  # type: ignore[arg-type]
    totals = store.telemetry_totals([r[0] for r in rows])
    out = []
    for mid, sent, received, setup, whole_run in rows:
        run = runs.loc[mid]
        path = FlowPath.from_json(run["path"])
        frags = run["fragments_per_datagram"]
        frags = 1 if frags is None or pd.isna(frags) else int(frags)
        loc = localize(path, totals.get(mid, {}), sent, received, frags, mid, setup)
        loc.note = "; ".join(filter(None, (loc.note, whole_run)))
        out.append(loc)
    _step_totals(out, frame)
    return out, skipped


def _step_totals(locs: list[Localization], frame: pd.DataFrame) -> None:
    """For the flows of one step whose verdict names the same shared counter: how many, and the
    loss it can account for, summed — the counter's drops against that sum are exact for the step."""
    if "step_key" not in frame.columns:
        return
    step_of = dict(zip(frame["id"], frame["step_key"], strict=True))
    groups: dict[tuple[Any, ...], list[Localization]] = {}
    for loc in locs:
        if loc.counter_shared and loc.measurement_id in step_of:
            key = (step_of[loc.measurement_id], loc.counter_scope, loc.counter_metric)
            groups.setdefault(key, []).append(loc)
    for flows in groups.values():
        lost = sum(loc.step_lost for loc in flows)
        for loc in flows:
            loc.step_flows, loc.step_lost = len(flows), lost


def _whole_run_note(m: pd.Series) -> str:
    """With a warm-up (iperf3 -O) the kernel's counters also count the omitted seconds, which the
    measurement's own loss leaves out: the chain compares the tool's whole-run counts with them."""
    if pd.isna(m.get("run_packets_sent", math.nan)):
        return ""
    loss = m.get("loss_ratio")
    own = (
        ""
        if loss is None or pd.isna(loss)
        else f" (the measurement's own loss, over its measured window: {100 * loss:.2f} %)"
    )
    return f"counts over the tool's whole run, its warm-up (omit) included, as the kernel counted them{own}"


def _setup_datagrams(m: pd.Series) -> float:
    """Datagrams of the flow the tool sends but does not count: vnb-probe's FIN copies (the exact
    count, sent several times at the end); iperf3 UDP opens each stream with one "connect" datagram
    to the server (its reply goes the other way, off the measured path)."""
    fins = m.get("fin_sent_packets")
    if fins is not None and not pd.isna(fins):
        return float(fins)
    command = m.get("command")
    client = command.get("client") if isinstance(command, dict) else None
    if m.get("tool") != "iperf3" or not isinstance(client, list) or "-u" not in client:
        return 0.0
    streams = client[client.index("-P") + 1] if "-P" in client[:-1] else "1"
    return float(streams) if str(streams).isdigit() else 1.0


def _app_counts(m: pd.Series) -> tuple[float | None, float | None]:
    """What the tool says it sent and received (None where it said nothing).

    iperf3 UDP with `omit`: each side resets its counters at its own omit end, the receiver's shifted
    by the path's delay, so the sender's count is not comparable with the receiver's (a lossy 10 ms
    link showed 64 more received than sent). The receiver's own window is used instead: what arrived
    plus what its sequence numbers say was lost (the driver's `lost_packets`; without omit that is
    sent − received, the same numbers as before)."""
    if not pd.isna(m.get("run_packets_sent", math.nan)) and not pd.isna(
        m.get("run_packets_received", math.nan)
    ):
        return float(m["run_packets_sent"]), float(m["run_packets_received"])  # with -O: see _whole_run_note
    names = APP_COUNTS.get(str(m["kind"]), ("sent_packets", "received_packets"))
    values = [m.get(name) for name in names]
    sent, received = (None if v is None or pd.isna(v) else float(v) for v in values)
    lost = m.get("lost_packets")
    if m["kind"] == "udp" and received is not None and lost is not None and not pd.isna(lost):
        sent = received + float(lost)
    return sent, received


def _why_not(
    m: pd.Series, kind: str, sent: float | None, received: float | None, runs: pd.DataFrame
) -> str | None:
    """Why a packet flow cannot be followed hop by hop (None: it can)."""
    if kind in NOT_ACCOUNTED_KINDS:
        return NOT_ACCOUNTED_KINDS[kind]
    if m["status"] != "ok":
        return f"the measurement did not complete ({m['status']}): no counts to compare"
    if sent is None or received is None:
        return "the tool reported no sent and received counts"
    if runs.empty or int(m["id"]) not in runs.index:
        return "no counters were read during it (telemetry off, or not started: see the events)"
    return None


def series(store: Store, measurement_id: int, scope: str, metric: str) -> pd.DataFrame:
    """One counter's per-reading deltas (t_ns, value) during a measurement."""
    return store.telemetry_series(measurement_id, scope, metric)


def cpu_busy_series(store: Store, measurement_id: int) -> pd.DataFrame:
    """Host CPU busy share per reading (t_ns, busy_ratio); on remote hosts (SSH), the receiver's."""
    rows = store.telemetry_readings(measurement_id, "cpu")
    if rows.empty:
        path = store.telemetry_path(measurement_id)
        if path and path.get("dst_ns"):
            rows = store.telemetry_readings(measurement_id, f"cpu@{path['dst_ns']}")
    if rows.empty:
        return pd.DataFrame(columns=["t_ns", "busy_ratio"])
    wide = rows.pivot_table(index="t_ns", columns="metric", values="value", aggfunc="sum").fillna(0.0)
    total = wide.sum(axis=1)
    idle = wide.get("idle_ns", 0.0) + wide.get("iowait_ns", 0.0)
    busy = (1 - idle / total.where(total > 0)).rename("busy_ratio")
    return busy.reset_index()


def loss_analysis(store: Store, campaign_id: str) -> dict[str, Any]:
    """Loss localization, loss-vs-CPU correlation and the tool-CPU table of a campaign, JSON-able."""
    frame = store.measurements_frame(campaign_id)
    cpu = cpu_frame(store, campaign_id, frame)
    located, skipped = campaign_accounting(store, campaign_id, frame)
    return {
        "campaign": campaign_id,
        "loss_localization": [loc.to_json() for loc in located],
        "not_accounted": [asdict(n) for n in skipped],
        "loss_vs_cpu": {
            "host_busy": correlation(cpu, "host_busy_ratio"),
            "host_softirq": correlation(cpu, "host_softirq_ratio"),
            "receiver_tool": correlation(cpu, "receiver_cpu_ratio"),
        },
        "tool_cpu": tool_cpu_table(cpu),
        "cpu_per_measurement": [] if cpu.empty else json.loads(cpu.to_json(orient="records")),
    }
