"""A connection measured alone by several patterns in one repetition (quickstart: vm1→vm2 by the
'connections' pairs and by the star's alone step; d1453f96 stored n = 4 in 2 repetitions) is not
'one value per repetition', as the TCP section and its CDF said, and its per-repetition line went
through both of a repetition's values, a vertical zig-zag read as one flow. Frames built by hand from
d1453f96's stored throughputs (Mbit/s, measurement ids 1, 14, 10, 23 and 7, 20)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from vnetbench.analysis import descriptive as d
from vnetbench.report import figures
from vnetbench.report.html import _measured_twice, _values_basis


def _frame() -> pd.DataFrame:
    rows = [
        # (id, pattern, group_kind, dst, placement, repetition, Mbit/s)
        (1, "connections", "single", "vm2", "same-host", 1, 95.61702),
        (14, "connections", "single", "vm2", "same-host", 2, 95.38204),
        (10, "star", "alone", "vm2", "same-host", 1, 95.63750),
        (23, "star", "alone", "vm2", "same-host", 2, 95.66091),
        (7, "connections", "single", "vm4", "cross-site", 1, 9.571464),
        (20, "connections", "single", "vm4", "cross-site", 2, 9.517983),
    ]
    return pd.DataFrame(
        [
            {"id": i, "pattern": p, "group_kind": g, "src": "vm1", "dst": dst, "placement": pl,
             "repetition": rep, "throughput_bps": v * 1e6, "kind": "tcp", "measurement": "tcp",
             "status": "ok"}
            for i, p, g, dst, pl, rep, v in rows
        ]
    )  # fmt: skip


def test_a_connection_measured_by_two_patterns_gets_a_line_per_pattern() -> None:
    lines = {label: (x.tolist(), np.round(y, 6).tolist()) for label, x, y in figures.repetition_lines(
        _frame(), "throughput_bps", 1e6)}  # fmt: skip
    assert lines == {
        "vm1→vm2 (connections)": ([1, 2], [95.61702, 95.38204]),
        "vm1→vm2 (star)": ([1, 2], [95.6375, 95.66091]),
        "vm1→vm4 (connections)": ([1, 2], [9.571464, 9.517983]),
    }


def test_one_pattern_per_connection_keeps_one_line_per_connection() -> None:
    frame = _frame()
    frame = frame[frame["pattern"] == "connections"]
    labels = [label for label, _, _ in figures.repetition_lines(frame, "throughput_bps", 1e6)]
    assert labels == ["vm1→vm2", "vm1→vm4"]


def test_the_section_says_what_one_value_is_and_which_connections_n_counts_twice() -> None:
    table = d.connection_table(_frame(), "tcp", "throughput_bps", 1e6)
    # vm1→vm2: n = 4 over 2 repetitions; vm1→vm4: n = 2 over 2
    assert table[["dst", "n", "repetitions"]].values.tolist() == [["vm2", 4, 2], ["vm4", 2, 2]]
    assert _values_basis(table) == "one value per measurement of a flow alone"
    assert _measured_twice(table) == (
        " (vm1 → vm2: measured alone more than once in a repetition, by several patterns; n counts every "
        "measurement, and the per-repetition figure draws one line per pattern)"
    )
    single = d.connection_table(
        _frame()[lambda f: f["pattern"] == "connections"], "tcp", "throughput_bps", 1e6
    )
    assert _values_basis(single) == "one value per repetition" and _measured_twice(single) == ""
