"""Alert episodes, the webhook and /metrics against a real store, on SQLite and on PostgreSQL.

The values are written through the store's own API as runs of a monitored campaign; the expected
episodes follow from the rule by hand (loss > 1 % for 2 runs: runs 2-3 break it -> opens at 3 ...).
"""

from __future__ import annotations

import threading
import time
from types import SimpleNamespace
from typing import Any

import pytest
from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.parser import text_string_to_metric_families

from tests.helpers.capture import ping_capture
from tests.helpers.http import WebhookReceiver
from tests.helpers.stores import campaign_store, pair_record
from vnetbench.monitor import alerts, locks
from vnetbench.monitor.metrics import StoreCollector
from vnetbench.monitor.web import health
from vnetbench.spec.monitoring import AlertRule
from vnetbench.store.db import Store
from vnetbench.store.monitoring import MonitorStore, Series

LOSSY = AlertRule(name="lossy", measurement="udp", metric="loss_ratio", op=">", threshold="1%", for_runs=2)


def store_run(store: Store, run: int, loss: dict[tuple[str, str], float | None], cid: str = "c1") -> None:
    """One run of a monitored campaign: a udp measurement per pair (None: the measurement failed)."""
    mstore = MonitorStore(store)
    mstore.start_run(cid, run, run * 10**9, len(loss))
    records = [
        pair_record(
            cid,
            f"r{run:03d}/p/udp/{src}>{dst}",
            "udp",
            src,
            dst,
            seq=run,
            repetition=run,
            status="ok" if value is not None else "failed",
            started_utc_ns=run * 10**9,
            summary={} if value is None else {"loss_ratio": value, "throughput_bps": 9e7},
        )
        for (src, dst), value in loss.items()
    ]
    store.save_measurements(records)
    mstore.finish_run(cid, run, "ok" if all(v is not None for v in loss.values()) else "failed")


@pytest.fixture
def monitored(store_url: str) -> Any:
    store = campaign_store(store_url, status="monitoring")
    MonitorStore(store).register("c1", "name: t", "tests", pid=0)
    yield store, MonitorStore(store)
    store.close()


def test_an_episode_opens_once_after_for_runs_and_closes_at_the_first_good_run(monitored) -> None:
    store, mstore = monitored
    ab, ac = ("a", "b"), ("a", "c")
    # run:      1      2      3      4      5      6      7      8
    a_b = [0.0, 0.02, 0.03, 0.05, 0.0, 0.02, 0.02, 0.02]  # breaks at 2-4 and 6-8
    a_c = [0.02, 0.0, 0.02, None, 0.02, 0.0, 0.0, 0.0]  # never 2 in a row (run 4 failed)
    states = []
    for run in range(1, 9):
        store_run(store, run, {ab: a_b[run - 1], ac: a_c[run - 1]})
        states += [(run, c.state, c.series.dst) for c in alerts.evaluate(mstore, "c1", [LOSSY], run)]
    assert states == [(3, "firing", "b"), (5, "resolved", "b"), (7, "firing", "b")]
    episodes = sorted(mstore.episodes("c1"), key=lambda e: e["id"])
    assert [(e["opened_run"], e["closed_run"], e["value"]) for e in episodes] == [
        (3, 5, 0.03),
        (7, None, 0.02),
    ]
    assert episodes[0]["condition"] == "loss_ratio > 1.00 % for 2 runs" and episodes[0]["threshold"] == 0.01
    assert [Series(e["measurement"], e["src"], e["dst"]) for e in mstore.open_episodes("c1")] == [
        Series("udp", "a", "b")
    ]
    # evaluating the same run again (a restarted monitor) changes nothing: one episode, one message
    assert alerts.evaluate(mstore, "c1", [LOSSY], 8) == []
    # a rule removed from the spec releases its open episode
    assert [c.state for c in alerts.evaluate(mstore, "c1", [], 8)] == ["resolved"]
    assert mstore.open_episodes("c1") == []


