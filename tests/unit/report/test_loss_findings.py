"""The Findings' loss line: how much was lost, and where most of it was (the bottleneck), counted by
the point that dropped it."""

from __future__ import annotations

import pandas as pd

from vnetbench.analysis.loss import Explainer, Localization, Stage
from vnetbench.report.sections.findings import loss_findings

SHARED_TBF = Explainer(
    "tbf drops on node:client/eth0", 2_000.0, "qdisc drop", "qdisc:client/eth0/tbf:1", "drops"
)


def _flow(
    dst: str, port: str, lost: float, cause: str, explainer: Explainer, shared: bool, mid: int | None = None
) -> Localization:
    """A flow of 5,000 datagrams that lost `lost`, first counted at `port` (after the shared stages)."""
    stages = [
        Stage("app-sent", "sent by the application", "node:client", 5_000.0),
        Stage("tx:node:client/eth0", "sent by node:client/eth0", "node:client/eth0", None,
              explainers=[SHARED_TBF], shared=True),
        Stage(f"tx:{port}", f"sent by {port}", port, 5_000.0 - lost, lost=lost,
              explainers=[] if shared else [explainer]),
    ]  # fmt: skip
    return Localization(
        mid, "client", dst, 5_000.0, 5_000.0 - lost, lost, 1, stages, f"sent by {port}", f"tx:{port}",
        port, lost, cause, explainer.counter, explainer.packets, explainer.scope, explainer.metric, lost,
    )  # fmt: skip


def test_the_bottleneck_is_the_shared_queue_that_dropped_not_each_flows_next_hop() -> None:
    # onl-udp-receivers (campaign 3bac6a03, 2026-11-29): 6-8 flows into one 115 mbit NIC; its tbf on
    # node:client/eth0 dropped for all of them, and each flow's loss is first counted at its own port
    # on pc12's bridge. The Findings named one of those ports 'the bottleneck, 16.16 % of the lost'
    # although 98.59 % of the lost was the shared tbf's.
    shared_cause = "qdisc drop at node:client/eth0, shared with the step's other flows"
    via_shared = Explainer(SHARED_TBF.counter + " (all flows through it)", 2_000.0, shared_cause,
                           SHARED_TBF.scope, SHARED_TBF.metric)  # fmt: skip
    socket = Explainer(
        "Udp.RcvbufErrors on node:vm9", 100.0, "socket buffer full", "snmp:vm9", "Udp.RcvbufErrors"
    )
    flows = [
        _flow("vm1", "host:pc12/p1x0", 600.0, shared_cause, via_shared, shared=True),
        _flow("vm2", "host:pc12/p2x0", 400.0, shared_cause, via_shared, shared=True),
        _flow("vm9", "host:pc12/p9x0", 100.0, "socket buffer full", socket, shared=False),
    ]
    # lost 600 + 400 + 100 = 1,100 of 15,000 (7.33 %); the shared tbf's 1,000 of them: 90.91 %
    assert loss_findings(flows) == [
        "<b>Loss</b>: 1,100 of 15,000 datagrams (7.33 %) over 3 flows; the bottleneck: qdisc drop at "
        "node:client/eth0, shared with the step's other flows, 90.91 % of the lost."
    ]


def test_a_flows_own_hop_stays_the_bottleneck_when_no_stage_is_shared() -> None:
    # exogeni-exp4: each flow has its own shaped link; drops at each hub port are that port's
    own = [
        Explainer(f"tbf drops on node:hub/eth{i}", n, "qdisc drop", f"qdisc:hub/eth{i}/tbf:1", "drops")
        for i, n in ((0, 300.0), (2, 500.0))
    ]
    flows = [
        _flow("vm-a", "node:hub/eth0", 300.0, "qdisc drop", own[0], shared=False),
        _flow("vm-c", "node:hub/eth2", 500.0, "qdisc drop", own[1], shared=False),
    ]
    # 500 of 800 lost = 62.50 %
    assert loss_findings(flows) == [
        "<b>Loss</b>: 800 of 10,000 datagrams (8.00 %) over 2 flows; the bottleneck: sent by node:hub/eth2 "
        "(qdisc drop), 62.50 % of the lost."
    ]


