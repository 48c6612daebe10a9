"""Report section: TCP over delayed links, explained with the bandwidth-delay product.

For every TCP measurement whose path has configured delay (netem or a delay node), the window a
sender needs to fill the path is BDP = rate × RTT. With a window W below it, goodput is at most
W / RTT: a long path is slower than a short one at the same window (ExoGENI Table 12).
"""

from __future__ import annotations

from vnetbench.layout import build_layout
from vnetbench.report import format as fmt
from vnetbench.report.sections import ReportContext
from vnetbench.report.view import Section, TableView
from vnetbench.spec import delaycdf

ORDER = 55


def build(ctx: ReportContext) -> list[Section]:
    frame = ctx.frame
    if frame.empty or "kind" not in frame or "throughput_bps" not in frame:
        return []
    tcp = frame[(frame["kind"] == "tcp") & (frame["status"] == "ok")]
    if tcp.empty:
        return []
    if ctx.spec is None:
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
        rtt_s = 2 * one_way_ns / 1e9
        rate = layout.bottleneck_rate(src, dst)
        window = getattr(ctx.spec.measurement(name), "window", None)
        goodput = float(group["throughput_bps"].median())
        model = group["expected_max_bps"].median() if "expected_max_bps" in group else None
        bdp = rate * rtt_s / 8 if rate else None
        window_bound = window * 8 / rtt_s if window else None
        limited = window is not None and bdp is not None and window < bdp
        rows.append(
            [
                f"{src} → {dst} ({name})",
                f"{rtt_s * 1e3:.1f}",
                fmt.mbit2(rate),
                fmt.kb_or_auto(bdp),
                fmt.kb_or_auto(window),
                fmt.mbit2(window_bound),
                fmt.mbit2(model),
                fmt.mbit2(goodput),
                "window" if limited else "link" if window is not None else "autotuned",
            ]
        )
        if limited:
            items.append(
                f"{src} → {dst}: the window ({window / 1000:.0f} KB) is below the bandwidth-delay product "
                f"{fmt.kb_or_auto(bdp)} KB = {fmt.mbit2(rate)} Mbit/s × {rtt_s * 1e3:.0f} ms, so TCP carries "
                f"about window / RTT = {fmt.mbit2(window_bound)} Mbit/s, less than the link; measured "
                f"{fmt.mbit2(goodput)} Mbit/s (median)."
            )
    if not rows:
        return []
    intro = (
        "A TCP sender keeps at most one window of data unacknowledged, so its goodput is at most "
        "window / RTT, and the link is full only when the window reaches the bandwidth-delay product "
        "(BDP = rate × RTT). Over a long path the same window therefore carries less: the ExoGENI "
        "study's long-distance pairs (RTT ≈ 238 ms) reached 8.2 Mbit/s on 10 Mbit/s links where the "
        "short ones (RTT ≈ 50 ms) reached 9.3 Mbit/s (its Table 12). RTT here is twice the configured "
        "one-way delay of the path (the median of a link's delay_cdf; docs/delay-nodes.md); "
        "'auto' means Linux's autotuned buffers. "
        "`window` sets the socket buffers (iperf3 -w); Linux derives the advertised window from them "
        "(it doubles the request and keeps a share for overhead), so the effective window is near W, "
        "not exactly W, and queueing adds to the RTT: the bound is approximate."
    )
    table = TableView(
        "TCP over delayed paths",
        [
            "path",
            "RTT (ms)",
            "rate (Mbit/s)",
            "BDP (KB)",
            "window (KB)",
            "window / RTT (Mbit/s)",
            "overhead-model max (Mbit/s)",
            "goodput median (Mbit/s)",
            "limited by",
        ],
        rows,
    )
    return [Section("Delay and the bandwidth-delay product", "delay-bdp", intro, [table], [], items)]
