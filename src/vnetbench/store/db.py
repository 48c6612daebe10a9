"""Read and write the store (SQLAlchemy Core; SQLite by default, any SQLAlchemy URL otherwise).

Every SQL statement of vnetbench is here. Each step's measurements are committed in one transaction
as soon as the step ends, with their summaries, samples, events, raw output and telemetry.
"""

from __future__ import annotations

import contextlib
import functools
import logging
import sqlite3
import time
from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any, TypeVar

import pandas as pd
from sqlalchemy import Engine, create_engine, event, func, insert, inspect, select, update
from sqlalchemy.engine import Connection
from sqlalchemy.exc import IntegrityError, InterfaceError, OperationalError, ProgrammingError, SQLAlchemyError

from vnetbench.store import samples as bounded
from vnetbench.store import schema as t
from vnetbench.store.live import ensure_live_schema, sample_stats_rows
from vnetbench.store.records import TELEMETRY_GAUGES, MeasurementRecord, TelemetryRun, now_utc_ns

Totals = dict[str, dict[str, float]]  # scope -> metric -> sum of the stored deltas

DEFAULT_DB = "vnetbench.db"
# How long a write waits for the database to come back (a PostgreSQL restart, a locked SQLite file)
# before it gives up and raises: what was measured is not thrown away for a short outage.
WRITE_RETRY_S = 60.0
log = logging.getLogger(__name__)
_T = TypeVar("_T")


def retry_transient(write: Callable[..., _T]) -> Callable[..., _T]:
    """Re-run a write transaction (rolled back whole) while the database is unreachable, up to
    WRITE_RETRY_S; each attempt is one transaction, so nothing is written twice."""

    @functools.wraps(write)
    def wrapper(*args: Any, **kwargs: Any) -> _T:
        deadline = time.monotonic() + WRITE_RETRY_S
        pause = 0.25
        while True:
            try:
                return write(*args, **kwargs)
            except (OperationalError, InterfaceError) as err:
                if time.monotonic() + pause > deadline:
                    raise
                log.warning("store unreachable (%s); retrying in %.1f s", str(err).splitlines()[0], pause)
                time.sleep(pause)
                pause = min(2 * pause, 5.0)

    return wrapper


# psycopg's words for a connection still in the middle of a statement
BUSY_CONNECTION = ("transaction status ACTIVE", "another command is already in progress")


def _what_interrupted(err: BaseException, dbapi_error: type[BaseException]) -> BaseException | None:
    """The exception that interrupted a statement, when `err` is the busy connection's refusal of the
    clean-up after it (the rollback as the exception left a `with` block). Raised in err's place, a
    stop signal's Interrupted stays a stop: callers stop on it, where a database error is retried
    (retry_transient) or taken for an outage (the monitor). None: nothing interrupted it."""
    cause = err.__context__
    while isinstance(cause, dbapi_error | SQLAlchemyError):
        cause = cause.__context__
    return cause if isinstance(cause, Exception) else None


