"""Host availability from host_state events: shares, intervals and the per-repetition grid."""

from __future__ import annotations

import json

import pandas as pd

from vnetbench.report.sections.host_availability import timelines

S = 10**9


def events(*items: tuple[str, int, bool, str]) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "kind": ["host_state"] * len(items) + ["other"],
            "detail": [json.dumps({"host": h, "t_ns": t, "up": up, "reason": r}) for h, t, up, r in items]
            + ["not json"],
        }
    )


def test_availability_and_states_from_changes() -> None:
    lines = timelines(
        events(
            ("a", 0, True, ""),
            ("b", 0, True, ""),
            ("a", 40 * S, False, "connection lost"),
            ("a", 70 * S, True, ""),
        )
    )
    a, b = lines["a"], lines["b"]
    assert a.availability(100 * S) == 0.7
    assert b.availability(100 * S) == 1.0
    assert a.intervals(100 * S) == [(0, 40 * S, True), (40 * S, 70 * S, False), (70 * S, 100 * S, True)]
    assert a.state_between(0, 30 * S) == "up"
    assert a.state_between(45 * S, 60 * S) == "down"
    assert a.state_between(30 * S, 50 * S) == "partly"
    assert a.up_at(-1) is None and a.state_between(-5, -1) == ""


def test_no_events_no_timelines() -> None:
    assert timelines(pd.DataFrame({"kind": [], "detail": []})) == {}
