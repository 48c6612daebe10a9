"""The Findings' headline line names the measurement when one kind has several on a pair."""

from __future__ import annotations

import pandas as pd

from vnetbench.report.sections.findings import headline_findings


def _rows(measurement: str, values: list[float]) -> list[dict]:
    return [
        {
            "id": i,
            "measurement": measurement,
            "kind": "tcp",
            "src": "l1",
            "dst": "l2",
            "placement": "same-host",
            "status": "ok",
            "group_size": 1,
            "group_kind": "single",
            "throughput_bps": v,
        }
        for i, v in enumerate(values)
    ]


def test_two_windows_on_one_pair_are_told_apart() -> None:
    # benchmarks/delay/bdp.yaml measures l1 -> l2 with a 160 KiB and a 256 KiB window: the line read
    # "l1→l2 6.3937 Mbit/s …; l1→l2 9.345 Mbit/s …" with nothing saying which was which
    frame = pd.DataFrame(_rows("tcp160k", [6.39e6, 6.40e6]) + _rows("tcp256k", [9.35e6, 9.34e6]))
    (line,) = headline_findings(frame)
    assert "l1→l2 (tcp160k) " in line and "l1→l2 (tcp256k) " in line


def test_one_measurement_per_kind_keeps_the_short_form() -> None:
    (line,) = headline_findings(pd.DataFrame(_rows("tcp", [9.35e6, 9.34e6])))
    assert "l1→l2 9." in line and "(tcp)" not in line
