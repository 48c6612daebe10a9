"""The monitor's reads and writes (issue 16): monitored campaigns, their runs, alert episodes, and the
aggregates that /metrics and /health show. Every statement is one short transaction, so a dashboard or
a Prometheus scrape in another process reads while the monitor writes."""

from __future__ import annotations

import contextlib
import socket
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Connection, Table, and_, delete, func, insert, select, update
from sqlalchemy.exc import IntegrityError

from vnetbench.store import schema as t
from vnetbench.store.db import Store
from vnetbench.store.records import now_utc_ns

# A running monitor writes its heartbeat (monitored_campaigns.updated_utc_ns) this often, between runs
# and during them; a monitor on another host takes the campaign over once it is older than the second
# (many missed beats: a store outage the writes ride out, clocks a few seconds apart), and /health calls
# such a campaign `stale`.
HEARTBEAT_S = 10.0
HEARTBEAT_STALE_S = 120.0


def this_host() -> str:
    """The name a monitor records as its host (monitored_campaigns.hostname)."""
    return socket.gethostname()


class NotOwner(Exception):
    """A monitor's guarded write found the campaign's row naming another monitor (it was taken over):
    nothing was written. `owner`: the row as it is now (None if it is gone)."""

    def __init__(self, campaign_id: str, owner: dict[str, Any] | None) -> None:
        who = "nobody" if owner is None else f"process {owner['pid']} on {owner['hostname']}"
        super().__init__(f"campaign {campaign_id} is monitored by {who} now")
        self.campaign_id, self.owner = campaign_id, owner


def _same(column: Any, value: Any) -> Any:
    """column = value, NULL-safe (a row a stopped monitor left has pid NULL)."""
    return column.is_(None) if value is None else column == value


@dataclass(frozen=True)
class Series:
    """One pair's measurement in a monitored campaign: what an alert rule watches."""

    measurement: str
    src: str
    dst: str


@dataclass(frozen=True)
class LatestValue:
    campaign_id: str
    campaign: str
    measurement: str
    src: str
    dst: str
    metric: str
    value: float
    run: int
    started_utc_ns: int | None


