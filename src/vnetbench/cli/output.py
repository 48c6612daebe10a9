"""Tables on the terminal with every number whole, at any width, and `--json` output.

A table that fits the console is printed as it is. One that does not (a narrow terminal; a pipe or a
file, where rich's width is $COLUMNS or 80) is printed one record per block, each column's header
beside its value, the way `psql \\x` does: rich would otherwise squeeze the columns and cut numbers
to `9.567…`. A table without a header (facts as label · value) wraps its last column instead.
"""

from __future__ import annotations

import json
import sys
import textwrap
from collections.abc import Iterable
from typing import Any

from rich.console import Console
from rich.measure import Measurement
from rich.table import Table
from rich.text import Text

from vnetbench.report.rich_view import NBSP, join_units, rich_table
from vnetbench.report.view import TableView

UNBOUNDED = 10_000  # columns: wider than any table


def print_table(console: Console, table: Table | TableView) -> None:
    """The table as it is when it fits the console's width, else one block per record."""
    if isinstance(table, TableView):
        table = rich_table(table)
    if natural_width(console, table) <= console.width:
        console.print(table)
    elif not table.show_header and len(table.columns) <= 2:
        console.print(_wrapped(table))
    else:
        for line in vertical(table, console.width):
            console.print(line, highlight=False, soft_wrap=True)


def natural_width(console: Console, table: Table) -> int:
    """The table's width with no column squeezed (rich's measure is capped at the console's width)."""
    return Measurement.get(console, console.options.update_width(UNBOUNDED), table).maximum


def print_tables(console: Console, tables: Iterable[Table | TableView]) -> None:
    for table in tables:
        print_table(console, table)


def print_json(data: Any) -> None:
    """One JSON document on stdout, SI base units as stored (never through rich: no wrapping)."""
    sys.stdout.write(json.dumps(data, allow_nan=False, default=str) + "\n")


def vertical(table: Table, width: int) -> list[Text]:
    """The title, then per row a heading (its first cell) and `header  value` lines (values wrapped at
    spaces to `width`, never cut), then the caption."""
    columns = table.columns
    cells = [[_plain(c) for c in column.cells] for column in columns]
    headers = [_plain(c.header) for c in columns]
    key = max((len(h) for h in headers[1:]), default=0)
    wrap = max(20, width - key - 2)
    out: list[Text] = []
    if table.title:
        out += [Text(line, style="bold") for line in _wrap(_plain(table.title), width)]
    for i in range(table.row_count):
        first = cells[0][i] if cells else ""
        heading = f"{headers[0]}: {first}" if headers[0] and first else first or f"row {i + 1}"
        out += [Text(line, style="bold") for line in _wrap(f"── {heading}", width)]
        for header, column in zip(headers[1:], cells[1:], strict=True):
            lines = _wrap(column[i], wrap) or [""]
            for j, line in enumerate(lines):
                label = (header or "·").ljust(key) if j == 0 else " " * key
                out.append(Text.assemble((label, "dim"), "  ", line))
    if table.caption:
        out += [Text(line, style="dim") for line in _wrap(_plain(table.caption), width)]
    return out


def _wrap(text: str, width: int) -> list[str]:
    """Lines of at most `width` broken at spaces only: never inside a word, a hyphenated one included
    (the loss note printed "vnb-" at a line's end and "probe's" on the next), nor between a number and
    its unit (textwrap breaks at ASCII whitespace only, so the non-breaking space holds)."""
    lines = textwrap.wrap(join_units(text), width, break_on_hyphens=False, break_long_words=False)
    return [line.replace(NBSP, " ") for line in lines]


def _wrapped(table: Table) -> Table:
    """The same two-column table with its last column wrapping at spaces (folding what is longer)."""
    for column in table.columns[1:]:
        column.no_wrap = False
        column.overflow = "fold"
    table.columns[0].no_wrap = True
    return table


def _plain(value: Any) -> str:
    """A cell's text without rich markup ('[red]no[/red]' -> 'no')."""
    return value.plain if isinstance(value, Text) else Text.from_markup(str(value)).plain
