"""A number and its unit stay on one terminal line. rich wraps at any whitespace, a non-breaking space
included; `vnetbench analyze` on openstack-bridges' rebuild campaign (ca60f214) printed 'mean of their
means 95.92' at one line's end and 'Mbit/s, CV across rebuilds …' at the next, and `vnetbench loss`
ended a caption line at 'up to 3'. Every width from 16 to 80 is tried, so some width puts each break
exactly where it used to land."""

from __future__ import annotations

import io
import itertools

import pytest
from rich.console import Console
from rich.table import Table

from vnetbench.cli.output import print_table
from vnetbench.report.rich_view import UNITS, TerminalConsole
from vnetbench.report.view import TableView
from vnetbench.spec.units import display_unit

LINE = (
    "• tcp vma→vmb throughput (Mbit/s): first build 1 mean 95.92 Mbit/s (n = 3); 5 rebuilds, mean of "
    "their means 95.92 Mbit/s, CV 0.0043 K pps; loss 100.00 % of 918,120; the difference +0.12 pp."
)
# the values as written, each a number and its unit that must share a line
PAIRS = ("95.92 Mbit/s", "0.0043 K pps", "100.00 %", "+0.12 pp.")
WIDTHS = range(16, 81)


def _lines(render: object, width: int) -> list[str]:
    buffer = io.StringIO()
    console = TerminalConsole(file=buffer, width=width, emoji=False)
    if isinstance(render, TableView):
        print_table(console, render)
    else:
        console.print(render, highlight=False)
    return buffer.getvalue().splitlines()


def _split_pairs(lines: list[str]) -> list[str]:
    """The pairs whose number ends one line while its unit starts the next."""
    out = []
    for first, second in itertools.pairwise(lines):
        a, b = first.rstrip(" │"), second.lstrip(" │")
        out += [p for p in PAIRS if a.endswith(p.split(" ")[0]) and b.startswith(p.split(" ", 1)[1])]
    return out


def test_plain_rich_does_break_a_number_from_its_unit() -> None:
    """The baseline: rich's own console ends a line between '95.92' and 'Mbit/s' at some width,
    with a plain or a non-breaking space."""
    for space in (" ", "\u00a0"):
        broken = []
        for width in WIDTHS:
            buffer = io.StringIO()
            Console(file=buffer, width=width).print(LINE.replace("95.92 ", f"95.92{space}"), highlight=False)
            broken += _split_pairs(buffer.getvalue().splitlines())
        assert "95.92 Mbit/s" in broken


@pytest.mark.parametrize("width", WIDTHS)
def test_a_printed_line_keeps_each_number_with_its_unit(width: int) -> None:
    lines = _lines(LINE, width)
    assert _split_pairs(lines) == []
    text = " ".join(line.strip() for line in lines)
    assert text == LINE  # nothing lost, and plain spaces: no NBSP left for a reader to copy or grep
    assert "\u00a0" not in "".join(lines)


@pytest.mark.parametrize("width", WIDTHS)
def test_a_tables_caption_title_and_cells_keep_each_number_with_its_unit(width: int) -> None:
    view = TableView(
        "throughput 95.92 Mbit/s",
        ["flow", "mean"],
        [["vma→vmb", "95.92 Mbit/s"], ["vmc→vmd", "100.00 %"]],
        LINE,  # the note: a caption as long as a paragraph
    )
    lines = _lines(view, width)
    assert _split_pairs(lines) == []
    assert "\u00a0" not in "".join(lines)
    # a rich table built from strings (report/terminal.py), printed through the same console
    table = Table(title="mean 95.92 Mbit/s", caption=LINE)
    table.add_column("flow")
    table.add_column("mean")
    table.add_row("vma→vmb", "0.0043 K pps")
    assert _split_pairs(_lines(table, width)) == []


def test_every_display_unit_is_tied_to_its_number() -> None:
    """spec.units' display units and their deltas are in the list of units that join_units ties."""
    for metric in (
        "throughput_bps",
        "rtt_mean_ns",
        "tx_pps",
        "loss_ratio",
        "size_bytes",
        "lost_packets",
        "run_s",
    ):
        unit = display_unit(metric)
        assert unit.label in UNITS
        assert not unit.delta_label or unit.delta_label in UNITS
