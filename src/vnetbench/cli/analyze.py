"""`vnetbench analyze CAMPAIGN [--db] [--json]`: the designed-experiment analysis of a stored campaign.

The statistics stack (pandas, scipy, statsmodels) is imported when the command runs, so registering
it costs nothing at start-up.
"""

from __future__ import annotations

from typing import Annotated, Any

import typer

from vnetbench.cli.common import (
    CAMPAIGN_HELP,
    confidence_level,
    fail,
    find_campaign,
    open_store,
    out,
    stored_spec_error,
    unfinished_note,
)
from vnetbench.cli.output import print_json, print_tables
from vnetbench.spec.errors import SpecInvalid
from vnetbench.spec.loader import spec_of


def analyze_command(
    campaign: Annotated[str | None, typer.Argument(help=CAMPAIGN_HELP)] = None,
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
            "(default: reproducibility_tolerance in the spec's analysis, 0.05)"
        ),
    ] = None,
    reproducibility_cv_max: Annotated[
        float | None,
        typer.Option(
            help="largest CV of the rebuild means still reproducible, e.g. 0.02 "
            "(default: reproducibility_cv_max in the spec's analysis, 0.05)"
        ),
    ] = None,
    target_precision: Annotated[
        str | None,
        typer.Option(help="also plan: repetitions per treatment for a ± this interval of its mean, e.g. 1%"),
    ] = None,
) -> None:
    """ANOVA / 2^k r / full factorial from the campaign's design, contrasts, diagnostics, fairness, UDP
    effective throughput, capacity, reproducibility across rebuilds, placement and time-of-day views."""
    # the statistics stack: imported when the command runs, for start-up time
    from vnetbench.analysis.campaign_analysis import analyze_campaign, settings_from_spec
    from vnetbench.analysis.campaign_data import load_campaign_frames
    from vnetbench.analysis.inputs import DataError
    from vnetbench.analysis.planning import parse_precision

    store = open_store(db)
    row = find_campaign(store, campaign)
    unfinished_note(store, row)
    try:
        settings = settings_from_spec(spec_of(row))
    except SpecInvalid as exc:
        raise stored_spec_error(row, exc) from None
    if confidence is not None:
        settings.confidence = confidence_level(confidence)
    if outliers is not None:
        if outliers not in ("none", "iqr", "mad"):
            raise fail(f"--outliers {outliers!r}: use none, iqr or mad")
        settings.outliers = outliers
    for flag, value, field in (
        ("--reproducibility-tolerance", reproducibility_tolerance, "reproducibility_tolerance"),
        ("--reproducibility-cv-max", reproducibility_cv_max, "reproducibility_cv_max"),
    ):
        if value is not None:
            if not 0 < value < 1:
                raise fail(f"{flag} {value}: give a share between 0 and 1, e.g. 0.05 for ±5 %")
            setattr(settings, field, value)
    if target_precision is not None:
        try:
            settings.target_precision = parse_precision(target_precision)
        except DataError as exc:
            raise fail(str(exc)) from None
    try:
        result = analyze_campaign(load_campaign_frames(store, row["id"]), settings)
    except DataError as exc:
        raise fail(f"campaign {row['id']}: {exc}") from None
    if json_output:
        print_json(result.json)
        return
    print_parts(result)


def print_parts(result: Any) -> None:
    """The analysis' sections as rich tables, with their introductions and notes."""
    # the statistics stack, as in analyze_command
    from vnetbench.report.analysis_tables import analysis_parts

    for part in analysis_parts(result):
        out.rule(f"[bold]{part.title}")
        if part.intro:
            out.print(part.intro, style="dim", highlight=False)
        print_tables(out, part.tables)
        for item in part.items:
            out.print("• " + item.replace("<b>", "").replace("</b>", ""), highlight=False)
