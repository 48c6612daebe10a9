"""Reading samples of large campaigns in bounded memory: aggregates in SQL, values in lean chunks.

A campaign may hold tens of millions of samples. `samples_frame` gives them all as one DataFrame
(~300 bytes a row with the metric's Python string), which is fine for thousands and not for millions.
These queries give what the analysis and the report need of them instead:

- `sample_stats`: per measurement and metric, count, sum and mean of the values at t ≥ omit, and the
  count of samples before it (transient removal), computed by the database (GROUP BY);
- `sample_values`: one metric's values of chosen measurements, fetched in chunks of `CHUNK_ROWS` rows
  into numpy columns (24 bytes a row);
- `table_chunks`: any table of a campaign as Arrow record batches of `CHUNK_ROWS` rows (export).

Only the sum rows of multi-stream tools (stream IS NULL) enter `sample_stats` and `sample_values`:
the per-stream rows repeat them in parts.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd
import pyarrow as pa
from sqlalchemy import JSON, BigInteger, Boolean, Float, Integer, case, func, select
from sqlalchemy.sql import Select

from vnetbench.store import schema as t

if TYPE_CHECKING:
    from vnetbench.store.db import Store

CHUNK_ROWS = 200_000  # rows per fetch: ~5 MB of lean columns, a few tens of MB of Python tuples
STATS_COLUMNS = ["measurement_id", "metric", "count", "sum", "mean", "before_omit"]
VALUE_COLUMNS = ["measurement_id", "t_ns", "metric", "value", "stream"]


IDS_PER_QUERY = 500  # measurement ids per `IN (…)` list: far below SQLite's limit on parameters


def _campaign_samples(campaign_id: str, measurement_ids: Sequence[int] | None) -> Any:
    """The WHERE clause of a campaign's sum-row samples (optionally of some measurements only)."""
    s = t.samples.c
    if measurement_ids is not None:
        return s.measurement_id.in_([int(i) for i in measurement_ids]) & s.stream.is_(None)
    ids = select(t.measurements.c.id).where(t.measurements.c.campaign_id == campaign_id)
    return s.measurement_id.in_(ids) & s.stream.is_(None)


def _id_groups(measurement_ids: Sequence[int] | None) -> list[list[int] | None]:
    """None (the whole campaign), or the ids in groups of IDS_PER_QUERY, sorted."""
    if measurement_ids is None:
        return [None]
    ids = sorted({int(i) for i in measurement_ids})
    return [ids[i : i + IDS_PER_QUERY] for i in range(0, len(ids), IDS_PER_QUERY)]


def sample_stats(
    store: Store,
    campaign_id: str,
    metrics: Sequence[str],
    omit_ns: int = 0,
    measurement_ids: Sequence[int] | None = None,
) -> pd.DataFrame:
    """Per (measurement_id, metric): `count` of non-null values, their `sum` and `mean` at t ≥ omit_ns,
    and `before_omit`, the samples before it (rows, null values too), as `drop_transient` counts."""
    s = t.samples.c
    early = case((s.t_ns < int(omit_ns), 1), else_=0)
    kept_value = case((s.t_ns >= int(omit_ns), s.value))
    query = (
        select(
            s.measurement_id,
            s.metric,
            func.count(kept_value),
            func.sum(kept_value),
            func.avg(kept_value),
            func.sum(early),
        )
        .where(_campaign_samples(campaign_id, None), s.metric.in_(list(metrics)))
        .group_by(s.measurement_id, s.metric)
    )
    with store.engine.connect() as conn:
        rows = conn.execute(query).all()
    frame = pd.DataFrame(rows, columns=STATS_COLUMNS)
    if measurement_ids is not None:  # a small frame: filtered here, not in an IN list of any length
        frame = frame[frame["measurement_id"].isin([int(i) for i in measurement_ids])]
        frame = frame.reset_index(drop=True)
    for col in ("count", "before_omit"):
        frame[col] = frame[col].fillna(0).astype("int64")
    for col in ("sum", "mean"):
        frame[col] = frame[col].astype("float64")
    return frame


