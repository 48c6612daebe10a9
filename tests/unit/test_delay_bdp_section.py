"""The report's bandwidth-delay-product section: which paths it lists and what it concludes."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from vnetbench.report.sections import ReportContext
from vnetbench.report.sections.delay_bdp import build

SPEC = (Path(__file__).parents[2] / "benchmarks" / "delay" / "bdp.yaml").read_text()


def _ctx(rows: list[dict]) -> ReportContext:
    return ReportContext(
        store=None,
        campaign={"id": "c0ffee10", "spec_text": SPEC},
        frame=pd.DataFrame(rows),
        fig_dir=Path("."),
    )  # type: ignore[arg-type]


def _row(src: str, dst: str, bps: float) -> dict:
    return {
        "kind": "tcp",
        "status": "ok",
        "measurement": "tcp256k",
        "src": src,
        "dst": dst,
        "throughput_bps": bps,
        "expected_max_bps": 9.57e6,
    }


def test_long_path_is_window_limited_short_is_not() -> None:
    (section,) = build(_ctx([_row("s1", "s2", 9.34e6), _row("l1", "l2", 8.7e6), _row("l1", "l2", 8.8e6)]))
    rows = {r[0]: r for r in section.tables[0].rows}
    short, long_ = rows["s1 → s2 (tcp256k)"], rows["l1 → l2 (tcp256k)"]
    assert short[1] == "50.0" and long_[1] == "240.0"  # RTT = 2 × configured one-way delay
    assert short[3] == "61.0" and long_[3] == "293.0"  # BDP in KiB: 62 500 and 300 000 bytes / 1024
    assert short[-1] == "link" and long_[-1] == "window"
    assert long_[5] == "–"  # no advertised window stored: the bound uses the window asked
    assert long_[6] == "8.74" and long_[8] == "8.75"  # window / RTT; median goodput
    # the sentence quotes the table's numbers, in the spec's KiB (256KB in the spec is 256.0 here)
    assert len(section.items) == 1 and section.items[0].startswith("l1 → l2: the window (256.0 KiB asked)")
    assert "product 293.0 KiB = 10.00 Mbit/s × 240.0 ms" in section.items[0]


def _with_advertised(row: dict, advertised: float) -> dict:
    return {**row, "max_snd_wnd_bytes": advertised}


def test_the_bound_uses_the_window_the_receiver_advertised() -> None:
    # Measured on this machine (benchmarks/delay, 2026-11-29): iperf3 -w 256K over the 240 ms path,
    # the sender saw max_snd_wnd 326 240 bytes and carried 9.35 Mbit/s. 326 240 B x 8 / 0.240 s =
    # 10.87 Mbit/s (by hand) > the link: not window-limited although 256 KiB < the 293 KiB BDP.
    rows = [
        _with_advertised(_row("l1", "l2", 9.35e6), 326_240),
        _with_advertised(_row("l1", "l2", 9.36e6), 326_240),
    ]
    (section,) = build(_ctx(rows))
    (long_,) = section.tables[0].rows
    assert long_[4] == "256.0" and long_[5] == "318.6"  # asked, advertised in KiB (326 240 / 1024)
    assert long_[6] == "10.87" and long_[-1] == "link"
    (item,) = section.items
    assert "the window asked (256.0 KiB) is below" in item and "the receiver advertised 318.6 KiB" in item
    assert "not window-limited" in item

    # 200 000 B advertised: 200 000 x 8 / 0.240 = 6.67 Mbit/s (by hand), below the link: window-limited.
    (section,) = build(_ctx([_with_advertised(_row("l1", "l2", 6.5e6), 200_000)]))
    (long_,) = section.tables[0].rows
    assert long_[6] == "6.67" and long_[-1] == "window"
    assert section.items[0].startswith(
        "l1 → l2: the window (256.0 KiB asked; the receiver advertised 195.3 KiB)"
    )


def test_no_section_without_tcp_over_delay() -> None:
    assert build(_ctx([])) == []
    assert build(_ctx([{**_row("s1", "s2", 1.0), "kind": "udp"}])) == []


def test_a_delay_cdf_link_counts_with_its_median() -> None:
    spec = SPEC.replace("delay: 120ms", "delay_cdf: [[0, 100ms], [0.5, 120ms], [1, 400ms]]", 1)
    assert spec != SPEC
    ctx = ReportContext(
        store=None,
        campaign={"id": "c0ffee10", "spec_text": spec},
        frame=pd.DataFrame([_row("l1", "l2", 8.7e6)]),
        fig_dir=Path("."),
    )  # type: ignore[arg-type]
    (section,) = build(ctx)
    assert section.tables[0].rows[0][1] == "240.0"  # 2 × the CDF's median, 120 ms


def test_autotuned_buffers_get_no_window_bound_and_the_intro_says_so() -> None:
    # audit (a→b, 50 Mbit/s, 5 ms each way, no `window`): 'advertised' 4849.5 KiB and window / RTT '–',
    # under an intro that said "window / RTT uses it [the advertised window] where iperf3 reported it"
    spec = SPEC.replace(", window: 256KB", "")
    ctx = ReportContext(
        store=None,
        campaign={"id": "c0ffee10", "spec_text": spec},
        frame=pd.DataFrame([_with_advertised(_row("l1", "l2", 9.5e6), 4_965_888)]),
        fig_dir=Path("."),
    )  # type: ignore[arg-type]
    (section,) = build(ctx)
    (long_,) = section.tables[0].rows
    assert long_[4] == "auto" and long_[5] == "4849.5" and long_[6] == "–" and long_[-1] == "autotuned"
    assert (
        "window / RTT is given where a window was asked ('–' with autotuned buffers, whose window grows "
        "as far as the path needs): it uses the advertised window where iperf3 reported it, else the one "
        "asked, and queueing adds to the RTT: the bound is approximate."
    ) in section.intro
    assert "window / RTT uses it where iperf3 reported it" not in section.intro