def test_the_monitor_says_an_alerts_rule_threshold_runs_and_value_in_the_metrics_unit(monitored) -> None:
    # it said "alert firing: lossy on udp a→b (value 3.40 %)": not what the value broke, nor over
    # how many runs, nor which run the value is from
    from rich.console import Console

    from vnetbench.monitor.service import Monitor

    store, mstore = monitored
    console = Console(record=True, width=200)
    monitor = Monitor.__new__(Monitor)  # only what _check_alerts uses: no topology, no schedule
    campaign = SimpleNamespace(alerts=[LOSSY], measurements=[])
    monitor.mstore, monitor.webhook, monitor.console, monitor.warned_rules = mstore, None, console, set()
    monitor.m = SimpleNamespace(campaign_id="c1", name="t", loaded=SimpleNamespace(campaign=campaign))
    for run in (1, 2):
        store_run(store, run, {("a", "b"): 0.034})
        monitor._check_alerts(run)
    store_run(store, 3, {("a", "b"): 0.0})
    monitor._check_alerts(3)
    for run in (4, 5):
        store_run(store, run, {("a", "b"): 0.02})
        monitor._check_alerts(run)
    monitor.m.loaded.campaign.alerts = []  # the rule taken out of the spec: its episode resolves
    monitor._check_alerts(5)
    lines = [line for line in console.export_text().splitlines() if "alert " in line]
    assert lines == [
        "t/c1: alert firing: lossy on udp a→b: loss_ratio > 1.00 % for 2 runs (value 3.40 % in run 2)",
        "t/c1: alert resolved: lossy on udp a→b: loss_ratio > 1.00 % for 2 runs (value 0 % in run 3)",
        "t/c1: alert firing: lossy on udp a→b: loss_ratio > 1.00 % for 2 runs (value 2.00 % in run 5)",
        "t/c1: alert resolved: lossy on udp a→b: loss_ratio > 1.00 % for 2 runs (rule no longer in the spec)",
    ], lines


def test_a_rule_on_a_metric_its_kind_can_produce_but_no_run_stored_is_said_once(monitored) -> None:
    # a metric no kind can produce (a typo) is refused before the first run (check_monitorable); one
    # the kind can produce but this campaign does not store (udp's run_packets_sent needs omit) is
    # only seen after a run
    from rich.console import Console

    from vnetbench.monitor.service import Monitor

    store, mstore = monitored
    unstored = AlertRule(name="sent", measurement="udp", metric="run_packets_sent", op="<", threshold=1)
    anywhere = AlertRule(name="late", metric="late_replies", op=">", threshold=0)
    console = Console(record=True, width=300)
    monitor = Monitor.__new__(Monitor)  # only what _check_alerts uses
    udp = SimpleNamespace(name="udp", kind="udp")
    campaign = SimpleNamespace(alerts=[LOSSY, unstored, anywhere], measurements=[udp])
    monitor.mstore, monitor.webhook, monitor.console, monitor.warned_rules = mstore, None, console, set()
    monitor.m = SimpleNamespace(campaign_id="c1", name="t", loaded=SimpleNamespace(campaign=campaign))
    for run in (1, 2):
        store_run(store, run, {("a", "b"): 0.0})
        monitor._check_alerts(run)
    text = console.export_text()
    assert text.count("matched nothing") == 2, text  # once per rule, not after every run
    assert (
        "alert rule 'sent' matched nothing: measurement udp stored no 'run_packets_sent' in run 1 (its "
        "kind can produce it, but not as this campaign measures it); the metrics stored: loss_ratio, "
        "throughput_bps (docs/drivers.md says when each is stored)"
    ) in text
    assert "alert rule 'late' matched nothing: no measurement stored a 'late_replies' in run 1" in text
    assert "'lossy'" not in text
    # a measurement with no ok result in the run says nothing about its metrics, nor, for a rule on
    # every measurement, about a metric only it (here rtt, a ping) could have stored
    assert alerts.unproduced_rules([unstored], {}, 3) == {}
    kinds = {"udp": "udp", "rtt": "rtt"}
    assert alerts.unproduced_rules([anywhere], {"udp": {"loss_ratio"}}, 3, kinds) == {}
    assert list(
        alerts.unproduced_rules([anywhere], {"udp": {"loss_ratio"}, "rtt": {"rtt_mean_ns"}}, 3, kinds)
    ) == ["late"]


