"""`vnetbench analyze CAMPAIGN [--db] [--json]`: the designed-experiment analysis of a stored campaign.

Registered in cli.py as `app.command("analyze")(analyze_command)`. The statistics stack is imported
when the command runs, so registering it costs nothing.
"""

from __future__ import annotations

import json
import sys
from typing import TYPE_CHECKING, Annotated

import typer
from rich.console import Console
from rich.table import Table

if TYPE_CHECKING:
    from vnetbench.analysis.campaign_analysis import Tabular


def analyze_command(
    campaign: Annotated[
        str | None, typer.Argument(help="campaign id, id prefix or name (default: the newest in the store)")
    ] = None,
    db: Annotated[
        str, typer.Option("--db", envvar="VNETBENCH_DB", help="store: a SQLite file path or a SQLAlchemy URL")
    ] = "vnetbench.db",
    json_output: Annotated[
        bool, typer.Option("--json", help="print one JSON object instead of tables")
    ] = False,
    confidence: Annotated[
        float | None, typer.Option(help="confidence of intervals and tests (default: the spec's analysis)")
    ] = None,
    outliers: Annotated[
        str | None,
        typer.Option(help="outlier policy none | iqr | mad (default: the spec's analysis.outliers)"),
    ] = None,
    reproducibility_tolerance: Annotated[
        float | None,
        typer.Option(
            help="rebuilds agree within ± this share of the first build's mean, e.g. 0.02 "
            "(default: the spec's analysis.reproducibility_tolerance, 0.05)"
        ),
    ] = None,
    reproducibility_cv_max: Annotated[
        float | None,
        typer.Option(
            help="largest CV of the rebuild means still reproducible, e.g. 0.02 "
            "(default: the spec's analysis.reproducibility_cv_max, 0.05)"
        ),
    ] = None,
) -> None:
    """ANOVA / 2^k r / full factorial from the campaign's design, contrasts, diagnostics, fairness, UDP
    effective throughput, capacity, reproducibility across rebuilds, placement and time-of-day views."""
    from vnetbench.analysis.campaign_analysis import analyze_campaign, settings_from_spec, spec_of
    from vnetbench.analysis.campaign_data import load_campaign_frames
    from vnetbench.analysis.inputs import DataError
    from vnetbench.cli import _campaign, _store

    store = _store(db)
    row = _campaign(store, campaign)
    settings = settings_from_spec(spec_of(row))
    if confidence is not None:
        if not 0.5 < confidence < 1:
            raise _fail(f"--confidence {confidence}: give a level between 0.5 and 1, e.g. 0.95")
        settings.confidence = confidence
    if outliers is not None:
        if outliers not in ("none", "iqr", "mad"):
            raise _fail(f"--outliers {outliers!r}: use none, iqr or mad")
        settings.outliers = outliers
    for flag, value, field in (
        ("--reproducibility-tolerance", reproducibility_tolerance, "reproducibility_tolerance"),
        ("--reproducibility-cv-max", reproducibility_cv_max, "reproducibility_cv_max"),
    ):
        if value is not None:
            if not 0 < value < 1:
                raise _fail(f"{flag} {value}: give a share between 0 and 1, e.g. 0.05 for ±5 %")
            setattr(settings, field, value)
    try:
        result = analyze_campaign(load_campaign_frames(store, row["id"]), settings)
    except DataError as exc:
        raise _fail(f"campaign {row['id']}: {exc}") from None
    if json_output:
        sys.stdout.write(json.dumps(result.json, allow_nan=False) + "\n")
        return
    out = Console()
    for part in result.parts:
        out.rule(f"[bold]{part.title}")
        if part.intro:
            out.print(part.intro, style="dim", highlight=False)
        for table in part.tables:
            out.print(_rich(table))
        for item in part.items:
            out.print("• " + item.replace("<b>", "").replace("</b>", ""), highlight=False)


def _rich(t: Tabular) -> Table:
    table = Table(title=t.title or None, caption=t.note or None, show_header=any(t.columns))
    for i, col in enumerate(t.columns):
        table.add_column(col, justify="left" if i == 0 else "right")
    for row in t.rows:
        table.add_row(*row)
    return table


def _fail(message: str) -> typer.Exit:
    Console(stderr=True).print(f"[red]error:[/red] {message}", highlight=False, soft_wrap=True)
    return typer.Exit(2)
