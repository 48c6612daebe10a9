"""Report section: TCP over delayed links, explained with the bandwidth-delay product.

For every TCP measurement whose path has configured delay (netem or a delay node), the window a
sender needs to fill the path is BDP = rate × RTT. With a window W below it, goodput is at most
W / RTT: a long path is slower than a short one at the same window (ExoGENI Table 12).
"""

from __future__ import annotations

import pandas as pd

from vnetbench.layout import build_layout
from vnetbench.report import format as fmt
from vnetbench.report.sections import ReportContext
from vnetbench.report.view import Section, TableView
from vnetbench.spec import delaycdf

ORDER = 55


INTRO = (
    "A TCP sender keeps at most one window of data unacknowledged, so its goodput is at most "
    "window / RTT, and the link is full only when the window reaches the bandwidth-delay product "
    "(BDP = rate × RTT). Over a long path the same window therefore carries less: the ExoGENI "
    "study's long-distance pairs (RTT ≈ 238 ms) reached 8.2 Mbit/s on 10 Mbit/s links where the "
    "short ones (RTT ≈ 50 ms) reached 9.3 Mbit/s (its Table 12). RTT here is twice the configured "
    "one-way delay of the path (the median of a link's delay_cdf; docs/delay-nodes.md); "
    "'auto' means Linux's autotuned buffers. Sizes are in KiB (1024 bytes), as the spec writes them. "
    "`window` sets the socket buffers (iperf3 -w); Linux derives the window it advertises from "
    "them (it doubles the request and keeps the share its buffers' overhead leaves, within what the "
    "window scale chosen at connection set-up can express), so the window in effect can be well "
    "above the one asked (e.g. 318.6 KiB for 256 KiB over a delay-node path). 'advertised' is the "
    "largest window the receiver advertised, as the sender saw it (iperf3's max_snd_wnd, median over "
    "the repetitions). window / RTT is given where a window was asked ('–' with autotuned buffers, "
    "whose window grows as far as the path needs): it uses the advertised window where iperf3 "
    "reported it, else the one asked, and queueing adds to the RTT: the bound is approximate."
)
COLUMNS = [
    "path",
    "RTT (ms)",
    "rate (Mbit/s)",
    "BDP (KiB)",
    "window asked (KiB)",
    "advertised (KiB)",
    "window / RTT (Mbit/s)",
    "overhead-model max (Mbit/s)",
    "goodput median (Mbit/s)",
    "limited by",
]


def build(ctx: ReportContext) -> list[Section]:
    frame = ctx.frame
    if frame.empty or "kind" not in frame or "throughput_bps" not in frame:
        return []
    tcp = frame[(frame["kind"] == "tcp") & (frame["status"] == "ok")]
    if tcp.empty or ctx.spec is None:
        return []
    layout = build_layout(ctx.spec, ctx.campaign_id)
    rows, items = [], []
    for (name, src, dst), group in tcp.groupby(["measurement", "src", "dst"], sort=False):
        links = layout.path_links(src, dst)
        # a link's empirical delay_cdf counts with its median
        one_way_ns = sum(
            link.delay or (delaycdf.median_ns(link.delay_cdf) if link.delay_cdf else 0) for link in links
        )
        if not one_way_ns:
            continue
        window = getattr(ctx.spec.measurement(name), "window", None)
        row, item = _path(
            f"{src} → {dst}", name, group, 2 * one_way_ns / 1e9, layout.bottleneck_rate(src, dst), window
        )
        rows.append(row)
        items += [item] if item else []
    if not rows:
        return []
    table = TableView("TCP over delayed paths", COLUMNS, rows)
    return [Section("Delay and the bandwidth-delay product", "delay-bdp", INTRO, [table], [], items)]


def _path(
    pair: str, name: str, group: pd.DataFrame, rtt_s: float, rate: float | None, window: float | None
) -> tuple[list[str], str | None]:
    """One path's table row, and the sentence that explains it where a window was asked below the BDP."""
    rtt_ms = f"{rtt_s * 1e3:.1f}"  # the sentences quote the table: 240.0 ms, not 240 beside it
    advertised = _median_or_none(group, "max_snd_wnd_bytes")
    effective = advertised or window  # what the receiver granted, else what was asked
    goodput = float(group["throughput_bps"].median())
    model = group["expected_max_bps"].median() if "expected_max_bps" in group else None
    bdp = rate * rtt_s / 8 if rate else None
    window_bound = effective * 8 / rtt_s if effective and window else None
    limited = window is not None and bdp is not None and effective < bdp
    row = [
        f"{pair} ({name})",
        rtt_ms,
        fmt.mbit2(rate),
        fmt.kib_or_auto(bdp),
        fmt.kib_or_auto(window),
        fmt.kib_or_auto(advertised) if advertised else fmt.MISSING,
        fmt.mbit2(window_bound),
        fmt.mbit2(model),
        fmt.mbit2(goodput),
        "window" if limited else "link" if window is not None else "autotuned",
    ]
    granted = f"; the receiver advertised {fmt.kib_or_auto(advertised)} KiB" if advertised else ""
    measured = f"measured {fmt.mbit2(goodput)} Mbit/s (median)."
    if limited:
        return row, (
            f"{pair}: the window ({fmt.kib_or_auto(window)} KiB asked{granted}) is below the "
            f"bandwidth-delay product {fmt.kib_or_auto(bdp)} KiB = {fmt.mbit2(rate)} Mbit/s × {rtt_ms} ms, "
            f"so TCP carries about window / RTT = {fmt.mbit2(window_bound)} Mbit/s, less than the link; "
            + measured
        )
    if window is not None and bdp is not None and window < bdp:
        return row, (
            f"{pair}: the window asked ({fmt.kib_or_auto(window)} KiB) is below the bandwidth-delay "
            f"product {fmt.kib_or_auto(bdp)} KiB{granted}, enough to fill the link: not window-limited; "
            + measured
        )
    return row, None


def _median_or_none(group: pd.DataFrame, column: str) -> float | None:
    """The median of a column's stored values; None where no measurement stored it."""
    if column not in group:
        return None
    values = group[column].dropna()
    return float(values.median()) if len(values) else None