def test_a_metric_stored_without_a_value_is_not_counted_as_stored(monitored) -> None:
    # run_metrics counted a NULL row as stored: a rule on rtt_p95_ns looked satisfied after a run where
    # every ping was lost, though alerts.evaluate skips NULLs, so the rule had matched nothing
    from vnetbench.drivers import ping

    store, mstore = monitored
    out, _ = ping_capture("ping_total_loss")  # 5 requests into a blackhole route: no reply at all
    summary = ping.parse(out).summary
    mstore.start_run("c1", 1, 10**9, 1)
    record = pair_record(
        "c1", "r001/p/rtt/a>b", "rtt", "a", "b", seq=1, started_utc_ns=10**9, summary=summary
    )
    store.save_measurements([record])
    valued, every = mstore.run_metrics("c1", 1), mstore.run_metrics("c1", 1, valued=False)
    # docs/drivers.md: the rtt_* statistics need a reply (rtt_mdev_ns is ping's own, absent without one)
    assert valued == {
        "rtt": {
            "duplicate_replies",
            "late_replies",
            "loss_ratio",
            "received_packets",
            "sent_packets",
            "unreachable_events",
        }
    }, valued
    assert every["rtt"] - valued["rtt"] == {
        "rtt_max_ns",
        "rtt_mdev_ns",
        "rtt_mean_ns",
        "rtt_median_ns",
        "rtt_min_ns",
        "rtt_p95_ns",
        "rtt_p99_ns",
        "rtt_sd_ns",
    }
    far = AlertRule(name="far", measurement="rtt", metric="rtt_p95_ns", op=">", threshold="60ms")
    assert alerts.evaluate(mstore, "c1", [far], 1) == []
    stored = "duplicate_replies, late_replies, loss_ratio, received_packets, sent_packets, unreachable_events"
    assert alerts.unproduced_rules([far], valued, 1, {"rtt": "rtt"}, every) == {
        "far": "alert rule 'far' matched nothing: measurement rtt stored 'rtt_p95_ns' without a value in "
        "run 1 (what it is computed from was not measured in that run, e.g. an RTT percentile with every "
        f"request lost); the metrics stored with a value: {stored} (docs/drivers.md says when each is stored)"
    }


def test_the_webhook_gets_one_firing_and_one_resolved_message_per_episode(monitored) -> None:
    store, mstore = monitored
    receiver = WebhookReceiver()
    try:
        for run, loss in enumerate([0.02, 0.02, 0.02, 0.0, 0.0], start=1):
            store_run(store, run, {("a", "b"): loss})
            alerts.evaluate(mstore, "c1", [LOSSY], run)
            assert alerts.notify(mstore, "c1", "t", receiver.url) == []
        assert [(b["status"], b["opened_run"], b["closed_run"]) for b in receiver.bodies] == [
            ("firing", 2, None),
            ("resolved", 2, 4),
        ]
        first = receiver.bodies[0]
        assert (first["alert"], first["campaign"], first["src"], first["dst"], first["value"]) == (
            "lossy",
            "t",
            "a",
            "b",
            0.02,
        )
    finally:
        receiver.close()
    assert mstore.unnotified("c1") == []


def test_a_webhook_that_is_down_gets_the_messages_later_in_order(monitored) -> None:
    store, mstore = monitored
    failing = WebhookReceiver(status=500)
    for run, loss in enumerate([0.02, 0.02, 0.0], start=1):
        store_run(store, run, {("a", "b"): loss})
        alerts.evaluate(mstore, "c1", [LOSSY], run)
        problems = alerts.notify(mstore, "c1", "t", failing.url)
    failing.close()
    assert problems and "500" in problems[0]
    receiver = WebhookReceiver()
    try:
        assert alerts.notify(mstore, "c1", "t", receiver.url) == []
        assert [b["status"] for b in receiver.bodies] == ["firing", "resolved"]
    finally:
        receiver.close()


