"""Cheap reads for the live dashboard: progress, the pair grid and one pair's series.

Every answer comes from per-measurement rows (`measurements`, `summaries`, and `sample_stats`: each
measurement's sample count / min / mean / max, written with its samples) aggregated in SQL; nothing
reads a campaign's samples. The indexes these queries lean on are in schema.py (LIVE_INDEXES); a store
made before them gets them, and its sample_stats rows, from `ensure_live_schema` when it is opened.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Engine, and_, case, func, insert, literal, or_, select
from sqlalchemy.exc import IntegrityError

from vnetbench.store import schema as t

# Flows measured while others ran (a star's simultaneous flows, parallel pairs, the background flows
# beside a pattern's steps, and the flows of a pattern with background traffic) form their own grid:
# their values answer "how much under contention", not "how much between these two".
CONTENDED_GROUPS = ("together", "parallel", "background")


# meta key saying what sample_stats aggregates. Rows written before it existed mixed iperf3's
# per-stream samples with the totals (4 streams of a 95 Mbit/s flow: 15 samples, mean 38.1 Mbit/s):
# a store without it has its sample_stats rebuilt once, from the totals.
SAMPLE_STATS_KEY, SAMPLE_STATS_OF = "sample_stats_of", "totals"


def ensure_live_schema(engine: Engine, backfill_sample_stats: bool) -> None:
    """Bring a store made before the dashboard up to date: its indexes (a no-op when present) and its
    sample_stats rows, (re)built from the stored samples when the table was just created or was
    written under the old rule (once)."""
    with engine.begin() as conn:
        for index in t.LIVE_INDEXES:
            index.create(conn, checkfirst=True)
        rule = conn.execute(select(t.meta.c.value).where(t.meta.c.key == SAMPLE_STATS_KEY)).scalar()
    if rule == SAMPLE_STATS_OF and not backfill_sample_stats:
        return
    smp = t.samples
    aggregates = (
        select(
            smp.c.measurement_id,
            smp.c.metric,
            func.count(smp.c.value),
            func.min(smp.c.value),
            func.avg(smp.c.value),
            func.max(smp.c.value),
        )
        .where(smp.c.stream.is_(None))
        .group_by(smp.c.measurement_id, smp.c.metric)
    )
    columns = ["measurement_id", "metric", "value_count", "value_min", "value_mean", "value_max"]
    try:
        with engine.begin() as conn:  # one transaction: a second process doing the same rolls back
            conn.execute(t.sample_stats.delete())
            conn.execute(t.sample_stats.insert().from_select(columns, aggregates))
            if rule is None:
                conn.execute(insert(t.meta).values(key=SAMPLE_STATS_KEY, value=SAMPLE_STATS_OF))
    except IntegrityError:
        pass  # another process opening the same store rebuilt it at the same moment


def sample_stats_rows(measurement_id: int, samples: Iterable[Any]) -> list[dict[str, Any]]:
    """The sample_stats rows of one measurement's samples (anything with .metric, .value and .stream):
    the totals only, not iperf3's per-stream samples of the same intervals."""
    values: dict[str, list[float]] = {}
    for sample in samples:
        if getattr(sample, "stream", None) is not None:
            continue
        bucket = values.setdefault(sample.metric, [])
        if sample.value is not None:
            bucket.append(float(sample.value))
    return [
        {
            "measurement_id": measurement_id,
            "metric": metric,
            "value_count": len(vs),
            "value_min": min(vs) if vs else None,
            "value_mean": sum(vs) / len(vs) if vs else None,
            "value_max": max(vs) if vs else None,
        }
        for metric, vs in values.items()
    ]


@dataclass(frozen=True)
class CampaignProgress:
    campaign_id: str
    steps_done: int  # distinct steps with at least one stored attempt
    measurements_ok: int  # distinct plan keys stored with status ok
    attempts_failed: int
    last_result_utc_ns: int | None
    latest_repetition: int  # a monitored campaign's run n is repetition n


