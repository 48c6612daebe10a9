"""The loss table's 'why' (report/sections/loss.py summary_table, also `vnetbench loss`): it names the
main hop's counter and every other counter that the 'explained' share adds up - seen on a demo
run: 146 lost, 'why' named only 71 unread while 'explained' said 100 %."""

from __future__ import annotations

from typing import Any

import pandas as pd

from vnetbench.report.format import count, one_decimal, share
from vnetbench.report.sections.loss import not_accounted_table, summary_table


def _explainer(counter: str, packets: float, cause: str) -> dict[str, Any]:
    return {"counter": counter, "packets": packets, "cause": cause, "scope": None, "metric": None}


def _loc(
    stages: list[dict[str, Any]], counter: str | None, counter_packets: float, explained: float
) -> dict[str, Any]:
    return {
        "measurement_id": 5, "src": "vm1", "dst": "vm3", "sent": 41230.0, "received": 41084.0, "app_lost": 146.0,
        "cause": "unread" if counter else None, "counter": counter, "counter_packets": counter_packets,
        "explained_packets": explained, "verdict": "read from the socket (kernel count)", "stages": stages,
    }  # fmt: skip


FRAME = pd.DataFrame([{"id": 5, "measurement": "udp", "repetition": 1}])
UNREAD = "no counter: left in the socket buffer when the receiver stopped"


def test_why_names_every_counter_that_explained_adds_up() -> None:
    stages = [
        {"explainers": [_explainer("tbf drops on node:vm1/eth0", 53, "qdisc drop")]},
        {"explainers": [_explainer("Udp.RcvbufErrors on node:vm3", 22, "socket buffer full")]},
        {"explainers": [_explainer(UNREAD, 71, "unread")]},
    ]
    (row,) = summary_table([_loc(stages, UNREAD, 71, 146)], FRAME).rows
    assert row[6] == (
        f"unread — {UNREAD}: 71; also qdisc drop — tbf drops on node:vm1/eth0: 53; "
        "also socket buffer full — Udp.RcvbufErrors on node:vm3: 22"
    )
    assert row[7] == "100.00 %"  # 146 of 146: 71 + 53 + 22


def test_a_flow_without_a_cause_of_its_own_names_its_paths_counters_without_also() -> None:
    # onl-udp-receivers (b0bfad94), measurement 407: 0 lost, its 'why' read '; also qdisc drop — tbf
    # drops on node:client/eth0: 1,956', an 'also' after nothing
    stages = [{"explainers": [_explainer("tbf drops on node:client/eth0", 1956, "qdisc drop")]}]
    (row,) = summary_table([_loc(stages, None, 0, 0) | {"app_lost": 0.0}], FRAME).rows
    assert row[6] == "counters on its path: qdisc drop — tbf drops on node:client/eth0: 1,956"


def test_a_single_counter_and_counters_that_saw_nothing_add_nothing() -> None:
    stages = [
        {"explainers": [_explainer("tbf drops on node:vm1/eth0", 0, "qdisc drop")]},
        {"explainers": [_explainer(UNREAD, 146, "unread")]},
    ]
    (row,) = summary_table([_loc(stages, UNREAD, 146, 146)], FRAME).rows
    assert row[6] == f"unread — {UNREAD}: 146"


def test_a_shared_queues_counter_is_named_once() -> None:
    # onl-udp-receivers (campaign 3bac6a03), measurement 7: 91 lost at the 115 mbit NIC's tbf shared by
    # 6 flows. 'why' read "qdisc drop at node:client/eth0, shared with the step's other flows — tbf
    # drops on node:client/eth0 (all flows through it): 1,946; also qdisc drop — tbf drops on
    # node:client/eth0: 1,946": one counter (one time series), the same 1,946 drops, named twice.
    tbf = _explainer("tbf drops on node:client/eth0", 1946, "qdisc drop")
    tbf |= {"scope": "qdisc:client/eth0/tbf:1", "metric": "drops"}
    loc = _loc([{"explainers": [tbf]}], "tbf drops on node:client/eth0 (all flows through it)", 1946, 0)
    loc |= {"cause": "qdisc drop at node:client/eth0, shared with the step's other flows", "app_lost": 91.0}
    loc |= {"counter_scope": "qdisc:client/eth0/tbf:1", "counter_metric": "drops"}
    (row,) = summary_table([loc], FRAME).rows
    assert row[6] == (
        "qdisc drop at node:client/eth0, shared with the step's other flows — tbf drops on "
        "node:client/eth0 (all flows through it): 1,946"
    )


