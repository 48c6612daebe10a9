"""The Findings line of a packet-rate sweep gives the knee of the mean curve with each repetition's
own knee, and the ceiling (each repetition's most received packets/s, mean ± SD) — not the top of
the mean curve called 'at most … received' while a repetition received more.

Two repetitions of one sweep, worked by hand (a point passes with < 1 % loss and ≥ 95 % sent):

    offered    rep 1 received (loss)    rep 2 received (loss)    mean received (mean loss)
    1000        1000 (0)                 1000 (0)                 1000 (0)
    30000      30000 (0)                29500 (0.015)            29750 (0.0075)  passes on the mean
    60000      59000 (0.005)            40000 (0.33)             49500 (0.1675)
    100000     50000 (0.5)              55000 (0.45)             52500 (0.475)

Knees: mean curve 30000; rep 1 60000 (its 60000 lost 0.5 %); rep 2 1000 (its 30000 lost 1.5 %).
Ceiling: rep 1's most 59000, rep 2's 55000: mean 57000, SD 4000/√2 = 2828.4. The mean curve's top,
52500, is below what repetition 1 received at 60000 (59000): 'at most 52.50 K pps received' was false.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from vnetbench.report.sections.findings import sweep_findings
from vnetbench.report.sections.probe import _sweep_section, repetition_knees

POINTS = {  # offered: ((rep 1 received, loss), (rep 2 received, loss))
    1000: ((1000, 0.0), (1000, 0.0)),
    30000: ((30000, 0.0), (29500, 0.015)),
    60000: ((59000, 0.005), (40000, 0.33)),
    100000: ((50000, 0.5), (55000, 0.45)),
}


def _frame() -> pd.DataFrame:
    rows = []
    for offered, reps in POINTS.items():
        for rep, (received, loss) in enumerate(reps, start=1):
            row = {"status": "ok", "kind": "pps", "group_kind": "single", "pattern": "alone"}
            row |= {"measurement": "sweep", "src": "a", "dst": "b", "factors": {}, "payload_bytes": 18.0}
            row |= {"target_pps": float(offered), "achieved_pps": float(offered), "loss_ratio": loss}
            row |= {"received_pps": float(received), "send_lateness_p99_ns": 1e5, "link_rate_bps": 1e9}
            rows.append(row | {"path_pps_limit": 60000.0, "repetition": rep})
    return pd.DataFrame(rows)


def test_each_repetition_has_its_own_knee() -> None:
    assert repetition_knees(_frame(), "alone: sweep a→b", 18.0) == [60000.0, 1000.0]


def test_the_finding_gives_the_knees_and_the_ceiling_of_the_repetitions() -> None:
    # the ceilings 55 and 59 K pps: mean 57, SD 2√2 = 2.83, given to two significant digits
    assert sweep_findings(_frame()) == [
        "<b>Packet rate, 18-byte payloads</b>: alone: sweep a→b: whole up to 30.00 K pps on the mean of 2 "
        "repetitions (per repetition: 60.00 K pps, 1.000 K pps), ceiling 57.00 ± 2.8 K pps (the most "
        "received in each of 2 repetitions, mean ± SD)."
    ]


def test_the_sweep_table_writes_the_rates_as_the_finding_does(tmp_path: Path) -> None:
    # the same numbers as the finding above, in its unit (K pps) and digits: knee 30000 pps is 30.00,
    # the knees per repetition 60.00 and 1.000, the mean curve's top 52500 is 52.50, the ceiling
    # 57.00 ± 2.8 (not '57,000 ± 2,828'), the path's 60000 pps capacity 60.00
    section = _sweep_section(_frame().assign(group_size=1, step_key="s", seq=1), tmp_path, set())
    assert section is not None
    (table,) = [t for t in section.tables if t.title == "Sweep summary"]
    row = dict(zip(table.columns, table.rows[0], strict=True))
    assert [row[c] for c in table.columns[3:8]] == [
        "30.00",
        "60.00, 1.000",
        "52.50",
        "57.00 ± 2.8 (n=2)",
        "60.00",
    ]
    assert table.columns[6] == "ceiling (K pps), mean ± SD over repetitions"
