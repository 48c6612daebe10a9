"""Read and write the store. Each measurement is committed in one transaction as soon as it ends."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd
from sqlalchemy import Engine, create_engine, event, func, insert, select, update
from sqlalchemy.engine import Connection

from vnetbench.store import schema as t

DEFAULT_DB = "vnetbench.db"


def now_utc_ns() -> int:
    return time.time_ns()


@dataclass
class Sample:
    t_ns: int
    metric: str
    value: float | None
    seq: int | None = None
    stream: int | None = None


@dataclass
class Event:
    kind: str
    detail: str
    t_ns: int | None = None


@dataclass
class MeasurementRecord:
    """Everything known about one flow's measurement, written to the store at once."""

    campaign_id: str
    key: str
    step_key: str
    seq: int
    repetition: int
    pattern: str
    pattern_kind: str
    group_kind: str
    group_size: int
    measurement: str
    kind: str
    src: str
    dst: str
    placement: str
    status: str = "ok"
    reason: str | None = None
    attempt: int = 1
    build_id: int | None = None
    factors: dict[str, Any] = field(default_factory=dict)
    src_host: str | None = None
    dst_host: str | None = None
    link_rate_bps: int | None = None
    path_mtu: int | None = None
    expected_max_bps: float | None = None
    offered_bps: float | None = None
    tool: str | None = None
    tool_version: str | None = None
    command: dict[str, list[str]] | None = None
    started_utc_ns: int | None = None
    duration_ns: int | None = None
    start_skew_ns: int | None = None
    start_offset_ns: int | None = None
    summary: dict[str, float | None] = field(default_factory=dict)
    samples: list[Sample] = field(default_factory=list)
    events: list[Event] = field(default_factory=list)
    raw: dict[tuple[str, str], str] = field(default_factory=dict)  # (role, stdout|stderr) -> text


def engine_for(db: str | Path) -> Engine:
    """A path means SQLite; anything with '://' is a SQLAlchemy URL (e.g. postgresql+psycopg://...)."""
    if "://" in str(db):
        url = str(db)
    else:
        path = Path(db).expanduser().resolve()
        path.parent.mkdir(parents=True, exist_ok=True)  # `--db out/demo.db` on a fresh clone
        url = f"sqlite:///{path}"
    engine = create_engine(url, future=True)
    if engine.dialect.name == "sqlite":

        @event.listens_for(engine, "connect")
        def _pragmas(dbapi_conn: Any, _record: Any) -> None:
            cur = dbapi_conn.cursor()
            # WAL survives kill -9 of the writer and lets a report read while a campaign runs.
            cur.execute("PRAGMA journal_mode=WAL")
            cur.execute("PRAGMA synchronous=NORMAL")
            cur.execute("PRAGMA foreign_keys=ON")
            cur.execute("PRAGMA busy_timeout=10000")
            cur.close()

    return engine


class Store:
    def __init__(self, db: str | Path = DEFAULT_DB) -> None:
        self.location = str(db)
        self.engine = engine_for(db)
        t.metadata.create_all(self.engine)
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
        with self.engine.begin() as conn:
            return [conn.execute(insert(t.objects).values(**row)).inserted_primary_key[0] for row in rows]

    def mark_removed(self, object_ids: Sequence[int]) -> None:
        if not object_ids:
            return
        with self.engine.begin() as conn:
            conn.execute(
                update(t.objects)
                .where(t.objects.c.id.in_(list(object_ids)))
                .values(removed_utc_ns=now_utc_ns())
            )

    def update_object(self, object_id: int, details: dict[str, Any]) -> None:
        with self.engine.begin() as conn:
            conn.execute(update(t.objects).where(t.objects.c.id == object_id).values(details=details))

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

    def save_measurements(
        self,
        records: Sequence[MeasurementRecord],
        after: Callable[[Connection, Sequence[MeasurementRecord], list[int]], None] | None = None,
    ) -> list[int]:
        """Store flows started together in one transaction: a step is in the store whole or not at all.

        `after(conn, records, ids)` writes rows that belong to them (telemetry) in the same transaction.
        """
        ids = []
        with self.engine.begin() as conn:
            for rec in records:
                values = {
                    k: v for k, v in rec.__dict__.items() if k not in {"summary", "samples", "events", "raw"}
                }
                mid = int(conn.execute(insert(t.measurements).values(**values)).inserted_primary_key[0])
                self._children(conn, mid, rec)
                ids.append(mid)
            if after is not None:
                after(conn, records, ids)
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
            conn.execute(
                insert(t.samples),
                [
                    {
                        "measurement_id": mid,
                        "t_ns": s.t_ns,
                        "metric": s.metric,
                        "value": s.value,
                        "seq": s.seq,
                        "stream": s.stream,
                    }
                    for s in rec.samples
                ],
            )
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
            wide = s.pivot_table(index="measurement_id", columns="metric", values="value", aggfunc="first")
            # A metric named like a measurement column (iperf3's offered_bps) is the tool's own view:
            # tool_<name>, so the planned value keeps its name (a merge would make _x/_y of both).
            wide = wide.rename(columns={c: f"tool_{c}" for c in wide.columns if c in m.columns})
            m = m.merge(wide, left_on="id", right_index=True, how="left")
        return m.reset_index(drop=True)

    def samples_frame(self, campaign_id: str, metrics: Sequence[str] | None = None) -> pd.DataFrame:
        query = select(t.samples).join(t.measurements).where(t.measurements.c.campaign_id == campaign_id)
        if metrics:
            query = query.where(t.samples.c.metric.in_(list(metrics)))
        return self._frame(query)

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
