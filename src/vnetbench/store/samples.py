"""Reading samples of large campaigns in bounded memory: aggregates in SQL, values in lean chunks.

A campaign may hold tens of millions of samples. `samples_frame` gives them all as one DataFrame
(~300 bytes a row with the metric's Python string), which is fine for thousands and not for millions.
These queries give what the analysis and the report need of them instead:

- `sample_aggregates`: per measurement and metric, count, sum and mean of the values at t ≥ omit, and the
  count of samples before it (transient removal), computed by the database (GROUP BY);
- `sample_values`: one metric's values of chosen measurements as numpy columns (24 bytes a row);
- `table_chunks`: any table of a campaign as Arrow record batches of `CHUNK_ROWS` rows (export).

Both read through `arrow_batches`: the database's ADBC driver (adbc-driver-sqlite,
adbc-driver-postgresql) hands out Arrow batches built in C, ten times faster than Python rows.

Only the sum rows of multi-stream tools (stream IS NULL) enter `sample_aggregates` and `sample_values`:
the per-stream rows repeat them in parts.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
from sqlalchemy import JSON, BigInteger, Boolean, Float, Integer, Text, case, cast, func, insert, select
from sqlalchemy.engine import Connection, Engine
from sqlalchemy.sql import Select

from vnetbench.store import schema as t

log = logging.getLogger("vnetbench.store")
CHUNK_ROWS = 200_000  # rows per Arrow batch: a few MB
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


SAMPLE_ROW = ("measurement_id", "t_ns", "metric", "value", "seq", "stream")


def insert_samples(conn: Connection, rows: Sequence[tuple[Any, ...]]) -> None:
    """Insert sample rows (SAMPLE_ROW order) in the caller's transaction, by the fastest path of
    the database: PostgreSQL's COPY, else one prepared INSERT run by the driver's executemany.
    SQLAlchemy's own executemany builds a parameter dict per row, ~30 µs each: minutes for the
    millions of samples of a long trace."""
    if conn.dialect.name == "postgresql" and conn.dialect.driver == "psycopg":
        copy_sql = f"COPY samples ({', '.join(SAMPLE_ROW)}) FROM STDIN"
        with conn.connection.driver_connection.cursor() as cur, cur.copy(copy_sql) as copy:
            for row in rows:
                copy.write_row(row)
        return
    compiled = insert(t.samples).compile(dialect=conn.dialect, column_keys=list(SAMPLE_ROW))
    if compiled.positional:
        order = [SAMPLE_ROW.index(name) for name in compiled.positiontup or ()]
        in_order = order == list(range(len(SAMPLE_ROW)))
        params: list[Any] = list(rows) if in_order else [tuple(row[i] for i in order) for row in rows]
    else:
        params = [dict(zip(SAMPLE_ROW, row, strict=True)) for row in rows]
    conn.exec_driver_sql(str(compiled), params)


def sample_aggregates(
    engine: Engine, campaign_id: str, metrics: Sequence[str], omit_ns: int = 0
) -> pd.DataFrame:
    """Per (measurement_id, metric) of a campaign: `count` of non-null values, their `sum` and
    `mean` at t ≥ omit_ns, and `before_omit`, the samples before it (rows, null values too), as
    `drop_transient` counts."""
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
    with engine.connect() as conn:
        rows = conn.execute(query).all()
    frame = pd.DataFrame(rows, columns=STATS_COLUMNS)
    for col in ("count", "before_omit"):
        frame[col] = frame[col].fillna(0).astype("int64")
    for col in ("sum", "mean"):
        frame[col] = frame[col].astype("float64")
    return frame


class AggregatesCache:
    """sample_aggregates of whole campaigns, reused while a campaign's measurements stay the same ones
    (samples are written with their measurement, in one transaction, and never changed afterwards).
    A report asks twice (its sections and the designed-experiment analysis): one GROUP BY over ten
    million rows instead of two."""

    ENTRIES = 8

    def __init__(self) -> None:
        self._entries: dict[tuple[str, tuple[str, ...], int], tuple[Any, pd.DataFrame]] = {}

    def aggregates(
        self,
        engine: Engine,
        campaign_id: str,
        metrics: Sequence[str],
        omit_ns: int = 0,
        measurement_ids: Sequence[int] | None = None,
    ) -> pd.DataFrame:
        key = (campaign_id, tuple(sorted(metrics)), int(omit_ns))
        m = t.measurements.c
        with engine.connect() as conn:
            generation = tuple(
                conn.execute(select(func.count(), func.max(m.id)).where(m.campaign_id == campaign_id)).one()
            )
        cached = self._entries.get(key)
        if cached is None or cached[0] != generation:
            if len(self._entries) >= self.ENTRIES:
                self._entries.pop(next(iter(self._entries)))
            cached = (generation, sample_aggregates(engine, campaign_id, key[1], omit_ns))
            self._entries[key] = cached
        frame = cached[1]
        if measurement_ids is not None:  # a small frame: filtered here, not in an IN list of any length
            frame = frame[frame["measurement_id"].isin([int(i) for i in measurement_ids])]
        return frame.reset_index(drop=True)


def sample_values(
    engine: Engine,
    campaign_id: str,
    metric: str,
    measurement_ids: Sequence[int] | None = None,
    since_ns: int = 0,
) -> pd.DataFrame:
    """One metric's sum-row samples at t ≥ since_ns: measurement_id, t_ns, metric, value, stream (all
    NaN), ordered by measurement and time. Read in Arrow batches into numpy columns."""
    s = t.samples.c
    schema = pa.schema([("measurement_id", pa.int64()), ("t_ns", pa.int64()), ("value", pa.float64())])
    batches = []
    for group in _id_groups(measurement_ids):
        query = (
            select(s.measurement_id, s.t_ns, s.value)
            .where(_campaign_samples(campaign_id, group), s.metric == metric, s.t_ns >= int(since_ns))
            .order_by(s.measurement_id, s.t_ns)
        )
        batches += list(arrow_batches(engine, query, schema))
    table = pa.Table.from_batches(batches, schema=schema)
    n = table.num_rows
    return pd.DataFrame(
        {
            "measurement_id": table["measurement_id"].to_numpy(),
            "t_ns": table["t_ns"].to_numpy(),
            "metric": pd.Categorical([metric] * n) if n else pd.Categorical([]),
            "value": table["value"].to_numpy(zero_copy_only=False),  # nulls -> NaN
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


def arrow_batches(
    engine: Engine, query: Select, schema: pa.Schema, adbc: bool = True
) -> Iterator[pa.RecordBatch]:
    """The rows of `query` as Arrow record batches of `schema` (its columns in order, cast to its
    types), about CHUNK_ROWS rows each. Read by the database's ADBC driver where there is one (it
    builds the batches in C, ~1 µs a row against ~10 µs through Python rows), else (or with
    adbc=False) through SQLAlchemy in chunks."""
    sql = str(query.compile(dialect=engine.dialect, compile_kwargs={"literal_binds": True}))
    connection = _adbc_connect(engine) if adbc else None
    if connection is None:
        yield from _sqlalchemy_batches(engine, query, schema)
        return
    with connection, connection.cursor() as cur:
        if engine.dialect.name == "sqlite":
            cur.adbc_statement.set_options(**{"adbc.sqlite.query.batch_rows": str(CHUNK_ROWS)})
        cur.execute(sql)
        for batch in cur.fetch_record_batch():
            arrays = [batch.column(i).cast(f.type) for i, f in enumerate(schema)]
            yield pa.record_batch(arrays, schema=schema)


def _adbc_connect(engine: Engine) -> Any | None:
    """An ADBC connection to the store's database (SQLite file or PostgreSQL), or None when there
    is no driver for it or it cannot connect (then SQLAlchemy reads, slower)."""
    url = engine.url
    try:
        # Imported here, not at the top: the drivers load pyarrow.dataset (~1 s), which every
        # command that opens a store would pay; only export and the report's samples need them.
        if url.get_backend_name() == "sqlite" and url.database:
            import adbc_driver_sqlite.dbapi as sqlite_adbc

            return sqlite_adbc.connect(url.database)
        if url.get_backend_name() == "postgresql":
            import adbc_driver_postgresql.dbapi as pg_adbc

            return pg_adbc.connect(url.set(drivername="postgresql").render_as_string(hide_password=False))
    except Exception as err:  # ImportError, or the driver's own error (an option libpq lacks ...)
        log.info("reading through SQLAlchemy: no ADBC connection to %s (%s)", url.get_backend_name(), err)
    return None


def _sqlalchemy_batches(engine: Engine, query: Select, schema: pa.Schema) -> Iterator[pa.RecordBatch]:
    with engine.connect() as conn:
        result = conn.execution_options(yield_per=CHUNK_ROWS).execute(query)
        for chunk in result.partitions():
            cols = zip(*chunk, strict=True)
            arrays = [pa.array(c, type=f.type, from_pandas=True) for c, f in zip(cols, schema, strict=True)]
            yield pa.record_batch(arrays, schema=schema)


def table_chunks(engine: Engine, query: Select, columns: Sequence[Any]) -> Iterator[pa.RecordBatch]:
    """The rows of `query` (selecting `columns`) as Arrow record batches of up to CHUNK_ROWS rows;
    JSON columns as the JSON text the database holds. Tables with JSON columns are small (a row
    per measurement, build or object) and go through SQLAlchemy: SQLite's ADBC driver infers an
    expression's type from its first rows, which may all be NULL."""
    json = [c for c in columns if isinstance(c.type, JSON)]
    as_text = [cast(c, Text).label(c.name) if c in json else c for c in columns]
    query = query.with_only_columns(*as_text)
    yield from arrow_batches(engine, query, table_schema(columns), adbc=not json)


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