def engine_for(db: str | Path) -> Engine:
    """A path means SQLite; anything with '://' is a SQLAlchemy URL (e.g. postgresql+psycopg://...)."""
    if "://" in str(db):
        url = str(db)
        # postgresql:// means psycopg 3, the driver vnetbench installs (SQLAlchemy's default: psycopg2)
        for scheme in ("postgresql://", "postgres://"):
            if url.startswith(scheme):
                url = "postgresql+psycopg://" + url.removeprefix(scheme)
    else:
        path = Path(db).expanduser().resolve()
        path.parent.mkdir(parents=True, exist_ok=True)  # `--db out/demo.db` on a fresh clone
        url = f"sqlite:///{path}"
    # pre-ping: after a database restart, a pooled connection is tested and replaced, not used dead
    engine = create_engine(url, future=True, pool_pre_ping=not url.startswith("sqlite"))
    if engine.dialect.name == "postgresql":

        @event.listens_for(engine, "handle_error")
        def _busy_is_dead(ctx: Any) -> BaseException | None:
            # A psycopg connection left mid-statement (a signal's exception raised inside its wait,
            # e.g. a monitor's SIGTERM) refuses every later use: replace it, as a dead one is.
            if not any(text in str(ctx.original_exception) for text in BUSY_CONNECTION):
                return None
            ctx.is_disconnect = True
            return _what_interrupted(ctx.original_exception, ctx.dialect.loaded_dbapi.Error)

    if engine.dialect.name == "sqlite":

        @event.listens_for(engine, "connect")
        def _pragmas(dbapi_conn: Any, _record: Any) -> None:
            cur = dbapi_conn.cursor()
            # first: switching a new file to WAL takes a lock another process opening it may hold
            cur.execute("PRAGMA busy_timeout=10000")
            # WAL survives kill -9 of the writer and lets a report read while a campaign runs.
            _switch_to_wal(cur)
            cur.execute("PRAGMA synchronous=NORMAL")
            cur.execute("PRAGMA foreign_keys=ON")
            cur.close()

    return engine


def _tried(
    action: Callable[[], _T],
    tries: int,
    errors: type[Exception] | tuple[type[Exception], ...],
    again: Callable[[Any], bool],
    pause_s: float = 0.0,
) -> _T:
    """`action()`, tried up to `tries` times in all while it raises one of `errors` that `again`
    accepts (a race with another process that a second try wins); any other error is raised at once,
    and the last try's error as it is."""
    for _ in range(tries - 1):
        try:
            return action()
        except errors as err:
            if not again(err):
                raise
        time.sleep(pause_s)
    return action()


WAL_TRIES = 50  # 10 ms apart: the switch of a new file waits at most half a second for other openers


def _switch_to_wal(cur: Any) -> None:
    """PRAGMA journal_mode=WAL, tried again while "database is locked": the switch of a new file needs
    its exclusive lock and SQLite answers BUSY at once, without the busy timeout, when another process
    opening the same new file holds a lock (3 of 320 openers of new stores, 8 at a time, failed so)."""
    _tried(
        lambda: cur.execute("PRAGMA journal_mode=WAL"),
        WAL_TRIES,
        sqlite3.OperationalError,
        lambda err: "locked" in str(err),
        pause_s=0.01,
    )