def test_a_bottleneck_the_machine_lines_call_this_machines_is_said_to_be() -> None:
    # exogeni-exp4, campaign ef4349e3: the Findings named 'the bottleneck: sent by node:hub/eth2 (tbf)
    # (qdisc drop), 35.06 % of the lost' while the Campaign section said of the same drops (flows
    # offered 97.2 Mbit/s, the 100 mbit link's model maximum) that the shaper stalled: 'that loss is
    # this machine's, not the link's'. The Findings now says so too.
    model = 97_222_222.2
    eth = [
        Explainer(f"tbf drops on node:hub/eth{i}", n, "qdisc drop", f"qdisc:hub/eth{i}/tbf:1", "drops")
        for i, n in ((0, 100.0), (2, 500.0))
    ]
    flows = [
        _flow("vm-a", "node:hub/eth0", 100.0, "qdisc drop", eth[0], shared=False, mid=43),
        _flow("vm-c", "node:hub/eth2", 500.0, "qdisc drop", eth[1], shared=False, mid=45),
    ]
    frame = pd.DataFrame({"id": [43, 45], "kind": ["udp", "udp"], "status": ["ok", "ok"],
                          "offered_bps": [model, model], "expected_max_bps": [model, model]})  # fmt: skip
    # 500 of the 600 lost: 83.33 %; eth0's 100 stalled too (offered at the model): all 600 the machine's
    assert loss_findings(flows, frame) == [
        "<b>Loss</b>: 600 of 10,000 datagrams (6.00 %) over 2 flows; the bottleneck: sent by node:hub/eth2 "
        "(qdisc drop), 83.33 % of the lost; 600 of the lost (100.00 %), the bottleneck's among them, were "
        "this machine's, not the emulated network's (see Machine as bottleneck)."
    ]
    # with eth0 offered at twice the rate, only the bottleneck's drops are the machine's
    (one,) = loss_findings(flows, frame.assign(offered_bps=[2 * model, model]))
    assert one.endswith(
        "83.33 % of the lost — this machine's loss, not the emulated network's (see Machine as bottleneck)."
    )
    # offered at twice the link's rate, the same drops are the link's own: nothing added
    (over,) = loss_findings(flows, frame.assign(offered_bps=2 * model))
    assert over.endswith("(qdisc drop), 83.33 % of the lost.")


def test_one_flow_is_one_flow() -> None:
    # a campaign of a single UDP flow printed 'over 1 flows' / 'sent in 1 flows'
    tbf = Explainer("tbf drops on node:hub/eth0", 50.0, "qdisc drop", "qdisc:hub/eth0/tbf:1", "drops")
    (lossy,) = loss_findings([_flow("vm-a", "node:hub/eth0", 50.0, "qdisc drop", tbf, shared=False)])
    assert lossy.startswith("<b>Loss</b>: 50 of 5,000 datagrams (1.00 %) over 1 flow; the bottleneck:")
    whole = _flow("vm-a", "node:hub/eth0", 0.0, "qdisc drop", tbf, shared=False)
    whole.hop, whole.app_lost = None, 0.0
    assert loss_findings([whole]) == ["<b>Loss</b>: none — 5,000 datagrams sent in 1 flow, all received."]


def test_datagrams_left_unread_at_the_end_are_not_called_the_bottleneck() -> None:
    # exogeni-exp2 (campaign f5688b71, 2026-11-29): 2 of 99,205 datagrams, counted into the receiving
    # socket by the kernel and not read before iperf3 stopped; the Findings called that 'the
    # bottleneck: read from the socket (kernel count) (unread), 100.00 % of the lost'.
    left = Explainer("no counter: left in the socket buffer when the receiver stopped", 2.0, "unread")
    flow = _flow("vm-b", "node:vm-b", 2.0, "unread", left, shared=False)
    (line,) = loss_findings([flow])
    assert line == (
        "<b>Loss</b>: 2 of 5,000 datagrams (0.04 %) over 1 flow; 100.00 % of the lost arrived and were left "
        "unread in the receiving socket when the receiver stopped (the measurement's end, not the network)."
    )


def test_every_loss_the_machine_lines_call_this_machines_is_counted_not_only_the_bottleneck() -> None:
    # quickstart d1453f96 (2026-11-30): a shaper that stalled dropped 887 and a full socket buffer 746
    # of 1,676 lost; the line called only the shaper's 52.92 % this machine's. Here: the bottleneck
    # 500 at a stalled shaper (offered at the model maximum) and 300 to a full socket buffer of the
    # 900 lost: 800 of 900 = 88.89 % the machine's (hand arithmetic).
    model = 97_222_222.2
    tbf = Explainer("tbf drops on node:hub/eth2", 500.0, "qdisc drop", "qdisc:hub/eth2/tbf:1", "drops")
    socket = Explainer(
        "Udp.RcvbufErrors on node:vm9", 300.0, "socket buffer full", "snmp:vm9", "Udp.RcvbufErrors"
    )
    net = Explainer("tbf drops on node:hub/eth0", 100.0, "qdisc drop", "qdisc:hub/eth0/tbf:1", "drops")
    flows = [
        _flow("vm-c", "node:hub/eth2", 500.0, "qdisc drop", tbf, shared=False, mid=1),
        _flow("vm9", "node:vm9", 300.0, "socket buffer full", socket, shared=False, mid=2),
        _flow("vm-a", "node:hub/eth0", 100.0, "qdisc drop", net, shared=False, mid=3),
    ]
    frame = pd.DataFrame({"id": [1, 2, 3], "kind": ["udp"] * 3, "status": ["ok"] * 3,
                          "offered_bps": [model, model, 2 * model], "expected_max_bps": [model] * 3})  # fmt: skip
    (line,) = loss_findings(flows, frame)
    assert line.endswith(
        "the bottleneck: sent by node:hub/eth2 (qdisc drop), 55.56 % of the lost; 800 of the lost (88.89 %), "
        "the bottleneck's among them, were this machine's, not the emulated network's (see Machine as "
        "bottleneck)."
    )
    # the bottleneck offered at twice the rate is the link's: only the socket's 300 (33.33 %) is the machine's
    (line,) = loss_findings(flows, frame.assign(offered_bps=2 * model))
    assert line.endswith(
        "55.56 % of the lost; 300 of the lost (33.33 %) were this machine's, not the emulated network's "
        "(see Machine as bottleneck)."
    )
