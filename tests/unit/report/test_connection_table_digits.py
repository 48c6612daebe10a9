"""The per-connection tables write a metric with the digits the Findings quote it with."""

from __future__ import annotations

from typing import Any

import pandas as pd

from vnetbench.report.html import _mbit, _stats_table


def _row(**stats: float) -> dict[str, Any]:
    return {"src": "vma", "dst": "vmb", "placement": "same-host", "n": 3} | stats


def test_throughput_keeps_the_four_digits_of_the_findings() -> None:
    # a mean of 95.64 Mbit/s is '95.64' in the Findings (throughput_bps: 4 digits), so here too, not '95.6';
    # a max of 479.8 is '479.8', not '480'
    table = pd.DataFrame([_row(mean=95.64, sd=0.51234, min=95.1, median=95.6, p95=95.9, max=479.8)])
    view = _stats_table("TCP throughput per connection", table, "throughput_bps")
    assert view.columns[3] == "mean (Mbit/s)"
    assert view.rows[0][3:] == ["95.64", "0.5123", "95.10", "95.60", "–", "479.8"]


def test_rtts_close_together_get_the_digits_that_keep_min_and_max_apart() -> None:
    # RTT (rtt_ns, shown in ms) has 3 digits: 237.9 and 238.4 would both read '238'; with a 4th digit
    # they are apart, and every column of the row takes it (the SD keeps the metric's 3)
    table = pd.DataFrame([_row(n=30, mean=238.12, sd=0.1234, min=237.9, median=238.1, p95=238.35, max=238.4)])
    view = _stats_table("RTT per connection", table, "rtt_ns")
    assert view.columns[3] == "mean (ms)"
    assert view.rows[0][3:] == ["238.1", "0.123", "237.9", "238.1", "238.3", "238.4"]


def test_offered_and_sent_share_one_formatter() -> None:
    # offered 20 Mbit/s and sent 19.998 Mbit/s: both to the throughput's 4 digits, '20.00' (not '20'
    # beside '20.0')
    assert (_mbit(20.0), _mbit(19.998), _mbit(float("nan"))) == ("20.00", "20.00", "–")
