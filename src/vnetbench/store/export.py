"""Export a campaign's tables to CSV or Parquet (one file per table), in bounded memory.

Every table but `measurements` is read in chunks of `samples.CHUNK_ROWS` rows and written chunk by
chunk (Arrow record batches: a Parquet row group or a stretch of CSV each), so a campaign with ten
million samples never has them all in memory. `measurements` is one row per flow with its summary
metrics as columns (`Store.measurements_frame`), small at any size. JSON columns (factors, command,
details) are written as JSON text.

The tables are the store's, row for row. What they do not say by themselves goes into `ID-README.md` (ID
the campaign's full id, as in `ID-measurements.csv`) beside them (`readme`): that `throughput_bps`,
`loss_ratio` and `rtt_mean_ns` are whole-run values while the report, `analyze` and `compare` first drop
each flow's first `analysis.omit` (the `analysis_*` columns, given by the caller: computing them is the
analysis's job, a layer above the store), and that iperf3's samples are stored once as the sum (`stream`
empty) and once per stream, so a single-stream flow has every interval twice.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.csv as pacsv
import pyarrow.parquet as pq

from vnetbench.store.db import Store
from vnetbench.store.samples import campaign_table_query, table_chunks, table_schema

TABLES = ("samples", "events", "builds", "objects", "raw_outputs", "telemetry_runs", "telemetry", "captures")


# Whole-run summary column -> the column with the value the analysis uses (after `analysis.omit`).
ANALYSIS_COLUMNS = {
    "throughput_bps": "analysis_throughput_bps",
    "loss_ratio": "analysis_loss_ratio",
    "rtt_mean_ns": "analysis_rtt_mean_ns",
    "effective_throughput_bps": "analysis_effective_throughput_bps",
}

WHOLE_RUN = ("throughput_bps", "loss_ratio", "rtt_mean_ns")  # the summary columns the analysis replaces


@dataclass(frozen=True)
class AnalysisValues:
    """What the report, `analyze` and `compare` use per measurement: `frame` has `id` and the
    `ANALYSIS_COLUMNS` values (after dropping each flow's first `omit_ns`); `unavailable` says why
    there are none (then `frame` is empty)."""

    omit_ns: int
    frame: pd.DataFrame
    unavailable: str = ""


def export_campaign(
    store: Store, campaign_id: str, out_dir: Path, fmt: str = "csv", analysis: AnalysisValues | None = None
) -> list[Path]:
    """Write every table of a campaign as CSV or Parquet into out_dir, and the README that says what
    their values are; returns the files. `analysis`: the analysis's values, added to `measurements`
    as `analysis_*` columns."""
    out_dir.mkdir(parents=True, exist_ok=True)
    frame = store.measurements_frame(campaign_id, latest_only=False)
    if analysis is not None and not analysis.frame.empty:
        frame = frame.merge(analysis.frame, on="id", how="left")
    measurements = _arrow_frame(frame)
    parts: list[tuple[str, pa.Schema, Iterable[pa.RecordBatch]]] = [
        ("measurements", measurements.schema, measurements.to_batches())
    ]
    for name, table in [*((n, n) for n in TABLES), ("campaign", "campaigns")]:
        query, columns = campaign_table_query(table, campaign_id)
        chunks = table_chunks(store.engine, query, columns)
        parts.append((name, table_schema(columns), chunks))
    paths = []
    for name, schema, batches in parts:
        path = out_dir / f"{campaign_id}-{name}.{fmt}"
        _write(path, fmt, schema, batches)
        paths.append(path)
    readme_path = out_dir / f"{campaign_id}-README.md"
    readme_path.write_text(readme(campaign_id, fmt, analysis))
    return [readme_path, *paths]


def readme(campaign_id: str, fmt: str, analysis: AnalysisValues | None) -> str:
    """What the exported values are, and how to get the report's from them."""
    m, s = f"{campaign_id}-measurements.{fmt}", f"{campaign_id}-samples.{fmt}"
    whole = ", ".join(f"`{c}`" for c in WHOLE_RUN)
    lines = [
        f"# Export of campaign {campaign_id}",
        "",
        "The files are the store's tables, row for row (every attempt of every measurement, failed ones",
        "included: filter `status == ok` and the highest `attempt` per `key` for what the report used).",
        "",
        "## Which values the report uses",
        "",
        f"In `{m}`, {whole} (those of them the campaign's kinds have) are",
        "**whole-run values**: over the entire run, the spec's `analysis.omit` not applied. TCP's",
        "`throughput_bps` is the receiver's bytes over its full-length intervals (docs/drivers.md), not",
        "iperf3's own summary, which is `iperf3_throughput_bps`.",
        "A summary named like one of the measurement's own columns has `tool_` in front: iperf3's",
        "`offered_bps` (docs/drivers.md) is `tool_offered_bps`, while `offered_bps` is the rate the",
        "plan offered.",
    ]
    if analysis is None:
        lines += [
            "The report, `vnetbench analyze` and `vnetbench compare` use the values after the spec's",
            "`analysis.omit` transient removal (see below); this export was written without them.",
        ]
    elif analysis.unavailable:
        lines += [
            "The report, `vnetbench analyze` and `vnetbench compare` use the values after the spec's",
            f"`analysis.omit` transient removal; they are not in this export: {analysis.unavailable}.",
        ]
    elif analysis.omit_ns == 0:
        lines += [
            "The spec's `analysis.omit` is 0: nothing is dropped, so the whole-run values are the ones the",
            "report, `vnetbench analyze` and `vnetbench compare` use (for the measurements they use: status",
            "ok, the highest attempt per key); no `analysis_*` columns are written.",
        ]
    else:
        lines += [
            f"The report, `vnetbench analyze` and `vnetbench compare` first drop each flow's first "
            f"{analysis.omit_ns / 1e9:g} s",
            "(the spec's `analysis.omit`) and recompute from the remaining samples. Those values are the",
            "`analysis_*` columns; use them to reproduce the report's numbers:",
            "",
            "| whole run | after `analysis.omit` (the report's) |",
            "| --- | --- |",
            *(f"| `{a}` | `{ANALYSIS_COLUMNS[a]}` |" for a in WHOLE_RUN),
            "| (UDP: `offered_bps` × (1 − loss)) | `analysis_effective_throughput_bps` |",
            "",
            "An `analysis_*` cell is empty where the analysis does not use the measurement (failed, or",
            "an earlier attempt of its key). A measurement with no sample of the metric at or after the",
            f"omit (a ping run shorter than {analysis.omit_ns / 1e9:g} s) keeps its whole-run value there:",
            "nothing is left to recompute it from.",
        ]
    lines += [
        "",
        "How the analysis recomputes (docs/statistics.md, 'Exported data'): from the samples with",
        "`t_ns` ≥ omit and `stream` empty — throughput is the mean of the interval `throughput_bps`",
        "samples, UDP loss is Σ`lost_packets` / (Σ`lost_packets` + Σ`packets`), RTT the mean of",
        "`rtt_ns`; UDP effective throughput is `offered_bps` × (1 − loss). The outlier policy",
        "(`analysis.outliers`) is applied after that, per series and treatment: `vnetbench analyze",
        "--json` lists what it excluded.",
        "",
        "## Samples: iperf3's sum and its streams",
        "",
        f"`{s}` has iperf3's samples **twice for a single-stream flow**: once as the",
        "sum over the flow's streams (`stream` empty) and once per stream (`stream` 0, 1, …), so with one",
        "stream (`-P 1`) every interval appears twice with the same value. **Filter `stream` empty for",
        "per-flow totals** (that is what the analysis uses); filter `stream` not empty for per-stream",
        "values. Summing all rows of a metric double-counts. Other tools (ping, vnb-probe) write one row",
        "per sample, `stream` empty.",
        "",
    ]
    return "\n".join(lines)


def _arrow_frame(frame: pd.DataFrame) -> pa.Table:
    """A DataFrame as an Arrow table, dict/list cells (JSON columns) as JSON text."""
    frame = frame.copy()
    for column in frame.columns:
        if frame[column].map(lambda v: isinstance(v, dict | list)).any():
            frame[column] = frame[column].map(lambda v: None if v is None else json.dumps(v))
    return pa.Table.from_pandas(frame, preserve_index=False)


def _write(path: Path, fmt: str, schema: pa.Schema, batches: Iterable[pa.RecordBatch]) -> None:
    """Write batches as they come: a Parquet row group or a stretch of CSV rows each."""
    if fmt == "csv":
        with pacsv.CSVWriter(str(path), schema) as writer:
            for batch in batches:
                writer.write_batch(batch)
        return
    with pq.ParquetWriter(str(path), schema) as writer:
        for batch in batches:
            writer.write_batch(batch)