def _runs_scraped(mstore: MonitorStore) -> tuple[dict[str, float], dict[str, float]]:
    """(the runs counter by status, the unfinished-runs gauge by status) as Prometheus reads them."""
    registry = CollectorRegistry(auto_describe=False)
    registry.register(StoreCollector(mstore))
    families = {f.name: f for f in text_string_to_metric_families(generate_latest(registry).decode())}
    ended = families["vnetbench_monitor_runs"]
    assert ended.type == "counter"
    gauge = families["vnetbench_monitor_runs_unfinished"]
    assert gauge.type == "gauge"
    return (
        {s.labels["status"]: s.value for s in ended.samples if s.name.endswith("_total")},
        {s.labels["status"]: s.value for s in gauge.samples},
    )


def test_the_runs_counter_never_goes_down_while_a_run_is_interrupted_and_finished(monitored) -> None:
    # was: one counter of every status, so `running` went 1 -> gone when a run ended and `interrupted`
    # 1 -> 0 when the next monitor finished that run: a counter going down, read by rate() as a reset
    store, mstore = monitored
    store_run(store, 1, {("a", "b"): 0.0})
    scrapes = [_runs_scraped(mstore)]
    mstore.start_run("c1", 2, 2 * 10**9, 1)
    scrapes.append(_runs_scraped(mstore))
    mstore.finish_run("c1", 2, "interrupted", "stopped by a signal during the run")
    scrapes.append(_runs_scraped(mstore))
    store_run(store, 2, {("a", "b"): 0.0})  # the next monitor runs it again and it ends ok
    scrapes.append(_runs_scraped(mstore))
    assert scrapes == [
        ({"ok": 1, "failed": 0}, {"running": 0, "interrupted": 0}),
        ({"ok": 1, "failed": 0}, {"running": 1, "interrupted": 0}),
        ({"ok": 1, "failed": 0}, {"running": 0, "interrupted": 1}),
        ({"ok": 2, "failed": 0}, {"running": 0, "interrupted": 0}),
    ]


def test_metrics_show_the_latest_value_per_pair_runs_and_alerts(monitored) -> None:
    store, mstore = monitored
    for run, loss in enumerate([0.0, 0.02, 0.03], start=1):
        store_run(store, run, {("a", "b"): loss, ("a", "c"): 0.001 * run})
        alerts.evaluate(mstore, "c1", [LOSSY], run)
    store_run(store, 4, {("a", "b"): 0.04, ("a", "c"): None})  # a->c failed: its latest stays run 3's
    registry = CollectorRegistry(auto_describe=False)
    registry.register(StoreCollector(mstore))
    families = {f.name: f for f in text_string_to_metric_families(generate_latest(registry).decode())}
    loss = {(s.labels["src"], s.labels["dst"]): s.value for s in families["vnetbench_loss_ratio"].samples}
    assert loss == {("a", "b"): 0.04, ("a", "c"): 0.003}
    sample = families["vnetbench_loss_ratio"].samples[0]
    assert {k: sample.labels[k] for k in ("campaign", "campaign_id", "measurement")} == {
        "campaign": "t",
        "campaign_id": "c1",
        "measurement": "udp",
    }
    runs = {
        s.labels["status"]: s.value
        for s in families["vnetbench_monitor_runs"].samples
        if s.name.endswith("_total")
    }
    assert runs == {"ok": 3, "failed": 1}
    # HELP says the unit the name carries: it said "latest throughput_bps per campaign, pair and
    # measurement", and _bps reads as bytes per second as easily as bits
    assert families["vnetbench_throughput_bps"].documentation == (
        "latest throughput_bps per campaign, pair and measurement, in bits per second"
    )
    assert families["vnetbench_loss_ratio"].documentation == (
        "latest loss_ratio per campaign, pair and measurement, as a ratio (0.01 = 1 %)"
    )
    success = families["vnetbench_monitor_last_success_timestamp_seconds"].samples[0].value
    assert abs(success - time.time()) < 60
    firing = {s.labels["severity"]: s.value for s in families["vnetbench_monitor_alerts_firing"].samples}
    assert firing == {"warning": 1, "critical": 0}
    body = health(mstore)
    # a warning is firing, but the latest run failed a measurement: failing outranks warning
    assert body["status"] == "failing"
    assert body["campaigns"][0]["last_run"]["run"] == 4 and body["campaigns"][0]["alerts_firing"] == 1


