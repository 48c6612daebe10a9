"""A background flow runs once per sweep point, so one repetition holds several of its traces: the
trace table named them all 'bg-lb lb-s2→lb-r2 rep 1' (openstack-bridges' report), four identical
labels for four different loads. The label now names the sweep point the flow ran beside."""

from __future__ import annotations

import pandas as pd

from vnetbench.report.sections.probe import _beside


def _step(key: str, pps: float) -> list[dict[str, object]]:
    common = {"step_key": key, "repetition": 1}
    return [
        common
        | {"kind": "pps", "group_kind": "single", "measurement": "sweep", "src": "lb-s1", "dst": "lb-r1"}
        | {"payload_bytes": 18.0, "target_pps": pps},
        common
        | {"kind": "background", "group_kind": "background", "measurement": "bg-lb", "src": "lb-s2"}
        | {"dst": "lb-r2", "payload_bytes": 1472.0, "target_pps": 20000.0},
    ]


def test_background_traces_name_the_sweep_point_they_ran_beside() -> None:
    frame = pd.DataFrame(_step("s1", 1000.0) + _step("s2", 60000.0))
    backgrounds = frame[frame["group_kind"] == "background"]
    assert [_beside(frame, row) for _, row in backgrounds.iterrows()] == [
        " beside sweep lb-s1→lb-r1 18 B at 1000 pps",
        " beside sweep lb-s1→lb-r1 18 B at 60000 pps",
    ]


def test_a_trace_of_its_own_keeps_its_label() -> None:
    frame = pd.DataFrame(_step("s1", 1000.0))
    assert _beside(frame, frame.iloc[0]) == ""
