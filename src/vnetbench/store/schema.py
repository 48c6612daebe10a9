"""The store's tables (SQLAlchemy Core). SQLite by default; PostgreSQL by URL.

Conventions: times are integer nanoseconds (`*_ns`; `*_utc_ns` for wall-clock instants, otherwise
monotonic durations or offsets), metric names carry their unit (`throughput_bps`, `rtt_ns`,
`loss_ratio`), and raw tool output is kept next to every parsed value.
"""

from __future__ import annotations

from sqlalchemy import (
    JSON,
    BigInteger,
    Column,
    Float,
    ForeignKey,
    Index,
    Integer,
    MetaData,
    String,
    Table,
    Text,
    UniqueConstraint,
)

metadata = MetaData()

SCHEMA_VERSION = 1

campaigns = Table(
    "campaigns",
    metadata,
    Column("id", String(16), primary_key=True),  # short id, part of every kernel object's name
    Column("name", String(64), nullable=False),
    Column("created_utc_ns", BigInteger, nullable=False),
    Column("status", String(16), nullable=False),  # running | interrupted | finished | failed
    Column("provider", String(32), nullable=False),
    Column("spec_text", Text, nullable=False),
    Column("spec_sha256", String(64), nullable=False),
    Column("spec_source", Text, nullable=False),
    Column("seed", BigInteger, nullable=False),
    Column("environment", JSON, nullable=False),  # kernel, hostname, vnetbench version, cpu count ...
    Column("tool_versions", JSON, nullable=False),
    Column("pid", Integer),  # of the controlling vnetbench process, while it runs
)

# Every kernel object we create, recorded before it is created; `clean` deletes only these.
objects = Table(
    "objects",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("campaign_id", String(16), ForeignKey("campaigns.id"), nullable=False),
    Column("build_id", Integer),
    Column("kind", String(16), nullable=False),  # netns | cgroup | process | rundir
    Column("name", Text, nullable=False),
    Column("details", JSON, nullable=False),
    Column("created_utc_ns", BigInteger, nullable=False),
    Column("removed_utc_ns", BigInteger),
)

# One row per topology build (a rebuild-from-scratch campaign has one per repetition).
builds = Table(
    "builds",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("campaign_id", String(16), ForeignKey("campaigns.id"), nullable=False),
    Column("ordinal", Integer, nullable=False),
    Column("topology_key", String(64), nullable=False),
    Column("started_utc_ns", BigInteger, nullable=False),
    Column("build_ns", BigInteger),
    Column("teardown_ns", BigInteger),
    Column("layout", JSON, nullable=False),  # namespaces, addresses, shapers: what was built
)

# One row per flow measured (a tool invocation), or per attempt when a measurement is retried.
measurements = Table(
    "measurements",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("campaign_id", String(16), ForeignKey("campaigns.id"), nullable=False),
    Column("key", Text, nullable=False),  # stable id from the plan: resume skips keys already done
    Column("attempt", Integer, nullable=False, default=1),
    Column("step_key", Text, nullable=False),  # flows started together share a step
    Column("seq", Integer, nullable=False),  # position in the plan
    Column("build_id", Integer, ForeignKey("builds.id")),
    Column("repetition", Integer, nullable=False),
    Column("factors", JSON, nullable=False),  # factor name -> level
    Column("pattern", String(64), nullable=False),
    Column("pattern_kind", String(16), nullable=False),
    Column("group_kind", String(16), nullable=False),  # single | alone | together
    Column("group_size", Integer, nullable=False),
    Column("measurement", String(64), nullable=False),
    Column("kind", String(16), nullable=False),  # tcp | udp | rtt | pps | trace | cpushare
    Column("src", String(64), nullable=False),
    Column("dst", String(64), nullable=False),
    Column("src_host", String(64)),
    Column("dst_host", String(64)),
    Column("placement", String(16), nullable=False),  # same-host | same-site | cross-site
    Column("link_rate_bps", BigInteger),  # bottleneck rate of the path, when shaped
    Column("path_mtu", Integer),
    Column("expected_max_bps", Float),  # overhead-model maximum goodput for this measurement
    Column("offered_bps", Float),  # for UDP and packet-rate measurements
    Column("status", String(16), nullable=False),  # ok | failed
    Column("reason", Text),  # why it failed, in words a user can act on
    Column("tool", String(32)),
    Column("tool_version", String(64)),
    Column("command", JSON),  # exact argv of client and server
    Column("started_utc_ns", BigInteger),
    Column("duration_ns", BigInteger),
    Column("start_skew_ns", BigInteger),  # spread of the barrier release within the step
    Column("start_offset_ns", BigInteger),  # this flow's release after the step's first
    UniqueConstraint("campaign_id", "key", "attempt", name="uq_measurement_attempt"),
)
Index("ix_measurements_campaign_status", measurements.c.campaign_id, measurements.c.status)
# One pair's series and the dashboard's grid (store/live.py) read a campaign's rows pair by pair.
ix_measurements_pair = Index(
    "ix_measurements_pair",
    measurements.c.campaign_id,
    measurements.c.measurement,
    measurements.c.src,
    measurements.c.dst,
)

