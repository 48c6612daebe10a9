"""A connection's mean above the overhead model's maximum is explained where the token bucket explains
it (exogeni-exp5, campaign ca60f214: 95.92 Mbit/s over 2 s on a 100 mbit link, 100.3 % of the model)."""

from __future__ import annotations

import pandas as pd

from vnetbench.report.prepared import TREATMENT, _above_model_note

MODEL = 95.641e6  # 100 Mbit/s × 1448 / 1514 (tcp_efficiency at MTU 1500)


def _frame(throughputs: list[float], duration_s: float = 2.0) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "kind": "tcp", "group_kind": "single", "measurement": "tcp", "src": "vma", "dst": "vmb",
            "placement": "same-host", TREATMENT: "", "throughput_bps": throughputs,
            "expected_max_bps": MODEL, "duration_ns": int(duration_s * 1e9),
        }
    )  # fmt: skip


def _builds(shaping: str) -> pd.DataFrame:
    return pd.DataFrame({"layout": [{"links": [{"link": "l", "rate_bps": 100_000_000, "shaping": shaping}]}]})


def test_a_short_run_above_the_model_is_within_the_buckets_burst() -> None:
    # 8 ms of burst over a 2 s window: up to 1 + 0.008 / 2 = 100.4 % of the model
    (note,) = _above_model_note(_frame([95.92e6, 95.91e6]), "tcp", _builds("network"), 0)
    assert "1 connection, at most 100.3 %" in note and "8 ms at the link's rate with network shaping" in note
    assert note.endswith("can carry up to 100.4 % of the model.")


def test_more_than_the_bucket_allows_is_said_to_be() -> None:
    # sender shaping: 1 ms over 2 s is 100.05 %; 100.3 % is more than that
    (note,) = _above_model_note(_frame([95.92e6]), "tcp", _builds("sender"), 0)
    assert "1 ms at the link's rate with sender shaping" in note
    assert note.endswith("this is more than the bucket explains.")
    # after a warm-up omit the burst has passed: the model itself is the limit
    (after,) = _above_model_note(_frame([95.92e6]), "tcp", _builds("network"), 500_000_000)
    assert after.endswith("after the warm-up omit it has passed, so this is more than the bucket explains.")


def test_nothing_is_said_within_the_model() -> None:
    assert _above_model_note(_frame([95.6e6, 95.5e6]), "tcp", _builds("network"), 0) == []
    assert _above_model_note(_frame([95.92e6]), "udp", _builds("network"), 0) == []  # another kind
