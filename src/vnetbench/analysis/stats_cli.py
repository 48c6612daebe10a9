"""`vnetbench stats FILE.csv --response COL --factor COL …`: the textbook analysis of any CSV table.

Registered in cli.py as `app.command("stats")(stats_command)`. User errors print one line on
stderr naming the column or option and the fix, and exit with code 2.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.console import Console

if TYPE_CHECKING:
    import pandas as pd

# The statistics stack (pandas, scipy, statsmodels) is imported when the command runs, not when
# cli.py registers it, so other commands start fast.

DESIGNS = ("one-factor", "factorial", "2k-r")


def stats_command(
    file: Annotated[
        Path,
        typer.Argument(metavar="FILE.csv", help="a CSV table, one observation per row", show_default=False),
    ],
    response: Annotated[
        str, typer.Option("--response", help="numeric column to analyse (e.g. loss, throughput_bps)")
    ],
    factor: Annotated[list[str], typer.Option("--factor", help="factor column; repeat for several factors")],
    design: Annotated[str, typer.Option("--design", help="one-factor | factorial | 2k-r")] = "one-factor",
    confidence: Annotated[
        float, typer.Option("--confidence", help="confidence level of intervals and tests")
    ] = 0.95,
    json_output: Annotated[
        bool, typer.Option("--json", help="print one JSON object instead of tables")
    ] = False,
) -> None:
    """ANOVA, effects and confidence intervals of a designed experiment (Jain's textbook form)."""
    from vnetbench.analysis.inputs import DataError
    from vnetbench.analysis.jsonable import jsonable

    try:
        result = analyse(read_csv(file), response, factor, design, confidence)
    except DataError as exc:
        raise fail(f"{file}: {exc}") from None
    if json_output:
        sys.stdout.write(json.dumps(jsonable(result["json"]), allow_nan=False) + "\n")
        return
    out = Console()
    for table in result["tables"]:
        out.print(table)


def fail(message: str) -> typer.Exit:
    Console(stderr=True).print(f"[red]error:[/red] {message}", highlight=False, soft_wrap=True)
    return typer.Exit(2)


def read_csv(file: Path) -> pd.DataFrame:
    import pandas as pd

    if not file.exists():
        raise fail(f"FILE.csv: {file} does not exist; give the path of a CSV file")
    if not file.is_file():
        raise fail(f"FILE.csv: {file} is not a file; give the path of a CSV file")
    try:
        frame = pd.read_csv(file)
    except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError) as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise fail(
            f"{file}: not a readable CSV table ({first}); save it as comma-separated text with a header row"
        ) from None
    if frame.empty:
        raise fail(f"{file}: has a header but no rows; add the observations, one per row")
    return frame


def analyse(
    frame: pd.DataFrame, response: str, factors: list[str], design: str, confidence: float
) -> dict[str, Any]:
    """The JSON object and the rich tables of one design."""
    from vnetbench.analysis.contrasts import factor_successive_differences, successive_differences
    from vnetbench.analysis.diagnostics import diagnostics
    from vnetbench.analysis.full_factorial import full_factorial_anova
    from vnetbench.analysis.inputs import DataError
    from vnetbench.analysis.one_factor import one_factor_anova
    from vnetbench.analysis.render import factorial_tables, one_factor_tables
    from vnetbench.analysis.two_k_r import two_k_r

    if design not in DESIGNS:
        raise DataError("--design", f"'{design}' is not a design", f"use one of {', '.join(DESIGNS)}")
    for flag, col in [("--response", response), *(("--factor", f) for f in factors)]:
        if col not in frame.columns:
            have = ", ".join(map(str, frame.columns))
            raise DataError(flag, f"column '{col}' is not in the table", f"use one of its columns: {have}")
    base = {"design": design, "response": response, "factors": factors, "confidence": confidence}
    if design == "one-factor":
        if len(factors) != 1:
            raise DataError(
                "--factor",
                f"one-factor design takes exactly one factor, got {len(factors)}",
                "give one --factor, or use --design factorial / 2k-r for several",
            )
        a = one_factor_anova(frame, response, factors[0], confidence)
        steps = successive_differences(a)
        return {
            "json": base
            | {
                "anova": a.to_dict(),
                "successive_differences": [c.to_dict() for c in steps],
                "diagnostics": diagnostics(a).to_dict(),
            },
            "tables": one_factor_tables(a, steps),
        }
    if design == "2k-r":
        r = two_k_r(frame, response, factors, confidence)
        return {
            "json": base | {"result": r.to_dict(), "diagnostics": diagnostics(r).to_dict()},
            "tables": r.rich_tables(),
        }
    f = full_factorial_anova(frame, response, factors, confidence)
    steps = {factor: factor_successive_differences(f, factor) for factor in factors}
    return {
        "json": base
        | {
            "result": f.to_dict(),
            "successive_differences": {k: [c.to_dict() for c in v] for k, v in steps.items()},
            "diagnostics": diagnostics(f).to_dict(),
        },
        "tables": factorial_tables(f, [c for v in steps.values() for c in v]),
    }
