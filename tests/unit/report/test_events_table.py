"""The report's events table: iperf3's MSS warning explained where the datagrams fit the path MTU."""

from __future__ import annotations

import pandas as pd

from vnetbench.report.html import _mss_warning_note

WARNING = (
    "iperf3 client: warning: UDP block size {} exceeds TCP MSS 1448, may result in fragmentation / drops"
)


def events(*sizes: int) -> pd.DataFrame:
    return pd.DataFrame(
        {"measurement_id": list(range(1, len(sizes) + 1)), "detail": [WARNING.format(n) for n in sizes]}
    )


def measurements(mtu: int, n: int) -> pd.DataFrame:
    return pd.DataFrame({"id": list(range(1, n + 1)), "path_mtu": [mtu] * n})


def test_a_datagram_within_the_mtu_is_said_not_to_fragment() -> None:
    # 1470 bytes of payload + 8 (UDP) + 20 (IPv4) = 1498 ≤ 1500: one frame, whatever the MSS
    note = _mss_warning_note(events(1470, 1470), measurements(1500, 2))
    assert "not a problem here: 1470 + 28 = 1498 bytes within the path MTU 1500" in note


def test_a_datagram_above_the_mtu_keeps_the_warning_alone() -> None:
    assert _mss_warning_note(events(1470, 1480), measurements(1500, 2)) == ""  # 1508 > 1500 for one
    assert _mss_warning_note(events(1470), pd.DataFrame({"id": [1], "path_mtu": [None]})) == ""  # unknown MTU


def test_other_warnings_get_no_note() -> None:
    other = pd.DataFrame({"measurement_id": [1], "detail": ["iperf3 server: warning: something else"]})
    assert _mss_warning_note(other, measurements(1500, 1)) == ""