def campaign_progress(
    engine: Engine, campaign_ids: Sequence[str] | None = None
) -> dict[str, CampaignProgress]:
    m = t.measurements
    ok_key = case((m.c.status == "ok", m.c.key))
    query = select(
        m.c.campaign_id,
        func.count(func.distinct(m.c.step_key)),
        func.count(func.distinct(ok_key)),
        func.sum(case((m.c.status != "ok", 1), else_=0)),
        func.max(m.c.started_utc_ns + func.coalesce(m.c.duration_ns, 0)),
        func.max(m.c.repetition),
    ).group_by(m.c.campaign_id)
    if campaign_ids is not None:
        query = query.where(m.c.campaign_id.in_(list(campaign_ids)))
    with engine.connect() as conn:
        return {
            cid: CampaignProgress(cid, int(steps), int(ok), int(failed or 0), _int_or_none(last), int(rep))
            for cid, steps, ok, failed, last, rep in conn.execute(query)
        }


@dataclass(frozen=True)
class MonitorRun:
    """A monitored campaign's newest run, as the monitor records it (monitor_runs)."""

    run: int
    status: str  # running | ok | failed | interrupted
    steps_done: int
    steps_total: int


def latest_monitor_runs(engine: Engine, campaign_ids: Sequence[str] | None = None) -> dict[str, MonitorRun]:
    """Each monitored campaign's newest run with its progress (none for campaigns never monitored)."""
    r = t.monitor_runs
    newest = select(r.c.campaign_id, func.max(r.c.run).label("run")).group_by(r.c.campaign_id)
    if campaign_ids is not None:
        newest = newest.where(r.c.campaign_id.in_(list(campaign_ids)))
    latest = newest.subquery()
    query = select(r.c.campaign_id, r.c.run, r.c.status, r.c.steps_done, r.c.steps_total).join(
        latest, and_(r.c.campaign_id == latest.c.campaign_id, r.c.run == latest.c.run)
    )
    with engine.connect() as conn:
        return {
            cid: MonitorRun(int(run), status, int(done or 0), int(total or 0))
            for cid, run, status, done, total in conn.execute(query)
        }


def _int_or_none(value: Any) -> int | None:
    return None if value is None else int(value)


def newest_measurement_id(engine: Engine) -> int | None:
    """The store's newest measurement row (its primary key index): what changes when anything is stored."""
    with engine.connect() as conn:
        return conn.execute(select(func.max(t.measurements.c.id))).scalar()


def campaign_version(engine: Engine, campaign_id: str) -> tuple[int | None, str] | None:
    """(newest measurement row id, state) of a campaign in one statement; None: no such campaign.
    Its answers change exactly when this does (measurement rows are only ever added)."""
    m, c = t.measurements, t.campaigns
    newest = select(func.max(m.c.id)).where(m.c.campaign_id == campaign_id).scalar_subquery()
    with engine.connect() as conn:
        row = conn.execute(select(newest, c.c.status).where(c.c.id == campaign_id)).first()
    return None if row is None else (row[0], row[1])


@dataclass(frozen=True)
class GridCell:
    measurement: str
    contended: bool
    src: str
    dst: str
    metric: str
    latest: float | None  # the newest ok measurement's value
    latest_id: int
    latest_repetition: int
    latest_utc_ns: int | None
    expected_max_bps: float | None
    count: int  # ok measurements of this cell with a value
    lowest: float | None  # over the campaign: the pair's baseline is one of these
    highest: float | None
    offered_bps: float | None = None  # the newest row's offered rate (a constant-rate flow), else None
    # a contended cell is one pattern's flows (lb-2tenants beside lb-4tenants: two cells, never merged);
    # None: an alone cell, whichever pattern measured the pair alone
    pattern: str | None = None


def _contended(background_patterns: Collection[str] = ()) -> Any:
    m = t.measurements
    with_others = m.c.group_kind.in_(CONTENDED_GROUPS)
    if background_patterns:
        with_others = or_(with_others, m.c.pattern.in_(list(background_patterns)))
    return case((with_others, literal(1)), else_=literal(0))


def stored_metrics(engine: Engine, campaign_id: str) -> dict[str, set[str]]:
    """Per measurement name, the summary metrics its ok results stored (one row per pair: small)."""
    m, s = t.measurements, t.summaries
    query = (
        select(m.c.measurement, s.c.metric)
        .select_from(m.join(s, s.c.measurement_id == m.c.id))
        .where(m.c.campaign_id == campaign_id, m.c.status == "ok")
        .distinct()
    )
    out: dict[str, set[str]] = {}
    with engine.connect() as conn:
        for measurement, metric in conn.execute(query):
            out.setdefault(measurement, set()).add(metric)
    return out


