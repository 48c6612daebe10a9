"""Looking at stored results: `report`, `campaigns`, `export`."""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table

from vnetbench.cli.campaign import write_report
from vnetbench.cli.common import (
    CampaignArg,
    DbOption,
    JsonListOption,
    empty_store,
    fail,
    find_campaign,
    open_store,
    out,
    unfinished_note,
)
from vnetbench.cli.output import print_json, print_table
from vnetbench.store.export import export_campaign


def report(
    campaign: CampaignArg = None,
    db: DbOption = "vnetbench.db",
    out_dir: Annotated[
        Path | None,
        typer.Option(
            "--out",
            "--report",  # as run, resume, dashboard and monitor spell it
            help="directory for index.html and figures (default: reports/NAME-ID)",
        ),
    ] = None,
) -> None:
    """Write the HTML report (tables, CDFs, per-repetition figures) of a campaign."""
    store = open_store(db)
    row = find_campaign(store, campaign)
    unfinished_note(store, row)
    path = write_report(store, row["id"], out_dir)
    out.print(f"report: {path}", highlight=False, soft_wrap=True)  # a long path was broken over two lines


def campaigns(db: DbOption = "vnetbench.db", json_output: JsonListOption = False) -> None:
    """List the campaigns in a store."""
    from vnetbench.providers.cleanup import process_gone

    store = open_store(db)
    rows = []
    for row in store.campaigns():
        frame = store.measurements_frame(row["id"])
        ok = int((frame["status"] == "ok").sum()) if not frame.empty else 0
        rows.append(
            {k: row[k] for k in ("id", "name", "status", "created_utc_ns")}
            | {"measurements_ok": ok, "process_gone": process_gone(store, row), "pid": row.get("pid")}
        )
    if json_output:
        print_json([{k: v for k, v in r.items() if k != "pid"} for r in rows])
        return
    if not rows:  # an empty table with its headers said nothing of why
        out.print(empty_store(store), highlight=False, soft_wrap=True)
        return
    table = Table("id", "name", "status", "created (UTC)", "measurements ok")
    for r in rows:
        when = dt.datetime.fromtimestamp(r["created_utc_ns"] / 1e9, dt.UTC).strftime("%Y-%m-%d %H:%M")
        status = "running, process gone" if r["process_gone"] else r["status"]
        table.add_row(r["id"], r["name"], status, when, str(r["measurements_ok"]))
    print_table(out, table)
    for r in rows:
        if r["process_gone"]:  # killed with SIGKILL or a reboot: nothing was left to record the end
            out.print(
                f"{r['id']}: stored as running, but its process (pid {r['pid']}) is gone; "
                f"`vnetbench resume {r['id']} --db {store.location}` continues it",
                highlight=False,
                soft_wrap=True,
            )


def export(
    campaign: CampaignArg = None,
    db: DbOption = "vnetbench.db",
    fmt: Annotated[str, typer.Option("--format", help="csv or parquet")] = "csv",
    out_dir: Annotated[Path, typer.Option("--out", help="directory to write the tables into")] = Path(
        "export"
    ),
) -> None:
    """Export a campaign's tables to CSV or Parquet, one file per table.

    The tables: measurements (every attempt, its summaries as columns), samples, events, builds, objects,
    raw_outputs, telemetry_runs, telemetry, captures and campaign (the campaign's row, its spec included).
    Units are in the column names: `_ns` nanoseconds (`t_ns` since the flow's start, in telemetry since
    its baseline reading; `*_utc_ns` UTC), `_s` seconds, `_bps` bits per second, `_bytes` bytes
    (`path_mtu` too), `_ratio` 0–1; a sample's `value` is in the unit its `metric` names (`rtt_ns`).

    Files are named by the campaign's full id (ID-measurements.csv, …). Beside them ID-README.md says
    which values are which: `throughput_bps`, `loss_ratio` and `rtt_mean_ns` of the measurements are
    whole-run values, `analysis_*` the report's (after the spec's `analysis.omit`); iperf3 samples
    come as the sum (`stream` empty) and per stream, so filter `stream` empty before summing."""
    from vnetbench.analysis.export_values import analysis_values  # pandas-heavy: only when exporting

    if fmt not in {"csv", "parquet"}:
        raise fail(f"--format {fmt!r}: use csv or parquet")
    if out_dir.exists() and not out_dir.is_dir():  # said "cannot write there: File exists"
        raise fail(f"--out {out_dir}: is a file, not a directory; give a directory to write the tables into")
    store = open_store(db)
    row = find_campaign(store, campaign)
    unfinished_note(store, row)
    values = analysis_values(store, row)  # a spec this version refuses: exported without them, said why
    try:
        for path in export_campaign(store, row["id"], out_dir, fmt, values):
            out.print(f"wrote {path}", highlight=False, soft_wrap=True)
    except OSError as exc:  # a directory that cannot be made or written: a usage error, not a traceback
        raise fail(
            f"--out {out_dir}: cannot write there: {exc.strerror or exc}; give a writable directory"
        ) from None
