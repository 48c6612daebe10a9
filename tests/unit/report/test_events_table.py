"""The report's events table: iperf3's MSS warning explained where the datagrams fit the path MTU."""

from __future__ import annotations

import pandas as pd

from vnetbench.report.html import _event_example, _mss_warning_note, shortened

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


def test_a_long_example_is_cut_at_a_word_with_an_ellipsis() -> None:
    # 30 words "word01".."word30" joined by spaces: 30 × 7 - 1 = 209 characters, word k (1-based)
    # at indices 7(k-1)..7(k-1)+5. 159 characters are kept before the "…" (160 in all).
    text = " ".join(f"word{i:02d}" for i in range(1, 31))
    cut = shortened(text)
    # by hand: word23 spans 154..159, so the cut after index 158 falls inside it and it is dropped:
    # 22 whole words remain
    assert cut == " ".join(f"word{i:02d}" for i in range(1, 23)) + "…"
    assert len(cut) <= 160


def test_the_events_table_cuts_no_word_in_half() -> None:
    # The audit's case: a detail whose 160th character falls inside a word ("fragmentation").
    detail = "x" * 140 + " may result in fragmentation / drops"
    ev = pd.DataFrame({"kind": ["warning"], "detail": [detail], "measurement_id": [1]})
    example = _event_example(ev, "warning", pd.DataFrame())
    # by hand: 140 x's (0..139), " may result in " 140..154, "fragmentation" 155..167: the old
    # [:160] gave "... may result in fragm"; the word is dropped whole, then the ellipsis.
    assert example == "x" * 140 + " may result in…"


def test_a_word_ending_at_the_cut_is_kept() -> None:
    # "aaaa " × 40 = 200 characters; index 158 is the 4th "a" of word 32 (155..158), index 159 a
    # space: word 32 ends exactly at the cut and is kept.
    assert shortened("aaaa " * 40) == " ".join(["aaaa"] * 32) + "…"


def test_a_short_example_is_left_whole() -> None:
    assert shortened("iperf3 server: warning: something else") == "iperf3 server: warning: something else"


def test_late_ping_replies_do_not_read_as_loss() -> None:
    """exogeni-exp1 listed 196 `no_answer` events beside a loss of 0.00 %: ping's "no answer yet"
    lines for requests answered after the next was sent. The table names them late, not lost; old
    runs' `no_answer` rows say they may be either."""
    from types import SimpleNamespace

    from vnetbench.report.html import _failures_section

    kinds = ["late_reply"] * 3 + ["no_reply", "no_answer"]
    ev = pd.DataFrame({"kind": kinds, "detail": ["d"] * 5, "measurement_id": [1] * 5})
    store = SimpleNamespace(events_frame=lambda _campaign: ev)
    section = _failures_section(store, "c", pd.DataFrame())  # type: ignore[arg-type]
    [table] = section.tables
    rows = {r[0].split()[0]: r for r in table.rows}
    assert rows["late_reply"][1] == "3"
    assert "late, not lost" in rows["late_reply"][0]
    assert "never answered: counted in the loss" in rows["no_reply"][0]
    assert "late or lost" in rows["no_answer"][0]