def grid_cells(
    engine: Engine, campaign_id: str, metrics: Sequence[str], background_patterns: Collection[str] = ()
) -> list[GridCell]:
    """Per (measurement, contended, src, dst, metric, and for contended flows their pattern): the newest
    ok value and the range over the campaign. A flow of one of `background_patterns` (patterns whose
    steps run background traffic) is contended. Flows measured alone are one cell whichever pattern
    measured them; contended flows are one cell per pattern: 2 tenants and 4 tenants sharing a switch
    answer different questions, and their values are never merged into one range or newest value.

    Two statements: one pass over the campaign's ok rows (covered by ix_measurements_grid) and their
    summaries (by primary key) for count, range and the newest row per cell; then the newest rows'
    values by primary key.
    """
    m, s = t.measurements, t.summaries
    cell = (m.c.measurement, m.c.group_kind, m.c.src, m.c.dst, m.c.pattern)
    ranges = (
        select(
            *cell,
            s.c.metric,
            func.max(m.c.id),
            func.count(s.c.value),
            func.min(s.c.value),
            func.max(s.c.value),
        )
        .select_from(m.join(s, s.c.measurement_id == m.c.id))
        .where(m.c.campaign_id == campaign_id, m.c.status == "ok", s.c.metric.in_(list(metrics)))
        .group_by(*cell, s.c.metric)
    )
    # group kinds fold into alone / contended here, not in SQL: a CASE in GROUP BY defeats the index
    groups: dict[tuple[str, bool, str, str, str, str | None], list[Any]] = {}
    latest: dict[tuple[int, str], Any] = {}
    with engine.connect() as conn:
        for row in conn.execute(ranges):
            measurement, group_kind, src, dst, pattern = row[:5]
            metric, newest, n, lowest, highest = row[-5:]
            contended = group_kind in CONTENDED_GROUPS or pattern in background_patterns
            key = (measurement, contended, src, dst, metric, pattern if contended else None)
            seen = groups.get(key)
            if seen is None:
                groups[key] = [int(newest), int(n), lowest, highest]
            else:
                seen[0], seen[1] = max(seen[0], int(newest)), seen[1] + int(n)
                seen[2] = _none_min(seen[2], lowest)
                seen[3] = _none_max(seen[3], highest)
        newest_ids = sorted({g[0] for g in groups.values()})
        for chunk in range(0, len(newest_ids), 500):  # a bounded IN list
            query = (
                select(s.c.measurement_id, s.c.metric, s.c.value, m.c.repetition, m.c.started_utc_ns)
                .add_columns(m.c.expected_max_bps, m.c.offered_bps)
                .select_from(s.join(m, m.c.id == s.c.measurement_id))
                .where(s.c.measurement_id.in_(newest_ids[chunk : chunk + 500]), s.c.metric.in_(list(metrics)))
            )
            latest.update({(int(r.measurement_id), r.metric): r for r in conn.execute(query)})
    cells = []
    for (measurement, contended, src, dst, metric, pattern), (newest, n, lowest, highest) in groups.items():
        row = latest[(newest, metric)]
        cells.append(
            GridCell(
                measurement=measurement,
                contended=contended,
                src=src,
                dst=dst,
                metric=metric,
                latest=row.value,
                latest_id=newest,
                latest_repetition=int(row.repetition),
                latest_utc_ns=row.started_utc_ns,
                expected_max_bps=row.expected_max_bps,
                count=n,
                lowest=lowest,
                highest=highest,
                offered_bps=row.offered_bps,
                pattern=pattern,
            )
        )
    return cells


def _none_min(a: float | None, b: float | None) -> float | None:
    return b if a is None else a if b is None else min(a, b)


def _none_max(a: float | None, b: float | None) -> float | None:
    return b if a is None else a if b is None else max(a, b)


@dataclass(frozen=True)
class SeriesPoint:
    measurement_id: int
    repetition: int
    attempt: int
    status: str
    started_utc_ns: int | None
    duration_ns: int | None
    expected_max_bps: float | None
    factors: dict[str, Any]
    value: float | None  # the summary metric
    # the per-interval samples of the same quantity within this repetition (None: the tool gave none)
    sample_count: int
    sample_min: float | None
    sample_mean: float | None
    sample_max: float | None
    pattern: str = ""  # the spec's pattern that measured it (a pair may be measured by several)
    offered_bps: float | None = None  # a constant-rate flow's offered rate (a sweep's point), else None
    key: str = ""  # the plan's key: a sweep point's key ends with its suffix (/s18/p1000)
    group_kind: str = ""  # single | alone | together | parallel | background


