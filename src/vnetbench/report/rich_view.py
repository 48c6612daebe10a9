"""A `TableView` as a rich table: what the terminal prints (`vnetbench analyze`, `stats`, `loss`), light
enough for the CLI to import at start-up."""

from __future__ import annotations

from rich.table import Table
from rich.text import Text

from vnetbench.report.view import TableView


def rich_table(t: TableView) -> Table:
    """A table of display strings as a rich table (first column left, the others right-aligned); its
    strings are text, not rich markup ('[1, 2]' stays as it is)."""
    table = Table(
        title=Text(t.title) if t.title else None,
        caption=Text(t.note) if t.note else None,
        show_header=any(t.columns),
    )
    for i, col in enumerate(t.columns):
        table.add_column(Text(col), justify="left" if i == 0 else "right")
    for row in t.rows:
        table.add_row(*(Text(cell) for cell in row))
    return table
