"""Report tables full of intervals, shared by the terminal and HTML tests that keep an interval on one line."""

from __future__ import annotations

from vnetbench.report.format import ci, metric_ci
from vnetbench.report.view import TableView


def unit_view() -> TableView:
    """Intervals with their units in a table's last column and in its note."""
    rows = [
        ["vma→vmb", metric_ci("throughput_bps", 95.1e6, 95.42e6, unit=True)],
        ["vmc→vmd", metric_ci("rtt_mean_ns", 0.2371e6, 0.2384e6, unit=True)],
        ["loss", metric_ci("loss_ratio", 0.01, 0.03, unit=True)],
    ]
    note = f"95 % intervals; the difference {ci(-0.51, 0.58, unit='pp')}, the mean {ci(1.0, 3.0, unit='%')}"
    return TableView("throughput, RTT and loss", ["flow", "interval"], rows, note)


def findings_view() -> TableView:
    """A headerless two-column table, as `vnetbench analyze` prints a part's notes: its second column is
    long (too wide for a terminal: rich wraps it; in HTML the last column wraps)."""
    long = (
        f"mean 6.000, the effect of b {ci(1.766, 6.234)} and of c {ci(0.8809, 5.119)}, significant at 95 %; "
        f"throughput {metric_ci('throughput_bps', 95.1e6, 95.42e6, unit=True)} against "
        f"{metric_ci('throughput_bps', 94.2e6, 94.9e6, unit=True)} alone"
    )
    return TableView(
        "", ["", ""], [["b against a", long], ["loss", f"{ci(-0.51, 0.58, unit='pp')} of 918,120"]]
    )