def pair_series(
    engine: Engine,
    campaign_id: str,
    measurement: str,
    src: str,
    dst: str,
    metric: str,
    sample_metric: str | None,
    contended: bool = False,
    background_patterns: Collection[str] = (),
) -> list[SeriesPoint]:
    """Every stored attempt of one pair's measurement, oldest first, with its summary value and the
    count / min / mean / max of its per-interval samples (sample_stats, written with the samples)."""
    m, s, stats = t.measurements, t.summaries, t.sample_stats
    runs = (
        select(
            m.c.id,
            m.c.repetition,
            m.c.attempt,
            m.c.status,
            m.c.started_utc_ns,
            m.c.duration_ns,
            m.c.expected_max_bps,
            m.c.factors,
            m.c.pattern,
            m.c.offered_bps,
            m.c.key,
            m.c.group_kind,
        )
        .where(
            m.c.campaign_id == campaign_id,
            m.c.measurement == measurement,
            m.c.src == src,
            m.c.dst == dst,
            _contended(background_patterns) == (1 if contended else 0),
        )
        .subquery()
    )
    query = (
        select(
            runs,
            s.c.value,
            stats.c.value_count.label("n"),
            stats.c.value_min.label("lo"),
            stats.c.value_mean.label("mean"),
            stats.c.value_max.label("hi"),
        )
        .select_from(
            runs.outerjoin(s, and_(s.c.measurement_id == runs.c.id, s.c.metric == metric)).outerjoin(
                stats, and_(stats.c.measurement_id == runs.c.id, stats.c.metric == (sample_metric or ""))
            )
        )
        # an attempt that never started (no time) last on every backend: SQLite sorts NULL first,
        # PostgreSQL last
        .order_by(runs.c.started_utc_ns.asc().nulls_last(), runs.c.id)
    )
    with engine.connect() as conn:
        return [
            SeriesPoint(
                measurement_id=int(r.id),
                repetition=int(r.repetition),
                attempt=int(r.attempt),
                status=r.status,
                started_utc_ns=r.started_utc_ns,
                duration_ns=r.duration_ns,
                expected_max_bps=r.expected_max_bps,
                factors=r.factors or {},
                value=r.value,
                sample_count=int(r.n or 0),
                sample_min=r.lo,
                sample_mean=r.mean,
                sample_max=r.hi,
                pattern=r.pattern,
                offered_bps=r.offered_bps,
                key=r.key,
                group_kind=r.group_kind,
            )
            for r in conn.execute(query)
        ]


# What a sweep's cell needs of each point: its loss, what the sender managed and the path's capacity.
SWEEP_METRICS = ("loss_ratio", "achieved_pps", "received_pps", "path_pps_limit")


@dataclass(frozen=True)
class SweepRow:
    """One ok sweep point of a pair (a `pps` step): what its grid cell's knee is made of."""

    measurement_id: int
    key: str  # ends with the sweep point's suffix (/s18/p1000)
    step_key: str  # flows started together (tenants, a background flow) share it
    measurement: str
    pattern: str
    contended: bool
    src: str
    dst: str
    repetition: int
    factors: dict[str, Any]
    started_utc_ns: int | None
    offered_bps: float | None
    expected_max_bps: float | None  # the overhead model's most goodput of the path (its shaped links)
    values: dict[str, float | None]  # SWEEP_METRICS the point stored


