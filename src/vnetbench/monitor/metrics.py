"""Prometheus /metrics: a custom collector that reads the store at every scrape (so any process that
can read the store serves the same numbers; nothing is kept in memory between scrapes).

    vnetbench_<metric>{campaign, campaign_id, measurement, src, dst}   latest value, base units
    vnetbench_monitor_runs_total{campaign, campaign_id, status}          runs ended ok / failed (a counter)
    vnetbench_monitor_runs_unfinished{campaign, campaign_id, status}     running / interrupted (a gauge)
    vnetbench_monitor_last_success_timestamp_seconds{campaign, campaign_id}
    vnetbench_monitor_alerts_firing{campaign, campaign_id, severity}
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterator

from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

from vnetbench.store.monitoring import MonitorStore

SERIES_LABELS = ["campaign", "campaign_id", "measurement", "src", "dst"]
ENDED = ("ok", "failed")  # a monitored run's final statuses
UNFINISHED = ("running", "interrupted")


# the unit a summary metric's name carries, in words for HELP (`_bps` is bits, not bytes, per second)
UNIT_WORDS = (
    ("_bps", "in bits per second"),
    ("_pps", "in packets per second"),
    ("_ns", "in nanoseconds"),
    ("_ratio", "as a ratio (0.01 = 1 %)"),
    ("_bytes", "in bytes"),
)


def help_text(metric: str) -> str:
    """HELP of a summary metric's family: what it is and, where its name carries one, its unit."""
    unit = next((words for suffix, words in UNIT_WORDS if metric.endswith(suffix)), None)
    if unit is None and metric.startswith("bytes_"):
        unit = "in bytes"
    return f"latest {metric} per campaign, pair and measurement" + (f", {unit}" if unit else "")


def metric_name(metric: str) -> str:
    """A summary metric (already named with its unit, e.g. throughput_bps) as a Prometheus name."""
    return "vnetbench_" + re.sub(r"[^a-zA-Z0-9_]", "_", metric)


class StoreCollector(Collector):
    def __init__(self, mstore: MonitorStore) -> None:
        self.mstore = mstore

    def collect(self) -> Iterator[Metric]:
        monitored = self.mstore.all_monitored()
        names = {m["campaign_id"]: m["name"] for m in monitored}
        families: dict[str, GaugeMetricFamily] = {}
        for v in self.mstore.latest_values(list(names)):
            name = metric_name(v.metric)
            if name not in families:
                families[name] = GaugeMetricFamily(name, help_text(v.metric), labels=SERIES_LABELS)
            families[name].add_metric([v.campaign, v.campaign_id, v.measurement, v.src, v.dst], v.value)
        yield from families.values()

        # A counter only of runs that ended: an ended run stays as it ended. A running run ends, and an
        # interrupted one is finished by the next monitor (its row becomes ok or failed): counted in a
        # counter they made it go down, which rate() and increase() read as a reset.
        runs = CounterMetricFamily(
            "vnetbench_monitor_runs",
            "monitored runs that ended, by how (ok; failed: a measurement failed)",
            labels=["campaign", "campaign_id", "status"],
        )
        unfinished = GaugeMetricFamily(
            "vnetbench_monitor_runs_unfinished",
            "monitored runs not ended: running, or interrupted (the campaign's next monitor finishes it)",
            labels=["campaign", "campaign_id", "status"],
        )
        by_status = self.mstore.run_counts()
        for cid in names:
            for status in ENDED:
                runs.add_metric([names[cid], cid, status], by_status.get(cid, {}).get(status, 0))
            for status in UNFINISHED:
                unfinished.add_metric([names[cid], cid, status], by_status.get(cid, {}).get(status, 0))
        yield runs
        yield unfinished

        success = GaugeMetricFamily(
            "vnetbench_monitor_last_success_timestamp_seconds",
            "when the latest run without a failed measurement ended (Unix time)",
            labels=["campaign", "campaign_id"],
        )
        for cid, ns in self.mstore.last_success_utc_ns().items():
            success.add_metric([names.get(cid, cid), cid], ns / 1e9)
        yield success

        firing = GaugeMetricFamily(
            "vnetbench_monitor_alerts_firing",
            "open alert episodes",
            labels=["campaign", "campaign_id", "severity"],
        )
        counts: dict[tuple[str, str], int] = defaultdict(int)
        for episode in self.mstore.open_episodes():
            counts[(episode["campaign_id"], episode["severity"])] += 1
        for cid in names:
            for severity in ("warning", "critical"):
                firing.add_metric([names[cid], cid, severity], counts.get((cid, severity), 0))
        yield firing
