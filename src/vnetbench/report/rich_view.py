"""A `TableView` as a rich table: what the terminal prints (`vnetbench analyze`, `stats`, `loss`), light
enough for the CLI to import at start-up; and the console that keeps a number beside its unit.

rich wraps a line at any whitespace character, a non-breaking space included (its word pattern is
`\\s`, which matches U+00A0), so "9.67 Mbit/s" could end a line at "9.67" and start the next with
"Mbit/s"; an interval "(1.2 to 3.4)" could end a line at "(1.2 to", which reads as two numbers.
`join_units` ties a number to the unit after it, and an interval's ends, its 'to' and its unit to each
other, with non-breaking spaces, and `Unbroken` text wraps with that space treated as part of the word,
then prints it as a plain space: what a reader copies or greps is "9.67 Mbit/s" as before.
`TerminalConsole` does both for every string it prints (table cells, titles, captions, `out.print`
lines); wrapping happens between whole values only.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from rich.cells import cell_len
from rich.console import Console, ConsoleOptions, RenderableType
from rich.containers import Lines
from rich.measure import Measurement
from rich.segment import Segment
from rich.table import Table
from rich.text import Text

from vnetbench.report.view import TableView

NBSP = "\u00a0"
# the units a number is written with: spec.units' display units and their deltas (Mbit/s, ms, K pps,
# %, pp, bytes, packets, s), and the rates, times and sizes written beside them
UNITS = (
    "Gbit/s", "Mbit/s", "kbit/s", "bit/s", "K pps", "pps", "ms", "µs", "ns", "s", "%", "pp",
    "GB", "MB", "kB", "bytes", "packets",
)  # fmt: skip
_UNIT = "(?:" + "|".join(re.escape(u) for u in UNITS) + r")(?![\w/])"
_UNIT_AFTER_NUMBER = re.compile(r"(?<=\d) (" + _UNIT + ")")
# an interval as spec.units.format_interval writes it, with the unit after it if any: '(1.2 to 3.4)',
# '(−0.51 to 0.58) pp'; a line broken inside it ('(1.2 to' / '3.4)') reads as two numbers
_NUMBER = r"[−+-]?\d[\d.,]*"
_INTERVAL = re.compile(rf"\({_NUMBER} to {_NUMBER}\)(?: {_UNIT})?")
_BREAKABLE = re.compile(r"[^\S\u00a0]+")  # whitespace where a line may break: any but NBSP
_MASK = "\ue000"  # stands for NBSP while rich wraps: one cell wide, not whitespace, never in our text


def join_units(text: str) -> str:
    """Every 'number unit' and every interval of the text tied with non-breaking spaces: '95.92 Mbit/s' →
    '95.92\\u00a0Mbit/s', '0.0043 K pps' → '0.0043\\u00a0K\\u00a0pps', '(1.0 to 3.0) %' →
    '(1.0\\u00a0to\\u00a03.0)\\u00a0%'."""
    text = _INTERVAL.sub(lambda m: m.group(0).replace(" ", NBSP), text)
    return _UNIT_AFTER_NUMBER.sub(lambda m: NBSP + m.group(1).replace(" ", NBSP), text)


class Unbroken(Text):
    """Text that rich never breaks at a non-breaking space, printed with plain spaces."""

    def wrap(self, console: Console, width: int, **kwargs: Any) -> Lines:
        masked = self.copy()  # a plain Text: its wrap is rich's own
        masked.plain = self.plain.replace(NBSP, _MASK)
        lines = masked.wrap(console, width, **kwargs)
        for line in lines:
            line.plain = line.plain.replace(_MASK, " ")
        return lines

    def __rich_measure__(self, console: Console, options: ConsoleOptions) -> Measurement:
        """rich's measure, with a number and its unit as one word (the narrowest a column can be)."""
        measured = super().__rich_measure__(console, options)
        widest = max((cell_len(word) for word in _BREAKABLE.split(self.plain)), default=0)
        return Measurement(max(measured.minimum, widest), max(measured.maximum, widest))


def unbroken(text: Text | str) -> Unbroken:
    """The text, its styles kept, with every number tied to its unit (`join_units`)."""
    if isinstance(text, str):
        return Unbroken(join_units(text))
    return Unbroken(
        join_units(text.plain),  # only spaces become NBSPs: the spans' offsets still hold
        style=text.style,
        justify=text.justify,
        overflow=text.overflow,
        no_wrap=text.no_wrap,
        end=text.end,
        tab_size=text.tab_size,
        spans=list(text.spans),
    )


class TerminalConsole(Console):
    """A rich console that never ends a line between a number and its unit: every string and text it
    renders (a cell, a title, a caption, a printed line) becomes `Unbroken` text."""

    def render_str(self, text: str, **kwargs: Any) -> Text:
        return unbroken(super().render_str(text, **kwargs))

    def render(self, renderable: RenderableType, options: ConsoleOptions | None = None) -> Iterable[Segment]:
        # print() joins the strings and texts it is given into one plain Text: tie its units here
        if isinstance(renderable, Text) and not isinstance(renderable, Unbroken):
            renderable = unbroken(renderable)
        return super().render(renderable, options)


def rich_table(t: TableView) -> Table:
    """A table of display strings as a rich table (first column left, the others right-aligned); its
    strings are text, not rich markup ('[1, 2]' stays as it is), each number tied to its unit."""
    table = Table(
        title=unbroken(t.title) if t.title else None,
        caption=unbroken(t.note) if t.note else None,
        show_header=any(t.columns),
    )
    for i, col in enumerate(t.columns):
        table.add_column(unbroken(col), justify="left" if i == 0 else "right")
    for row in t.rows:
        table.add_row(*(unbroken(cell) for cell in row))
    return table
