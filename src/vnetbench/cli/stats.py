"""`vnetbench stats FILE.csv --response COL --factor COL …`: the textbook analysis of any CSV table
(analysis/table_analysis.py; its tables: report/stats_tables.py). User errors print one line on
stderr naming the column or option and the fix, and exit with code 2.
"""

from __future__ import annotations

import csv
import io
import json
import sys
from pathlib import Path
from typing import Annotated, Any

import typer

from vnetbench.cli.common import confidence_level, fail, out
from vnetbench.cli.output import print_tables


def stats_command(
    file: Annotated[
        Path,
        typer.Argument(metavar="FILE.csv", help="a CSV table, one observation per row", show_default=False),
    ],
    response: Annotated[
        str, typer.Option("--response", help="numeric column to analyse (e.g. loss, throughput_bps)")
    ],
    factor: Annotated[list[str], typer.Option("--factor", help="factor column; repeat for several factors")],
    design: Annotated[
        str,
        typer.Option(
            "--design",
            help="one-factor | two-factor | factorial (or full-factorial, as in campaign files) "
            "| 2k-r | 2k-p",
        ),
    ] = "one-factor",
    generator: Annotated[
        list[str] | None,
        typer.Option("--generator", help="2k-p: a generated factor, e.g. D=ABC (letters in --factor order)"),
    ] = None,
    transform: Annotated[
        str, typer.Option("--transform", help="none | log | boxcox: analyse the transformed response")
    ] = "none",
    target_precision: Annotated[
        str | None,
        typer.Option("--target-precision", help="also plan: repetitions for a ± this interval, e.g. 1%"),
    ] = None,
    confidence: Annotated[
        float, typer.Option("--confidence", help="confidence level of intervals and tests")
    ] = 0.95,
    json_output: Annotated[
        bool, typer.Option("--json", help="print one JSON object instead of tables")
    ] = False,
) -> None:
    """ANOVA, effects and confidence intervals of a designed experiment (Jain's textbook form)."""
    # the statistics stack (pandas, scipy, statsmodels): imported when the command runs, for start-up time
    from vnetbench.analysis.inputs import DataError
    from vnetbench.analysis.jsonable import jsonable
    from vnetbench.analysis.table_analysis import analyse_table
    from vnetbench.report.stats_tables import table_analysis_tables

    confidence = confidence_level(confidence)
    try:
        result = analyse_table(
            read_csv(file), response, factor, design, confidence, generator or [], transform, target_precision
        )
    except DataError as exc:
        raise fail(f"{file}: {exc}") from None
    if json_output:
        sys.stdout.write(json.dumps(jsonable(result.json), allow_nan=False) + "\n")
        return
    print_tables(out, table_analysis_tables(result))


def read_csv(file: Path) -> Any:
    """The CSV file as a pandas DataFrame; a usage error naming the file and the fix otherwise.

    Every row must have as many fields as the header: pandas would otherwise make a row with one
    field more shift its columns (the first becomes the index), or pad a short row with empty
    cells, and the analysis would run on the wrong numbers."""
    import pandas as pd  # heavy: imported when the command runs, for start-up time

    if not file.exists():
        raise fail(f"FILE.csv: {file} does not exist; give the path of a CSV file")
    if not file.is_file():
        raise fail(f"FILE.csv: {file} is not a file; give the path of a CSV file")
    try:
        text = file.read_text(encoding="utf-8-sig")
    except UnicodeDecodeError as exc:
        raise fail(
            f"{file}: not a readable CSV table ({exc}); save it as UTF-8 comma-separated text"
        ) from None
    check_row_lengths(file, text)
    try:
        frame = pd.read_csv(io.StringIO(text), index_col=False)
    except (pd.errors.ParserError, pd.errors.EmptyDataError) as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise fail(
            f"{file}: not a readable CSV table ({first}); save it as comma-separated text with a header row"
        ) from None
    if frame.empty:
        raise fail(f"{file}: has a header but no rows; add the observations, one per row")
    return frame


def check_row_lengths(file: Path, text: str) -> None:
    """Every non-blank row has the header's number of fields, else a located error (file:line)."""
    reader = csv.reader(io.StringIO(text))
    try:
        header = next(reader, None)
        if header is None:
            raise fail(f"{file}: not a readable CSV table (it is empty); save it with a header row")
        for row in reader:
            if row and len(row) != len(header):
                what = "more" if len(row) > len(header) else "fewer"
                raise fail(
                    f"{file}:{reader.line_num}: {len(row)} fields, {what} than the header's {len(header)} "
                    f"({', '.join(header)}); fix that row (quote a value that holds a comma, fill in a "
                    f"missing field, remove a trailing comma)"
                )
    except csv.Error as exc:
        raise fail(f"{file}:{reader.line_num}: not a readable CSV row ({exc}); fix its quoting") from None