# Scalar results of a measurement (its end summary).
summaries = Table(
    "summaries",
    metadata,
    Column("measurement_id", Integer, ForeignKey("measurements.id"), primary_key=True),
    Column("metric", String(64), primary_key=True),
    Column("value", Float),
)

# Time series: per-interval throughput, per-packet RTT ... `t_ns` is the offset from the flow's start.
samples = Table(
    "samples",
    metadata,
    Column("measurement_id", Integer, ForeignKey("measurements.id"), nullable=False),
    Column("t_ns", BigInteger, nullable=False),
    Column("metric", String(64), nullable=False),
    Column("value", Float),
    Column("seq", Integer),  # sequence number where the tool gives one (ping icmp_seq)
    Column("stream", Integer),  # iperf3 stream, probe stream id
)
Index("ix_samples_measurement", samples.c.measurement_id, samples.c.metric)

# Per measurement and sampled metric: count, min, mean and max of its samples, written with them. A pair's
# series over a long campaign reads these (store/live.py) instead of aggregating its samples per request.
sample_stats = Table(
    "sample_stats",
    metadata,
    Column("measurement_id", Integer, ForeignKey("measurements.id"), primary_key=True),
    Column("metric", String(64), primary_key=True),
    Column("value_count", Integer, nullable=False),  # samples with a value
    Column("value_min", Float),
    Column("value_mean", Float),
    Column("value_max", Float),
)

# Things that happened during a measurement: unreachable replies, tool warnings, timeouts.
events = Table(
    "events",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("measurement_id", Integer, ForeignKey("measurements.id")),
    Column("campaign_id", String(16), ForeignKey("campaigns.id"), nullable=False),
    Column("t_ns", BigInteger),
    Column("kind", String(32), nullable=False),
    Column("detail", Text),
)

# Raw tool output, kept so a parser bug never loses a measurement.
raw_outputs = Table(
    "raw_outputs",
    metadata,
    Column("measurement_id", Integer, ForeignKey("measurements.id"), primary_key=True),
    Column("role", String(16), primary_key=True),  # client | server
    Column("stream", String(8), primary_key=True),  # stdout | stderr
    Column("text", Text, nullable=False),
)

meta = Table(
    "vnetbench_meta",
    metadata,
    Column("key", String(64), primary_key=True),
    Column("value", Text, nullable=False),
)

# Telemetry (issue 5): host and kernel counters sampled during a measurement, and the flow's path.
telemetry_runs = Table(
    "telemetry_runs",
    metadata,
    Column("measurement_id", Integer, ForeignKey("measurements.id"), primary_key=True),
    Column("started_utc_ns", BigInteger, nullable=False),  # the baseline reading (t_ns = 0)
    Column("interval_ns", BigInteger, nullable=False),
    Column("duration_ns", BigInteger),
    Column("readings", Integer, nullable=False),
    Column("sampler_cpu_ns", BigInteger),  # the sampler thread's own CPU time
    Column("path", JSON),  # telemetry.path.FlowPath.to_json(): every hop, in order
    Column("fragments_per_datagram", Integer),  # IPv4 fragments per UDP datagram on this path
    Column("errors", JSON),  # sources that could not be read
)

# Counter deltas since the previous reading (zero deltas left out), or gauges as read (backlog_bytes,
# qlen_packets). scope: cpu | cpuN | softnet | proc:client | proc:server | snmp:NS | if:NS/IF |
# qdisc:NS/IF/KIND:HANDLE.
telemetry = Table(
    "telemetry",
    metadata,
    Column("measurement_id", Integer, ForeignKey("measurements.id"), nullable=False),
    Column("t_ns", BigInteger, nullable=False),  # after the baseline reading
    Column("scope", String(160), nullable=False),
    Column("metric", String(64), nullable=False),
    Column("value", Float, nullable=False),
)
Index("ix_telemetry_measurement", telemetry.c.measurement_id, telemetry.c.scope)

# Packet captures taken during a measurement (telemetry.capture in the spec).
captures = Table(
    "captures",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("measurement_id", Integer, ForeignKey("measurements.id"), nullable=False),
    Column("node", String(64), nullable=False),
    Column("interface", String(32), nullable=False),
    Column("file", Text, nullable=False),  # pcap path
    Column("snaplen_bytes", Integer, nullable=False),
    Column("packet_cap", Integer, nullable=False),
    Column("size_bytes", BigInteger),
)

