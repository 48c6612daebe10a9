"""Export a campaign's tables to CSV or Parquet (one file per table), in bounded memory.

Every table but `measurements` is read in chunks of `samples.CHUNK_ROWS` rows and written chunk by
chunk (Arrow record batches: a Parquet row group or a stretch of CSV each), so a campaign with ten
million samples never has them all in memory. `measurements` is one row per flow with its summary
metrics as columns (`Store.measurements_frame`), small at any size. JSON columns (factors, command,
details) are written as JSON text.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.csv as pacsv
import pyarrow.parquet as pq

from vnetbench.store.db import Store
from vnetbench.store.samples import campaign_table_query, table_chunks, table_schema

TABLES = ("samples", "events", "builds", "objects", "raw_outputs", "telemetry_runs", "telemetry", "captures")


def export_campaign(store: Store, campaign_id: str, out_dir: Path, fmt: str = "csv") -> list[Path]:
    """Write every table of a campaign as CSV or Parquet into out_dir; returns the files."""
    out_dir.mkdir(parents=True, exist_ok=True)
    measurements = _arrow_frame(store.measurements_frame(campaign_id, latest_only=False))
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
    return paths


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