def foreign_tables(path: Path) -> list[str]:
    """The tables of a SQLite file that holds tables but no vnetbench store (no `campaigns`); [] for a
    store, an empty database, no file, or a file SQLite cannot read (Store says why). Read before
    `Store` opens the file, which would add its tables to a database that is not a store."""
    if not path.is_file():
        return []
    try:
        with contextlib.closing(sqlite3.connect(f"file:{path}?mode=ro", uri=True)) as conn:
            names = [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
    except sqlite3.Error:
        return []
    return [] if not names or "campaigns" in names else sorted(names)


SCHEMA_TRIES = 10  # one table, index or row per try can be lost to a process creating it too


def _created_meanwhile(err: SQLAlchemyError) -> bool:
    """Whether creating the schema failed only because another process created the same object
    first (PostgreSQL: a duplicate table, type or key; SQLite: "table … already exists")."""
    if isinstance(err, IntegrityError | ProgrammingError):
        return True
    return "already exists" in str(err.orig)


class Store:
    def __init__(self, db: str | Path = DEFAULT_DB) -> None:
        self.location = str(db)
        self.engine = engine_for(db)
        self._aggregates = bounded.AggregatesCache()
        had_sample_stats = inspect(self.engine).has_table(t.sample_stats.name)
        # another process (a monitor, a dashboard, a test's poll) creates the same tables at the same
        # moment: create_all's check and CREATE are not one step; each try finds more of them made and
        # skips those
        _tried(
            lambda: self._create_schema(had_sample_stats),
            SCHEMA_TRIES,
            (IntegrityError, ProgrammingError, OperationalError),
            _created_meanwhile,
        )

    def _create_schema(self, had_sample_stats: bool) -> None:
        t.metadata.create_all(self.engine)
        ensure_live_schema(self.engine, backfill_sample_stats=not had_sample_stats)
        with self.engine.begin() as conn:
            if conn.execute(select(t.meta.c.value).where(t.meta.c.key == "schema_version")).first() is None:
                conn.execute(insert(t.meta).values(key="schema_version", value=str(t.SCHEMA_VERSION)))

    def close(self) -> None:
        self.engine.dispose()

    # ------------------------------------------------------------ campaigns

    def create_campaign(self, **values: Any) -> None:
        values.setdefault("created_utc_ns", now_utc_ns())
        with self.engine.begin() as conn:
            conn.execute(insert(t.campaigns).values(**values))

    def campaign(self, ident: str | None = None) -> dict[str, Any] | None:
        """By id, by id prefix, or by name (the newest with that name); None: the newest campaign."""
        query = select(t.campaigns).order_by(t.campaigns.c.created_utc_ns.desc())
        with self.engine.connect() as conn:
            rows = [dict(r._mapping) for r in conn.execute(query)]
        if ident is None:
            return rows[0] if rows else None
        for match in (
            lambda r: r["id"] == ident,
            lambda r: r["id"].startswith(ident),
            lambda r: r["name"] == ident,
        ):
            found = [r for r in rows if match(r)]
            if found:
                return found[0]
        return None

    def campaigns(self) -> list[dict[str, Any]]:
        with self.engine.connect() as conn:
            rows = conn.execute(select(t.campaigns).order_by(t.campaigns.c.created_utc_ns))
            return [dict(r._mapping) for r in rows]

    @retry_transient
    def update_campaign(self, campaign_id: str, **values: Any) -> None:
        with self.engine.begin() as conn:
            conn.execute(update(t.campaigns).where(t.campaigns.c.id == campaign_id).values(**values))

    # ------------------------------------------------------------ ownership of kernel objects

    def record_objects(
        self, campaign_id: str, build_id: int | None, items: Iterable[tuple[str, str, dict[str, Any]]]
    ) -> list[int]:
        """Record objects before creating them (kind, name, details); returns their row ids."""
        stamp = now_utc_ns()
        rows = [
            dict(campaign_id=campaign_id, build_id=build_id, kind=k, name=n, details=d, created_utc_ns=stamp)
            for k, n, d in items
        ]
        if not rows:
            return []
        # One multi-row INSERT … RETURNING in the rows' order: a 1,000-node build records its
        # namespaces in one statement instead of 1,000.
        query = insert(t.objects).returning(t.objects.c.id, sort_by_parameter_order=True)
        with self.engine.begin() as conn:
            return [int(r[0]) for r in conn.execute(query, rows)]

    @retry_transient
    def mark_removed(self, object_ids: Sequence[int]) -> None:
        if not object_ids:
            return
        with self.engine.begin() as conn:
            conn.execute(
                update(t.objects)
                .where(t.objects.c.id.in_(list(object_ids)))
                .values(removed_utc_ns=now_utc_ns())
            )

    def live_objects(self, campaign_id: str | None = None) -> list[dict[str, Any]]:
        query = select(t.objects).where(t.objects.c.removed_utc_ns.is_(None))
        if campaign_id:
            query = query.where(t.objects.c.campaign_id == campaign_id)
        with self.engine.connect() as conn:
            return [dict(r._mapping) for r in conn.execute(query.order_by(t.objects.c.id))]

    # ------------------------------------------------------------ builds

    def start_build(self, campaign_id: str, topology_key: str, layout: dict[str, Any]) -> int:
        with self.engine.begin() as conn:
            ordinal = conn.execute(
                select(func.count()).select_from(t.builds).where(t.builds.c.campaign_id == campaign_id)
            ).scalar_one()
            result = conn.execute(
                insert(t.builds).values(
                    campaign_id=campaign_id,
                    ordinal=ordinal + 1,
                    topology_key=topology_key,
                    started_utc_ns=now_utc_ns(),
                    layout=layout,
                )
            )
            return int(result.inserted_primary_key[0])

    @retry_transient
    def finish_build(self, build_id: int, **values: Any) -> None:
        with self.engine.begin() as conn:
            conn.execute(update(t.builds).where(t.builds.c.id == build_id).values(**values))

    # ------------------------------------------------------------ measurements

    def done_keys(self, campaign_id: str) -> set[str]:
        query = select(t.measurements.c.key).where(
            t.measurements.c.campaign_id == campaign_id, t.measurements.c.status == "ok"
        )
        with self.engine.connect() as conn:
            return {r[0] for r in conn.execute(query)}

    def attempts(self, campaign_id: str) -> dict[str, int]:
        query = (
            select(t.measurements.c.key, func.max(t.measurements.c.attempt))
            .where(t.measurements.c.campaign_id == campaign_id)
            .group_by(t.measurements.c.key)
        )
        with self.engine.connect() as conn:
            return {k: int(n) for k, n in conn.execute(query)}

    def latest_failures(self, campaign_id: str) -> dict[str, str | None]:
        """{key: reason} of each key whose latest attempt is not ok."""
        m = t.measurements.c
        latest = (
            select(m.key, func.max(m.attempt).label("attempt"))
            .where(m.campaign_id == campaign_id)
            .group_by(m.key)
            .subquery()
        )
        query = (
            select(m.key, m.reason)
            .join(latest, (m.key == latest.c.key) & (m.attempt == latest.c.attempt))
            .where(m.campaign_id == campaign_id, m.status != "ok")
        )
        with self.engine.connect() as conn:
            return {k: r for k, r in conn.execute(query)}

    @retry_transient
    def save_measurements(self, records: Sequence[MeasurementRecord]) -> list[int]:
        """Store flows started together in one transaction: a step is in the store whole or not at all."""
        ids = []
        with self.engine.begin() as conn:
            for rec in records:
                mid = int(
                    conn.execute(insert(t.measurements).values(**rec.columns())).inserted_primary_key[0]
                )
                self._children(conn, mid, rec)
                ids.append(mid)
            for rec, mid in zip(records, ids, strict=True):
                if rec.telemetry is not None:
                    self._telemetry(conn, mid, rec.telemetry)
        return ids

    @staticmethod
    def _children(conn: Connection, mid: int, rec: MeasurementRecord) -> None:
        if rec.summary:
            conn.execute(
                insert(t.summaries),
                [
                    {"measurement_id": mid, "metric": k, "value": None if v is None else float(v)}
                    for k, v in rec.summary.items()
                ],
            )
        if rec.samples:
            bounded.insert_samples(
                conn, [(mid, s.t_ns, s.metric, s.value, s.seq, s.stream) for s in rec.samples]
            )
            conn.execute(insert(t.sample_stats), sample_stats_rows(mid, rec.samples))
        if rec.events:
            conn.execute(
                insert(t.events),
                [
                    {
                        "measurement_id": mid,
                        "campaign_id": rec.campaign_id,
                        "t_ns": e.t_ns,
                        "kind": e.kind,
                        "detail": e.detail,
                    }
                    for e in rec.events
                ],
            )
        if rec.raw:
            conn.execute(
                insert(t.raw_outputs),
                [
                    {"measurement_id": mid, "role": role, "stream": stream, "text": text}
                    for (role, stream), text in rec.raw.items()
                ],
            )

    @staticmethod
    def _telemetry(conn: Connection, mid: int, run: TelemetryRun) -> None:
        conn.execute(
            insert(t.telemetry_runs).values(
                measurement_id=mid,
                started_utc_ns=run.started_utc_ns,
                interval_ns=run.interval_ns,
                duration_ns=run.duration_ns,
                readings=run.readings,
                sampler_cpu_ns=run.sampler_cpu_ns,
                path=run.path,
                fragments_per_datagram=run.fragments_per_datagram,
                errors=run.errors,
            )
        )
        if run.rows:
            conn.execute(insert(t.telemetry), [{"measurement_id": mid, **r} for r in run.rows])
        for cap in run.captures:
            conn.execute(
                insert(t.captures).values(
                    measurement_id=mid,
                    node=cap.node,
                    interface=cap.interface,
                    file=cap.file,
                    snaplen_bytes=cap.snaplen_bytes,
                    packet_cap=cap.packet_cap,
                    size_bytes=cap.size_bytes,
                )
            )

    @retry_transient
    def add_event(self, campaign_id: str, kind: str, detail: str, measurement_id: int | None = None) -> None:
        with self.engine.begin() as conn:
            conn.execute(
                insert(t.events).values(
                    campaign_id=campaign_id,
                    measurement_id=measurement_id,
                    t_ns=now_utc_ns(),
                    kind=kind,
                    detail=detail,
                )
            )

    # ------------------------------------------------------------ reading for analysis

    def _frame(self, query: Any) -> pd.DataFrame:
        with self.engine.connect() as conn:
            return pd.read_sql(query, conn)

    def measurements_frame(self, campaign_id: str, latest_only: bool = True) -> pd.DataFrame:
        """One row per measurement with its summary metrics as columns (the latest attempt per key)."""
        m = self._frame(
            select(t.measurements)
            .where(t.measurements.c.campaign_id == campaign_id)
            .order_by(t.measurements.c.seq, t.measurements.c.attempt)
        )
        if latest_only and not m.empty:
            m = m.sort_values("attempt").groupby("key", as_index=False).tail(1).sort_values("seq")
        s = self._frame(
            select(t.summaries).join(t.measurements).where(t.measurements.c.campaign_id == campaign_id)
        )
        if not s.empty:
            # dropna=False: a metric stored as NULL in every measurement (iperf3's sender_cpu_ratio
            # when the tool reports no CPU) stays an empty column, not a column that vanishes; float:
            # a campaign whose every value is NULL reads them as None, an Arrow null column otherwise
            wide = s.astype({"value": float}).pivot_table(
                index="measurement_id", columns="metric", values="value", aggfunc="first", dropna=False
            )
            # A metric named like a measurement column (iperf3's offered_bps) is the tool's own view:
            # tool_<name>, so the planned value keeps its name (a merge would make _x/_y of both).
            wide = wide.rename(columns={c: f"tool_{c}" for c in wide.columns if c in m.columns})
            m = m.merge(wide, left_on="id", right_index=True, how="left")
        return m.reset_index(drop=True)

    def samples_frame(
        self,
        campaign_id: str,
        metrics: Sequence[str] | None = None,
        measurement_ids: Sequence[int] | None = None,
    ) -> pd.DataFrame:
        """Every sample (all columns) of a campaign, or of some of its measurements: for small ones;
        large campaigns go through sample_aggregates / sample_values."""
        query = select(t.samples).join(t.measurements).where(t.measurements.c.campaign_id == campaign_id)
        if metrics:
            query = query.where(t.samples.c.metric.in_(list(metrics)))
        if measurement_ids is not None:
            query = query.where(t.samples.c.measurement_id.in_([int(i) for i in measurement_ids]))
        return self._frame(query)

    def sample_aggregates(
        self,
        campaign_id: str,
        metrics: Sequence[str],
        omit_ns: int = 0,
        measurement_ids: Sequence[int] | None = None,
    ) -> pd.DataFrame:
        """Per measurement and metric: count, sum, mean at t ≥ omit_ns and the samples before it (SQL)."""
        return self._aggregates.aggregates(self.engine, campaign_id, metrics, omit_ns, measurement_ids)

    def sample_values(
        self, campaign_id: str, metric: str, measurement_ids: Sequence[int] | None = None, since_ns: int = 0
    ) -> pd.DataFrame:
        """One metric's sum-row samples at t ≥ since_ns, fetched in chunks into lean columns."""
        return bounded.sample_values(self.engine, campaign_id, metric, measurement_ids, since_ns)

    def events_frame(self, campaign_id: str) -> pd.DataFrame:
        return self._frame(select(t.events).where(t.events.c.campaign_id == campaign_id))

    def builds_frame(self, campaign_id: str) -> pd.DataFrame:
        return self._frame(select(t.builds).where(t.builds.c.campaign_id == campaign_id))

    def raw_output(self, measurement_id: int) -> dict[tuple[str, str], str]:
        with self.engine.connect() as conn:
            rows = conn.execute(select(t.raw_outputs).where(t.raw_outputs.c.measurement_id == measurement_id))
            return {(r.role, r.stream): r.text for r in rows}

    def table_frame(self, name: str, campaign_id: str) -> pd.DataFrame:
        """A whole table restricted to one campaign, for export."""
        table = t.metadata.tables[name]
        if "campaign_id" in table.c:
            return self._frame(select(table).where(table.c.campaign_id == campaign_id))
        if "measurement_id" in table.c:
            return self._frame(
                select(table).join(t.measurements).where(t.measurements.c.campaign_id == campaign_id)
            )
        return self._frame(select(table).where(table.c.id == campaign_id))

    # ------------------------------------------------------------ reading telemetry

    def telemetry_runs_frame(self, campaign_id: str) -> pd.DataFrame:
        """One row per measurement with telemetry: its path, fragments per datagram, sampler facts."""
        runs = t.telemetry_runs
        return self._frame(
            select(runs).join(t.measurements).where(t.measurements.c.campaign_id == campaign_id)
        )

    def telemetry_totals(self, measurement_ids: Sequence[int]) -> dict[int, Totals]:
        """Sum of the stored deltas per measurement, scope and metric (gauges left out)."""
        if not measurement_ids:
            return {}
        tt = t.telemetry
        query = (
            select(tt.c.measurement_id, tt.c.scope, tt.c.metric, func.sum(tt.c.value))
            .where(
                tt.c.measurement_id.in_(list(measurement_ids)), tt.c.metric.not_in(sorted(TELEMETRY_GAUGES))
            )
            .group_by(tt.c.measurement_id, tt.c.scope, tt.c.metric)
        )
        out: dict[int, Totals] = defaultdict(lambda: defaultdict(dict))
        with self.engine.connect() as conn:
            for mid, scope, metric, value in conn.execute(query):
                out[int(mid)][scope][metric] = float(value)
        return out

    def telemetry_series(self, measurement_id: int, scope: str, metric: str) -> pd.DataFrame:
        """One counter's per-reading deltas (t_ns, value) during a measurement."""
        tt = t.telemetry
        return self._frame(
            select(tt.c.t_ns, tt.c.value)
            .where(tt.c.measurement_id == measurement_id, tt.c.scope == scope, tt.c.metric == metric)
            .order_by(tt.c.t_ns)
        )

    def telemetry_readings(self, measurement_id: int, scope: str) -> pd.DataFrame:
        """Every metric of one scope during a measurement (t_ns, metric, value)."""
        tt = t.telemetry
        return self._frame(
            select(tt.c.t_ns, tt.c.metric, tt.c.value).where(
                tt.c.measurement_id == measurement_id, tt.c.scope == scope
            )
        )

    def telemetry_path(self, measurement_id: int) -> dict[str, Any] | None:
        """The stored flow path of a measurement's telemetry (None without telemetry)."""
        runs = t.telemetry_runs
        with self.engine.connect() as conn:
            return conn.execute(select(runs.c.path).where(runs.c.measurement_id == measurement_id)).scalar()