def test_a_throughput_step_waits_for_the_lock_an_rtt_step_needs_none(tmp_path) -> None:
    from vnetbench.plan import Step

    def step(kind: str) -> Step:
        return Step("k", 0, 0, {}, 1, "p", "pairs", "single", kind, kind, (), False, 0, 0)

    from vnetbench.spec.loader import parse_spec

    campaign = parse_spec(
        "name: x\ntopology: {nodes: [{name: a}, {name: b}], links: [{endpoints: [a, b]}]}\nmeasurements: [{name: t, kind: tcp}]\n"
        "patterns: [{kind: pairs, pairs: [[a, b]], measurements: [t]}]\n",
        "x.yaml",
    ).campaign
    assert locks.resources(campaign, step("rtt")) == []
    assert locks.resources(campaign, step("tcp")) == ["local"]
    order: list[str] = []

    def second() -> None:
        with locks.holding(["local"], str(tmp_path)):
            order.append("second")

    with locks.holding(["local"], str(tmp_path)):
        waiter = threading.Thread(target=second)
        waiter.start()
        time.sleep(0.3)  # give the waiter the chance to (wrongly) get the lock
        order.append("first released")
    waiter.join(10)
    assert order == ["first released", "second"]


def test_on_ssh_the_lock_is_each_physical_host_or_address_of_the_flow() -> None:
    from vnetbench.plan import Flow, Step
    from vnetbench.spec.models import Campaign

    campaign = Campaign.model_validate(
        {
            "name": "c",
            "topology": {
                "nodes": [{"name": "client"}, {"name": "vm2"}],
                "links": [{"endpoints": ["client", "vm2"]}],
            },
            "measurements": [{"name": "tcp", "kind": "tcp"}],
            "patterns": [{"kind": "pairs", "pairs": [["client", "vm2"]], "measurements": ["tcp"]}],
            "inventory": {
                "hosts": [
                    {"name": "vm1", "address": "10.0.0.11", "physical_host": "r1"},
                    {"name": "vm2", "address": "vm2.example"},
                ],
                "nodes": {"client": "vm1"},
            },
        }
    )
    flows = (Flow("k", "client", "vm2"),)
    tcp = Step("k", 0, 0, {}, 1, "p", "pairs", "single", "tcp", "tcp", flows, False, 0, 0)
    assert locks.resources(campaign, tcp) == ["ssh-r1", "ssh-vm2.example"]


def test_a_webhook_that_redirects_is_not_followed_and_its_messages_wait(monitored) -> None:
    # urllib followed a 301 with a GET (no JSON) to the new address, took its 200 as delivery and marked
    # the episode notified: the receiver never got it, and a request went to a URL not given as --webhook
    store, mstore = monitored
    moved = WebhookReceiver(status=301, location="/elsewhere")
    try:
        for run in (1, 2):
            store_run(store, run, {("a", "b"): 0.02})
            alerts.evaluate(mstore, "c1", [LOSSY], run)
        problems = alerts.notify(mstore, "c1", "t", moved.url)
        assert problems == [
            f"webhook {moved.url}: HTTP Error 301: Moved Permanently, to "
            f"{moved.url.removesuffix('/hook')}/elsewhere; give that URL as --webhook"
        ]
        assert moved.gets == [] and [b["status"] for b in moved.bodies] == ["firing"]
    finally:
        moved.close()
    assert [e["notified_utc_ns"] for e in mstore.unnotified("c1")] == [None]  # sent again after a run
