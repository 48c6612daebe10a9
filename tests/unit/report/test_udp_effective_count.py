"""The UDP effective throughput table (report and `vnetbench analyze`) counts the values it averages:
one connection measured in 2 replications is 2 values of 1 flow, not '2' under 'flows'."""

from __future__ import annotations

from vnetbench.analysis import campaign_parts as cp
from vnetbench.report.analysis_tables import _udp


def test_the_count_column_says_it_counts_flows_times_replications() -> None:
    # audit (one pair a→b, 2 repetitions): the column 'flows' read 2 for the one flow
    u = cp.UdpEffective(
        ["series"],
        [
            {
                "series": "p · udp · a→b",
                "n_flows": 2,
                "offered_bps": 20e6,
                "throughput_bps": 19.49e6,
                "loss_ratio": 0.0221,
                "effective_throughput_bps": 19.56e6,
            }
        ],
    )
    table = _udp(u).tables[0]
    assert table.columns == [
        "series",
        "n (flows × replications)",
        "offered (Mbit/s)",
        "received (Mbit/s)",
        "mean loss",
        "effective (Mbit/s)",
    ]
    assert table.rows == [["p · udp · a→b", "2", "20.00", "19.49", "2.21 %", "19.56"]]