def test_the_rep_column_names_the_treatment_of_a_designed_campaign() -> None:
    # onl-udp-receivers (campaign 3bac6a03): row 'udp (6) | client→vm1 | 4 | 5,101 | 115 (2.25 %)' was a
    # flow of the 6-receiver treatment (the store: factors {"receivers": 6}, repetition 4) — nothing
    # in the row said so, and the table's 180 rows mix eight treatments of the same flow names.
    stages = [{"explainers": [_explainer(UNREAD, 146, "unread")]}]
    designed = FRAME.assign(repetition=4, factors=[{"receivers": 6}])
    (row,) = summary_table([_loc(stages, UNREAD, 146, 146)], designed).rows
    assert row[2] == "4 (receivers=6)"
    (plain,) = summary_table([_loc(stages, UNREAD, 146, 146)], FRAME.assign(factors=[{}])).rows
    assert plain[2] == "1"


def test_a_flow_lost_at_a_shared_queue_is_explained_up_to_its_drops_and_exactly_for_the_step() -> None:
    # onl-udp-receivers (campaign 3bac6a03), measurement 7: 91 lost, all at the tbf the step's 6 flows
    # shared; the cell read '0.00 %' although that tbf dropped 1,946. By hand: own counters 0 of 91
    # = 0.00 %; the shared counter can account for min(1,946, 91) = 91 of 91 = 100.00 % at most; the
    # step's 6 flows lost 115-6 + 91 + 557 + 345-2 + 183-5 + 668 = 1,946 there (each flow's hop loss
    # less its own counters), and the counter dropped 1,946: 1,946 / 1,946 = 100.00 %.
    tbf = _explainer("tbf drops on node:client/eth0", 1946, "qdisc drop")
    loc = _loc([{"explainers": [tbf]}], "tbf drops on node:client/eth0 (all flows through it)", 1946, 0)
    loc |= {"app_lost": 91.0, "counter_shared": True, "shared_explained_packets": 91.0}
    loc |= {"step_flows": 6, "step_lost": 1946.0}
    (row,) = summary_table([loc], FRAME).rows
    assert row[7] == (
        "0.00 % + ≤ 100.00 % shared (step: its 6 flows lost 1,946 there, the counter dropped 1,946: 100.00 %)"
    )
    # measurement 6: 115 lost, 6 by its own counters (6 / 115 = 5.22 %), 109 at the hop: ≤ 109 / 115
    loc |= {"app_lost": 115.0, "explained_packets": 6.0, "shared_explained_packets": 109.0}
    (row,) = summary_table([loc], FRAME).rows
    assert row[7].startswith("5.22 % + ≤ 94.78 % shared (step:")
    # a counter of the flow's own: the share alone, as before
    loc |= {"counter_shared": False, "shared_explained_packets": 0.0}
    assert summary_table([loc], FRAME).rows[0][7] == "5.22 %"


EN_DASH = "\u2013"  # what the other tables show for a missing value ('–', not the hyphen '-')


def test_a_flow_without_loss_and_a_flow_without_a_count_show_the_en_dash() -> None:
    # `vnetbench loss` on onl-loss-hunt (0db5e574): 'explained  -' for the trace flows that lost
    # nothing, while every other table marks a missing value '–'
    stages = [{"explainers": [_explainer(UNREAD, 0, "unread")]}]
    loc = _loc(stages, None, 0, 0) | {"app_lost": 0.0, "received": 41230.0}
    (row,) = summary_table([loc], FRAME).rows
    assert row[7] == EN_DASH
    skipped = [{"kind": "probe-rtt", "reason": "no counters", "lost": None, "measurement_id": 9}]
    (row,) = not_accounted_table(skipped).rows
    assert row[2] == EN_DASH
    assert share(1, 0) == EN_DASH and count(None) == EN_DASH and one_decimal(None) == EN_DASH