# The dashboard's grid: one pass over a campaign's ok rows, covered by this index (no table lookups).
# With the pattern: a contended cell is one pattern's (lb-2tenants and lb-4tenants are not averaged). A
# store made before it keeps its older index without the pattern (ix_measurements_grid), unused.
ix_measurements_grid = Index(
    "ix_measurements_grid_pattern",
    measurements.c.campaign_id,
    measurements.c.status,
    measurements.c.measurement,
    measurements.c.group_kind,
    measurements.c.src,
    measurements.c.dst,
    measurements.c.pattern,
)

# Indexes added after stores were already in use: created on open when missing (store/live.py).
LIVE_INDEXES = (ix_measurements_pair, ix_measurements_grid)

# ---- The monitor (issue 16): campaigns run on a schedule, their runs, and alert episodes.
# A monitored campaign is one campaign; run n of the monitor is repetition n of its measurements.
monitored_campaigns = Table(
    "monitored_campaigns",
    metadata,
    Column("campaign_id", String(16), ForeignKey("campaigns.id"), primary_key=True),
    Column("spec_text", Text, nullable=False),  # as last started: its monitor schedule and alert rules
    Column("spec_source", Text, nullable=False),
    Column("state", String(16), nullable=False),  # waiting | running | stopped | finished | failed
    Column("pid", Integer),  # of the monitor process, while it runs
    Column("hostname", String(255)),
    Column("next_run_utc_ns", BigInteger),
    Column("url", Text),  # where that monitor serves /metrics and /health
    Column("message", Text),  # why it stopped or failed, in words a user can act on
    Column("updated_utc_ns", BigInteger, nullable=False),
)

# The campaign monitors of a name continue: one row per name, set by compare-and-set when a monitor
# creates that name's campaign (MonitorStore.name_campaign), so monitors started at once on a store
# without it agree on one campaign instead of each creating its own.
monitor_names = Table(
    "monitor_names",
    metadata,
    Column("name", String(64), primary_key=True),  # campaigns.name
    Column("campaign_id", String(16), ForeignKey("campaigns.id"), nullable=False),
)

monitor_runs = Table(
    "monitor_runs",
    metadata,
    Column("campaign_id", String(16), ForeignKey("campaigns.id"), primary_key=True),
    Column("run", Integer, primary_key=True),  # = the repetition of the run's measurements
    Column("scheduled_utc_ns", BigInteger, nullable=False),  # the slot, before the random slip
    Column("started_utc_ns", BigInteger, nullable=False),
    Column("finished_utc_ns", BigInteger),
    Column("status", String(16), nullable=False),  # running | ok | failed | interrupted
    Column("steps_total", Integer, nullable=False),
    Column("steps_done", Integer, nullable=False),
    Column("flows_ok", Integer, nullable=False),
    Column("flows_failed", Integer, nullable=False),
    Column("message", Text),
)

# One row per episode of an alert rule on one series (measurement, src, dst): opened when the rule
# fires, closed when a run no longer breaks it. At most one open episode per rule and series.
alert_episodes = Table(
    "alert_episodes",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("campaign_id", String(16), ForeignKey("campaigns.id"), nullable=False),
    Column("rule", String(64), nullable=False),
    Column("severity", String(16), nullable=False),  # warning | critical
    Column("condition", Text, nullable=False),  # e.g. loss_ratio > 0.01 for 3 runs
    Column("measurement", String(64), nullable=False),
    Column("src", String(64), nullable=False),
    Column("dst", String(64), nullable=False),
    Column("metric", String(64), nullable=False),
    Column("threshold", Float, nullable=False),
    Column("opened_run", Integer, nullable=False),
    Column("opened_utc_ns", BigInteger, nullable=False),
    Column("value", Float),  # the value of the run that opened it
    Column("closed_run", Integer),
    Column("closed_utc_ns", BigInteger),
    Column("notified_utc_ns", BigInteger),  # webhook accepted the 'firing' message
    Column("resolved_notified_utc_ns", BigInteger),  # ... and the 'resolved' one
)
_OPEN = alert_episodes.c.closed_run.is_(None)
Index(
    "uq_alert_episode_open",
    alert_episodes.c.campaign_id,
    alert_episodes.c.rule,
    alert_episodes.c.measurement,
    alert_episodes.c.src,
    alert_episodes.c.dst,
    unique=True,
    sqlite_where=_OPEN,
    postgresql_where=_OPEN,
)
