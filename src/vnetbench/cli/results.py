"""Looking at stored results: `report`, `campaigns`, `export`."""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table

from vnetbench.cli.campaign import write_report
from vnetbench.cli.common import CampaignArg, DbOption, fail, find_campaign, open_store, out
from vnetbench.store.export import export_campaign


def report(
    campaign: CampaignArg = None,
    db: DbOption = "vnetbench.db",
    out_dir: Annotated[
        Path | None, typer.Option("--out", help="directory for index.html and figures")
    ] = None,
) -> None:
    """Write the HTML report (tables, CDFs, per-repetition figures) of a campaign."""
    store = open_store(db)
    row = find_campaign(store, campaign)
    path = write_report(store, row["id"], out_dir)
    out.print(f"report: {path}", highlight=False)


def campaigns(db: DbOption = "vnetbench.db") -> None:
    """List the campaigns in a store."""
    store = open_store(db)
    table = Table("id", "name", "status", "created (UTC)", "measurements")
    for row in store.campaigns():
        frame = store.measurements_frame(row["id"])
        ok = int((frame["status"] == "ok").sum()) if not frame.empty else 0
        when = dt.datetime.fromtimestamp(row["created_utc_ns"] / 1e9, dt.UTC).strftime("%Y-%m-%d %H:%M")
        table.add_row(row["id"], row["name"], row["status"], when, str(ok))
    out.print(table)


def export(
    campaign: CampaignArg = None,
    db: DbOption = "vnetbench.db",
    fmt: Annotated[str, typer.Option("--format", help="csv or parquet")] = "csv",
    out_dir: Annotated[Path, typer.Option("--out", help="directory to write the tables into")] = Path(
        "export"
    ),
) -> None:
    """Export a campaign's tables (measurements with summaries, samples, events, builds) to CSV or Parquet."""
    if fmt not in {"csv", "parquet"}:
        raise fail(f"--format {fmt!r}: use csv or parquet")
    store = open_store(db)
    row = find_campaign(store, campaign)
    for path in export_campaign(store, row["id"], out_dir, fmt):
        out.print(f"wrote {path}", highlight=False)
