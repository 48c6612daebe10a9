"""An interval stays on one terminal line, its unit beside it. A narrow terminal wrapped an interval
'(1.766 to 6.234)' as '(1.766 to' at one line's end and '6.234)' at the next: two numbers, not one
interval — in a cell rich wraps (a headerless two-column table, `analyze`'s notes), in the
one-record-per-block layout of a table too wide for the terminal (textwrap breaks at spaces), in a
caption. The tables here are the ones `vnetbench stats` prints for a one-factor design
(report/terminal.py), a TableView of intervals with their units and such notes, printed as the CLI
prints them (`print_table`) at every even width from 42 to 120 columns."""

from __future__ import annotations

import io
import re

import pandas as pd
import pytest
from rich.table import Table

from tests.helpers.interval_tables import findings_view, unit_view
from vnetbench.analysis.contrasts import successive_differences
from vnetbench.analysis.one_factor import one_factor_anova
from vnetbench.cli import output
from vnetbench.cli.output import print_table
from vnetbench.report import rich_view
from vnetbench.report.rich_view import NBSP, TerminalConsole, join_units, rich_table
from vnetbench.report.terminal import one_factor_tables

# an interval's opening part at a line's (or a cell's) end, or its closing part at the start of one
UNIT = r"(?:Mbit/s|ms|%|pp|K pps)"
OPEN_AT_END = re.compile(r"\(\s*[−-]?\d[\d.,]*(?:\s+to(?:\s+[−-]?[\d.,]*)?)?$")
CLOSE_AT_START = re.compile(r"^to\s+[−-]?\d")
UNIT_ALONE = re.compile(rf"^{UNIT}(?:[,.;]|$)")  # a unit at a line's start, its number on the line before
INTERVAL = re.compile(rf"\([^()]*? to [^()]*?\)(?: {UNIT}(?![\w/]))?")
BORDERS = "│┃|"


def _anova_tables() -> list[Table]:
    """`vnetbench stats`' tables of a one-factor design with negative and positive intervals."""
    data = {"a": [1.0, 2.0, 3.0], "b": [5.0, 7.0], "c": [8.0, 9.0, 10.0, 9.0]}
    frame = pd.DataFrame([{"f": k, "y": v} for k, vs in data.items() for v in vs])
    a = one_factor_anova(frame, "y", "f")
    return one_factor_tables(a, successive_differences(a))


def _intervals(table: Table) -> list[str]:
    """Every interval the table holds, with its unit when it has one, as a reader should see it."""
    texts = [str(c) for column in table.columns for c in column.cells] + [str(table.caption or "")]
    return [m for text in texts for m in INTERVAL.findall(text.replace("\u00a0", " "))]


def _lines(table: Table, width: int) -> list[str]:
    """The table as the CLI prints it (`print_table`) on a terminal `width` columns wide."""
    console = TerminalConsole(file=io.StringIO(), width=width, record=True, emoji=False)
    print_table(console, table)
    return console.export_text().splitlines()


def _broken(lines: list[str]) -> list[str]:
    """The pieces of lines (a table's cells) that end inside an interval or start with its rest."""
    out = []
    for line in lines:
        for piece in re.split(f"[{BORDERS}]", line):
            piece = piece.strip()
            if OPEN_AT_END.search(piece) or CLOSE_AT_START.search(piece) or UNIT_ALONE.search(piece):
                out.append(piece)
    return out


def _tables() -> list[Table]:
    return [*_anova_tables(), rich_table(unit_view()), rich_table(findings_view())]


WIDTHS = range(42, 121, 2)  # from 42: the notes' second column holds their widest interval and unit (23)


def _old_join_units(text: str) -> str:
    """join_units as it was: a number tied to its unit, an interval not tied."""
    return rich_view._UNIT_AFTER_NUMBER.sub(lambda m: NBSP + m.group(1).replace(" ", NBSP), text)


def test_without_the_tie_an_interval_was_broken(monkeypatch: pytest.MonkeyPatch) -> None:
    """The baseline: with numbers tied to their units only, the same tables printed the same way end
    lines inside intervals at some widths (the notes' cell wrapped by rich, a record's value by the
    one-record-per-block layout)."""
    monkeypatch.setattr(rich_view, "join_units", _old_join_units)
    monkeypatch.setattr(output, "join_units", _old_join_units)
    broken = [piece for width in WIDTHS for t in _tables() for piece in _broken(_lines(t, width))]
    assert broken


@pytest.mark.parametrize("width", WIDTHS)
def test_the_cli_keeps_each_interval_on_one_line(width: int) -> None:
    for index, table in enumerate(_tables()):
        expected = _intervals(table)
        assert expected or index == 0  # the ANOVA table has none; the others do
        lines = _lines(_tables()[index], width)
        assert _broken(lines) == [], (index, width)
        for interval in expected:  # each whole on one line, as many times as the table holds it
            assert sum(line.count(interval) for line in lines) == expected.count(interval), (width, interval)
        assert NBSP not in "".join(lines)  # printed with plain spaces: what a reader copies or greps


def test_the_notes_are_wrapped_by_rich_and_the_others_laid_out_per_record() -> None:
    """Both ways the CLI fits a table to a narrow terminal are tried above."""
    notes, effects = _lines(_tables()[4], 60), _lines(_tables()[1], 60)
    assert notes[0].startswith("┌") and len(notes) > 4  # a table, its second column wrapped
    assert effects[1].startswith("── level: a")  # one block per record


def test_join_units_ties_an_interval_and_its_unit() -> None:
    nb = "\u00a0"
    assert join_units("mean 9.5 (−0.51 to 0.58) pp, then (1.0 to 3.0) %") == (
        f"mean 9.5 (−0.51{nb}to{nb}0.58){nb}pp, then (1.0{nb}to{nb}3.0){nb}%"
    )
    assert join_units("(95.10 to 95.42) Mbit/s") == f"(95.10{nb}to{nb}95.42){nb}Mbit/s"
    words = "from vma to vmb (see a to b)"  # not an interval
    assert join_units(words) == words