class MonitorStore:
    """The monitor tables of a store (the Store owns the engine and the measurement tables)."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self.engine = store.engine

    # ------------------------------------------------------------ monitored campaigns

    def find(self, name: str) -> str | None:
        """The newest monitored campaign with this name, to continue its time series."""
        query = (
            select(t.campaigns.c.id)
            .join(t.monitored_campaigns, t.monitored_campaigns.c.campaign_id == t.campaigns.c.id)
            .where(t.campaigns.c.name == name)
            .order_by(t.campaigns.c.created_utc_ns.desc())
        )
        with self.engine.connect() as conn:
            row = conn.execute(query).first()
        return row[0] if row else None

    def named(self, name: str) -> str | None:
        """The campaign monitors of this name continue, as the last monitor to create one named it
        (None: none has, or the store predates monitor_names)."""
        query = select(t.monitor_names.c.campaign_id).where(t.monitor_names.c.name == name)
        with self.engine.connect() as conn:
            row = conn.execute(query).first()
        return row[0] if row else None

    def name_campaign(self, name: str, campaign_id: str, previous: str | None) -> bool:
        """Make `campaign_id` the one monitors of `name` continue, only if the name still points to
        `previous` (None: to nothing): one statement decides, so of monitors that each created a
        campaign of one name at once exactly one gets True; a False wrote nothing."""
        still = None if previous is None else [t.monitor_names.c.campaign_id == previous]
        return self._compare_and_set(t.monitor_names, {"name": name}, still, {"campaign_id": campaign_id})

    def drop_unused_campaign(self, campaign_id: str) -> None:
        """Delete a campaign row a monitor created and then lost the name's compare-and-set for: nothing
        was built, measured or claimed under it (only a never-started campaign's row is deleted)."""
        with self.engine.begin() as conn:
            conn.execute(
                delete(t.campaigns).where(t.campaigns.c.id == campaign_id, t.campaigns.c.status == "created")
            )

    def is_monitored(self, campaign_id: str) -> bool:
        return self.monitored(campaign_id) is not None

    def monitored(self, campaign_id: str) -> dict[str, Any] | None:
        query = select(t.monitored_campaigns).where(t.monitored_campaigns.c.campaign_id == campaign_id)
        with self.engine.connect() as conn:
            row = conn.execute(query).first()
        return dict(row._mapping) if row else None

    def all_monitored(self) -> list[dict[str, Any]]:
        """Every monitored campaign with its name, newest first."""
        query = (
            select(t.monitored_campaigns, t.campaigns.c.name, t.campaigns.c.created_utc_ns)
            .join(t.campaigns, t.campaigns.c.id == t.monitored_campaigns.c.campaign_id)
            .order_by(t.campaigns.c.created_utc_ns.desc())
        )
        with self.engine.connect() as conn:
            return [dict(r._mapping) for r in conn.execute(query)]

    def register(self, campaign_id: str, spec_text: str, spec_source: str, pid: int) -> None:
        """Claim the campaign for this monitor process (insert, or update after a restart)."""
        values = _claim_values(spec_text, spec_source, pid)
        with self.engine.begin() as conn:
            found = conn.execute(
                update(t.monitored_campaigns)
                .where(t.monitored_campaigns.c.campaign_id == campaign_id)
                .values(**values)
            ).rowcount
            if not found:
                conn.execute(insert(t.monitored_campaigns).values(campaign_id=campaign_id, **values))

    def claim(
        self, campaign_id: str, spec_text: str, spec_source: str, pid: int, seen: dict[str, Any] | None
    ) -> bool:
        """Claim the campaign for monitor `pid` of this host, atomically: only if its row is still `seen`
        (as the caller read and judged it: None, no row yet). One statement decides (an UPDATE whose
        WHERE is the row seen, or an INSERT the primary key refuses), so of monitors racing for one
        campaign exactly one gets True; a False claim wrote nothing."""
        c = t.monitored_campaigns.c
        # the heartbeat too: two claims by one pid and host (a reused pid) still differ in it
        keys = ("state", "pid", "hostname", "updated_utc_ns")
        still = None if seen is None else [_same(getattr(c, k), seen[k]) for k in keys]
        values = _claim_values(spec_text, spec_source, pid)
        return self._compare_and_set(t.monitored_campaigns, {"campaign_id": campaign_id}, still, values)

    def _compare_and_set(
        self, table: Table, key: dict[str, Any], still: list[Any] | None, values: dict[str, Any]
    ) -> bool:
        """Write `values` to `table`'s row at `key` only if it is as the caller saw it: `still` None,
        no row yet (an INSERT the primary key refuses when another process inserted first), else an
        UPDATE whose WHERE is `still` (the conditions the row met when read). One statement decides,
        so of processes racing for one row exactly one gets True; a False wrote nothing."""
        if still is None:
            try:
                with self.engine.begin() as conn:
                    conn.execute(insert(table).values(**key, **values))
            except IntegrityError:
                return False
            return True
        where = [table.c[column] == value for column, value in key.items()]
        with self.engine.begin() as conn:
            found = conn.execute(update(table).where(*where, *still).values(**values)).rowcount
        return bool(found)

    @contextlib.contextmanager
    def _owning(self, campaign_id: str, pid: int) -> Iterator[Connection]:
        """A transaction that first beats monitor `pid`'s heartbeat, which locks its row until the
        commit, and raises NotOwner (writing nothing) when the row names another monitor."""
        c = t.monitored_campaigns.c
        with self.engine.begin() as conn:
            found = conn.execute(
                update(t.monitored_campaigns)
                .where(c.campaign_id == campaign_id, c.pid == pid, c.hostname == this_host())
                .values(updated_utc_ns=now_utc_ns())
            ).rowcount
            if not found:
                row = conn.execute(select(t.monitored_campaigns).where(c.campaign_id == campaign_id)).first()
                raise NotOwner(campaign_id, None if row is None else dict(row._mapping))
            yield conn

    def _guarded(self, campaign_id: str, owner: int | None) -> contextlib.AbstractContextManager[Connection]:
        return self.engine.begin() if owner is None else self._owning(campaign_id, owner)

    def set_state(self, campaign_id: str, owner: int | None = None, **values: Any) -> None:
        """state, next_run_utc_ns, url, message, pid ... `owner`: only while monitor `owner` of this
        host holds the campaign (else NotOwner, nothing written); None: whoever holds it."""
        with self._guarded(campaign_id, owner) as conn:
            conn.execute(
                update(t.monitored_campaigns)
                .where(t.monitored_campaigns.c.campaign_id == campaign_id)
                .values({"updated_utc_ns": now_utc_ns(), **values})  # a test may give its own
            )

    def update_campaign(self, campaign_id: str, owner: int, **values: Any) -> None:
        """The campaign's own row (status, pid ...), only while monitor `owner` of this host holds the
        claim (else NotOwner, nothing written): a monitor taken over during a run must not mark the new
        owner's campaign as its own run ended (`interrupted`, no pid)."""
        with self._owning(campaign_id, owner) as conn:
            conn.execute(update(t.campaigns).where(t.campaigns.c.id == campaign_id).values(**values))

    def heartbeat(self, campaign_id: str, pid: int) -> None:
        """The monitor `pid` of this host is alive: updated_utc_ns is its heartbeat (a monitor on another
        host sharing the store takes the campaign over only once it is stale). NotOwner when the row
        names another monitor now (it took the campaign over): nothing is written then."""
        with self._owning(campaign_id, pid):
            pass

    # ------------------------------------------------------------ runs

    def runs(self, campaign_id: str) -> list[dict[str, Any]]:
        query = (
            select(t.monitor_runs)
            .where(t.monitor_runs.c.campaign_id == campaign_id)
            .order_by(t.monitor_runs.c.run)
        )
        with self.engine.connect() as conn:
            return [dict(r._mapping) for r in conn.execute(query)]

    def last_run(self, campaign_id: str) -> dict[str, Any] | None:
        query = (
            select(t.monitor_runs)
            .where(t.monitor_runs.c.campaign_id == campaign_id)
            .order_by(t.monitor_runs.c.run.desc())
            .limit(1)
        )
        with self.engine.connect() as conn:
            row = conn.execute(query).first()
        return dict(row._mapping) if row else None

    def start_run(
        self, campaign_id: str, run: int, scheduled_utc_ns: int, steps_total: int, owner: int | None = None
    ) -> None:
        """Record that run `run` begins (before anything is built), or begins again after a restart.
        `owner`, here and in step_done and finish_run: as for set_state."""
        now = now_utc_ns()
        key = and_(t.monitor_runs.c.campaign_id == campaign_id, t.monitor_runs.c.run == run)
        with self._guarded(campaign_id, owner) as conn:
            found = conn.execute(
                update(t.monitor_runs)
                .where(key)
                .values(status="running", steps_total=steps_total, finished_utc_ns=None, message=None)
            ).rowcount
            if not found:
                conn.execute(
                    insert(t.monitor_runs).values(
                        campaign_id=campaign_id,
                        run=run,
                        scheduled_utc_ns=scheduled_utc_ns,
                        started_utc_ns=now,
                        status="running",
                        steps_total=steps_total,
                        steps_done=0,
                        flows_ok=0,
                        flows_failed=0,
                    )
                )

    def step_done(
        self,
        campaign_id: str,
        run: int,
        steps_done: int,
        flows_ok: int,
        flows_failed: int,
        owner: int | None = None,
    ) -> None:
        key = and_(t.monitor_runs.c.campaign_id == campaign_id, t.monitor_runs.c.run == run)
        with self._guarded(campaign_id, owner) as conn:
            conn.execute(
                update(t.monitor_runs)
                .where(key)
                .values(steps_done=steps_done, flows_ok=flows_ok, flows_failed=flows_failed)
            )

    def finish_run(
        self, campaign_id: str, run: int, status: str, message: str | None = None, owner: int | None = None
    ) -> None:
        key = and_(t.monitor_runs.c.campaign_id == campaign_id, t.monitor_runs.c.run == run)
        with self._guarded(campaign_id, owner) as conn:
            conn.execute(
                update(t.monitor_runs)
                .where(key)
                .values(status=status, finished_utc_ns=now_utc_ns(), message=message)
            )

    def stored_flows(self, campaign_id: str, run: int) -> tuple[set[str], set[str], int]:
        """Of run `run`: the keys stored (any status), the keys stored ok, and how many keys have only
        failed attempts (a measurement re-run after a failure counts once: it counted every attempt,
        a tool's setup failure too)."""
        m = t.measurements
        query = select(m.c.key, m.c.status).where(m.c.campaign_id == campaign_id, m.c.repetition == run)
        stored, ok = set(), set()
        with self.engine.connect() as conn:
            for key, status in conn.execute(query):
                stored.add(key)
                if status == "ok":
                    ok.add(key)
        return stored, ok, len(stored - ok)

    def run_counts(self) -> dict[str, dict[str, int]]:
        """campaign id -> run status -> how many runs."""
        query = select(t.monitor_runs.c.campaign_id, t.monitor_runs.c.status, func.count()).group_by(
            t.monitor_runs.c.campaign_id, t.monitor_runs.c.status
        )
        out: dict[str, dict[str, int]] = defaultdict(dict)
        with self.engine.connect() as conn:
            for cid, status, n in conn.execute(query):
                out[cid][status] = int(n)
        return dict(out)

    def last_success_utc_ns(self) -> dict[str, int]:
        """campaign id -> when its latest run that finished without a failed measurement ended."""
        query = (
            select(t.monitor_runs.c.campaign_id, func.max(t.monitor_runs.c.finished_utc_ns))
            .where(t.monitor_runs.c.status == "ok")
            .group_by(t.monitor_runs.c.campaign_id)
        )
        with self.engine.connect() as conn:
            return {cid: int(ns) for cid, ns in conn.execute(query) if ns is not None}

    # ------------------------------------------------------------ values

    def run_metrics(self, campaign_id: str, run: int, valued: bool = True) -> dict[str, set[str]]:
        """The summary metrics each measurement of run `run` stored a value of (its ok results only): a
        NULL (an RTT percentile when every ping was lost) is nothing an alert rule can compare
        (recent_values skips it). valued=False: every metric name stored, NULL or not."""
        m, s = t.measurements, t.summaries
        query = (
            select(m.c.measurement, s.c.metric)
            .join(s, s.c.measurement_id == m.c.id)
            .where(m.c.campaign_id == campaign_id, m.c.repetition == run, m.c.status == "ok")
            .distinct()
        )
        if valued:
            query = query.where(s.c.value.is_not(None))
        out: dict[str, set[str]] = defaultdict(set)
        with self.engine.connect() as conn:
            for measurement, metric in conn.execute(query):
                out[measurement].add(metric)
        return dict(out)

    def recent_values(
        self, campaign_id: str, metric: str, runs: int, measurement: str | None = None
    ) -> dict[Series, list[tuple[int, float]]]:
        """The last `runs` runs' values of a summary metric per series, oldest first (mean when a run
        measured a pair more than once, e.g. alone and together)."""
        m, s = t.measurements, t.summaries
        newest = select(func.max(m.c.repetition)).where(m.c.campaign_id == campaign_id).scalar_subquery()
        query = (
            select(m.c.repetition, m.c.measurement, m.c.src, m.c.dst, func.avg(s.c.value))
            .join(s, s.c.measurement_id == m.c.id)
            .where(
                m.c.campaign_id == campaign_id,
                m.c.status == "ok",
                s.c.metric == metric,
                s.c.value.is_not(None),
                m.c.repetition > newest - runs,
            )
            .group_by(m.c.repetition, m.c.measurement, m.c.src, m.c.dst)
            .order_by(m.c.repetition)
        )
        if measurement is not None:
            query = query.where(m.c.measurement == measurement)
        out: dict[Series, list[tuple[int, float]]] = defaultdict(list)
        with self.engine.connect() as conn:
            for rep, mname, src, dst, value in conn.execute(query):
                out[Series(mname, src, dst)].append((int(rep), float(value)))
        return dict(out)

    def latest_values(self, campaign_ids: list[str]) -> list[LatestValue]:
        """Per campaign, pair and measurement, every summary metric of its newest ok measurement."""
        if not campaign_ids:
            return []
        m, s, c = t.measurements, t.summaries, t.campaigns
        newest = (
            select(func.max(m.c.id).label("id"))
            .where(m.c.campaign_id.in_(campaign_ids), m.c.status == "ok")
            .group_by(m.c.campaign_id, m.c.measurement, m.c.src, m.c.dst)
            .subquery()
        )
        query = (
            select(
                m.c.campaign_id,
                c.c.name,
                m.c.measurement,
                m.c.src,
                m.c.dst,
                s.c.metric,
                s.c.value,
                m.c.repetition,
                m.c.started_utc_ns,
            )
            .join(newest, newest.c.id == m.c.id)
            .join(s, s.c.measurement_id == m.c.id)
            .join(c, c.c.id == m.c.campaign_id)
            .where(s.c.value.is_not(None))
        )
        with self.engine.connect() as conn:
            return [LatestValue(*row[:6], float(row[6]), int(row[7]), row[8]) for row in conn.execute(query)]

    # ------------------------------------------------------------ alert episodes

    def open_episodes(self, campaign_id: str | None = None) -> list[dict[str, Any]]:
        query = select(t.alert_episodes).where(t.alert_episodes.c.closed_run.is_(None))
        if campaign_id is not None:
            query = query.where(t.alert_episodes.c.campaign_id == campaign_id)
        with self.engine.connect() as conn:
            return [dict(r._mapping) for r in conn.execute(query.order_by(t.alert_episodes.c.id))]

    def episodes(self, campaign_id: str | None = None, limit: int = 500) -> list[dict[str, Any]]:
        """Newest first, open and closed."""
        query = select(t.alert_episodes).order_by(t.alert_episodes.c.id.desc()).limit(limit)
        if campaign_id is not None:
            query = query.where(t.alert_episodes.c.campaign_id == campaign_id)
        with self.engine.connect() as conn:
            return [dict(r._mapping) for r in conn.execute(query)]

    def open_episode(self, **values: Any) -> int:
        values.setdefault("opened_utc_ns", now_utc_ns())
        with self.engine.begin() as conn:
            return int(conn.execute(insert(t.alert_episodes).values(**values)).inserted_primary_key[0])

    def close_episode(self, episode_id: int, run: int) -> None:
        with self.engine.begin() as conn:
            conn.execute(
                update(t.alert_episodes)
                .where(t.alert_episodes.c.id == episode_id)
                .values(closed_run=run, closed_utc_ns=now_utc_ns())
            )

    def unnotified(self, campaign_id: str) -> list[dict[str, Any]]:
        """Episodes whose webhook message (firing, or resolved once closed) was not yet accepted."""
        e = t.alert_episodes
        query = select(e).where(
            e.c.campaign_id == campaign_id,
            (e.c.notified_utc_ns.is_(None))
            | (e.c.closed_run.is_not(None) & e.c.resolved_notified_utc_ns.is_(None)),
        )
        with self.engine.connect() as conn:
            return [dict(r._mapping) for r in conn.execute(query.order_by(e.c.id))]

    def mark_notified(self, episode_id: int, resolved: bool) -> None:
        column = "resolved_notified_utc_ns" if resolved else "notified_utc_ns"
        with self.engine.begin() as conn:
            conn.execute(
                update(t.alert_episodes)
                .where(t.alert_episodes.c.id == episode_id)
                .values({column: now_utc_ns()})
            )


def _claim_values(spec_text: str, spec_source: str, pid: int) -> dict[str, Any]:
    """A monitor row's columns as monitor `pid` of this host claims it: waiting, its heartbeat now."""
    return {
        "spec_text": spec_text,
        "spec_source": spec_source,
        "state": "waiting",
        "pid": pid,
        "hostname": this_host(),
        "message": None,
        "updated_utc_ns": now_utc_ns(),
    }