def sweep_rows(
    engine: Engine,
    campaign_id: str,
    measurements: Collection[str],
    background_patterns: Collection[str] = (),
) -> list[SweepRow]:
    """Every ok row of these (sweep) measurements with its SWEEP_METRICS, oldest first: one row per
    point and repetition (openstack-bridges: 540), read by the pair index and the summaries' key."""
    if not measurements:
        return []
    m, s = t.measurements, t.summaries
    rows = (
        select(
            m.c.id,
            m.c.key,
            m.c.step_key,
            m.c.measurement,
            m.c.pattern,
            m.c.group_kind,
            m.c.src,
            m.c.dst,
            m.c.repetition,
            m.c.factors,
            m.c.started_utc_ns,
            m.c.offered_bps,
            m.c.expected_max_bps,
        )
        .where(
            m.c.campaign_id == campaign_id,
            m.c.measurement.in_(list(measurements)),
            m.c.status == "ok",
        )
        .order_by(m.c.started_utc_ns.asc().nulls_last(), m.c.id)  # the same on SQLite and PostgreSQL
    )
    with engine.connect() as conn:
        found = list(conn.execute(rows))
        values: dict[int, dict[str, float | None]] = {}
        ids = [int(r.id) for r in found]
        for chunk in range(0, len(ids), 500):  # a bounded IN list
            query = select(s.c.measurement_id, s.c.metric, s.c.value).where(
                s.c.measurement_id.in_(ids[chunk : chunk + 500]), s.c.metric.in_(SWEEP_METRICS)
            )
            for mid, metric, value in conn.execute(query):
                values.setdefault(int(mid), {})[metric] = value
    return [
        SweepRow(
            measurement_id=int(r.id),
            key=r.key,
            step_key=r.step_key,
            measurement=r.measurement,
            pattern=r.pattern,
            contended=r.group_kind in CONTENDED_GROUPS or r.pattern in background_patterns,
            src=r.src,
            dst=r.dst,
            repetition=int(r.repetition),
            factors=r.factors or {},
            started_utc_ns=r.started_utc_ns,
            offered_bps=r.offered_bps,
            expected_max_bps=r.expected_max_bps,
            values=values.get(int(r.id), {}),
        )
        for r in found
    ]


@dataclass(frozen=True)
class StepLoad:
    """What the flows of one step offered together: where they share a link, its capacity is theirs."""

    flows: int
    offered_bps: float | None  # None: a flow without an offered rate (a TCP flow)
    offered_pps: float | None  # None: a flow without a packet rate (target_pps) stored


def step_loads(engine: Engine, campaign_id: str, step_keys: Collection[str]) -> dict[str, StepLoad]:
    """Per step: its ok flows (a parallel pattern's tenants, a background flow beside a sweep point) and
    their offered rates summed, in bit/s and in packets/s (each flow's target_pps)."""
    m, s = t.measurements, t.summaries
    keys = sorted(step_keys)
    sums: dict[str, list[Any]] = {}
    with engine.connect() as conn:
        for chunk in range(0, len(keys), 500):  # a bounded IN list
            query = (
                select(m.c.step_key, m.c.offered_bps, s.c.value)
                .select_from(m.outerjoin(s, and_(s.c.measurement_id == m.c.id, s.c.metric == "target_pps")))
                .where(
                    m.c.campaign_id == campaign_id,
                    m.c.status == "ok",
                    m.c.step_key.in_(keys[chunk : chunk + 500]),
                )
            )
            for step_key, bps, pps in conn.execute(query):
                seen = sums.setdefault(step_key, [0, 0.0, 0.0])
                seen[0] += 1
                seen[1] = None if bps is None or seen[1] is None else seen[1] + bps
                seen[2] = None if pps is None or seen[2] is None else seen[2] + pps
    return {k: StepLoad(int(n), bps, pps) for k, (n, bps, pps) in sums.items()}


# The campaigns table without its spec text (a long-running store holds many campaigns).
_CAMPAIGN_COLUMNS = ("id", "name", "status", "created_utc_ns", "provider", "seed", "pid")


def campaign_rows(engine: Engine, campaign_id: str | None = None) -> list[dict[str, Any]]:
    """The campaigns, newest first (or the one with this exact id), without their spec text."""
    c = t.campaigns
    query = select(*(c.c[name] for name in _CAMPAIGN_COLUMNS)).order_by(c.c.created_utc_ns.desc())
    if campaign_id is not None:
        query = query.where(c.c.id == campaign_id)
    with engine.connect() as conn:
        return [dict(r._mapping) for r in conn.execute(query)]


def campaign_spec_row(engine: Engine, campaign_id: str) -> dict[str, Any] | None:
    """What it takes to re-read a campaign's spec and re-make its plan: id, seed, spec text and source."""
    c = t.campaigns
    query = select(c.c.id, c.c.seed, c.c.spec_text, c.c.spec_source).where(c.c.id == campaign_id)
    with engine.connect() as conn:
        row = conn.execute(query).first()
    return None if row is None else dict(row._mapping)