def sample_values(
    store: Store,
    campaign_id: str,
    metric: str,
    measurement_ids: Sequence[int] | None = None,
    since_ns: int = 0,
) -> pd.DataFrame:
    """One metric's sum-row samples at t ≥ since_ns: measurement_id, t_ns, metric, value, stream (all
    NaN), in the store's order per measurement. Fetched in chunks into numpy columns."""
    s = t.samples.c
    ids, times, values = [], [], []
    with store.engine.connect() as conn:
        for group in _id_groups(measurement_ids):
            query = (
                select(s.measurement_id, s.t_ns, s.value)
                .where(_campaign_samples(campaign_id, group), s.metric == metric, s.t_ns >= int(since_ns))
                .order_by(s.measurement_id, s.t_ns)
            )
            result = conn.execution_options(yield_per=CHUNK_ROWS).execute(query)
            for chunk in result.partitions():
                mid, t_ns, value = zip(*chunk, strict=True)
                ids.append(np.fromiter(mid, dtype=np.int64, count=len(chunk)))
                times.append(np.fromiter(t_ns, dtype=np.int64, count=len(chunk)))
                values.append(np.array(value, dtype=np.float64))  # None -> nan
    n = sum(len(a) for a in ids)
    return pd.DataFrame(
        {
            "measurement_id": np.concatenate(ids) if ids else np.empty(0, np.int64),
            "t_ns": np.concatenate(times) if times else np.empty(0, np.int64),
            "metric": pd.Categorical([metric] * n) if n else pd.Categorical([]),
            "value": np.concatenate(values) if values else np.empty(0, np.float64),
            "stream": np.full(n, np.nan),
        }
    )


def arrow_type(column: Any) -> pa.DataType:
    """The Arrow type a table column is exported as (JSON as its text)."""
    kind = column.type
    if isinstance(kind, Boolean):
        return pa.bool_()
    if isinstance(kind, BigInteger | Integer):
        return pa.int64()
    if isinstance(kind, Float):
        return pa.float64()
    return pa.string()


def table_schema(columns: Sequence[Any]) -> pa.Schema:
    """The Arrow schema of a table's columns as export writes them."""
    return pa.schema([pa.field(c.name, arrow_type(c)) for c in columns])


def table_chunks(store: Store, query: Select, columns: Sequence[Any]) -> Iterator[pa.RecordBatch]:
    """The rows of `query` (selecting `columns`) as Arrow record batches of up to CHUNK_ROWS rows."""
    schema = table_schema(columns)
    json_columns = [i for i, c in enumerate(columns) if isinstance(c.type, JSON)]
    with store.engine.connect() as conn:
        result = conn.execution_options(yield_per=CHUNK_ROWS).execute(query)
        for chunk in result.partitions():
            cols = list(zip(*chunk, strict=True))
            for i in json_columns:
                cols[i] = [None if v is None else pa_json(v) for v in cols[i]]
            arrays = [pa.array(c, type=f.type) for c, f in zip(cols, schema, strict=True)]
            yield pa.record_batch(arrays, schema=schema)


def pa_json(value: Any) -> str:
    """A JSON column's value as export writes it (json.dumps, as the whole-frame export did)."""
    return json.dumps(value)


def campaign_table_query(name: str, campaign_id: str) -> tuple[Select, list[Any]]:
    """A table's rows that belong to a campaign (as `Store.table_frame` selects them), and its columns."""
    table = t.metadata.tables[name]
    columns = list(table.c)
    if "campaign_id" in table.c:
        return select(*columns).where(table.c.campaign_id == campaign_id), columns
    if "measurement_id" in table.c:
        ids = select(t.measurements.c.id).where(t.measurements.c.campaign_id == campaign_id)
        return select(*columns).where(table.c.measurement_id.in_(ids)), columns
    return select(*columns).where(table.c.id == campaign_id), columns
