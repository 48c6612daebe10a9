"""The monitor's pure parts: spec blocks, when the next run starts, and which keys run n measures."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest

from tests.helpers.specs import FOUR_NODE_STAR, MONITORED_SPEC
from tests.helpers.timing import wait_until
from vnetbench.monitor.runs import next_run, run_plan
from vnetbench.monitor.schedule import Limits, next_slot, slip_ns
from vnetbench.monitor.service import check_monitorable
from vnetbench.plan import make_plan
from vnetbench.spec.loader import SpecInvalid, parse_spec
from vnetbench.spec.monitoring import AlertRule, MonitorSchedule, parse_period_ns
from vnetbench.store.monitoring import MonitorStore

S = 10**9


@pytest.mark.parametrize(
    ("text", "ns"),
    [
        ("PT10M", 600 * S),
        ("PT1H", 3600 * S),
        ("P1D", 86400 * S),
        ("PT0.5S", S // 2),
        ("10m", 600 * S),
        ("2s", 2 * S),
    ],
)
def test_repeat_accepts_iso_8601_and_the_specs_own_durations(text: str, ns: int) -> None:
    assert parse_period_ns(text) == ns


def test_a_schedule_needs_exactly_one_of_repeat_and_cron_and_a_valid_cron() -> None:
    with pytest.raises(ValueError, match="exactly one of repeat"):
        MonitorSchedule()
    with pytest.raises(ValueError, match="exactly one of repeat"):
        MonitorSchedule(repeat="PT1M", cron="* * * * *")
    with pytest.raises(ValueError, match="not a cron rule"):
        MonitorSchedule(cron="every minute")
    with pytest.raises(ValueError, match="not a duration"):
        MonitorSchedule(repeat="PT10X")
    assert MonitorSchedule(cron="*/10 * * * *").cron == "*/10 * * * *"


@pytest.mark.parametrize(("field", "value"), [("repeat", "-PT25S"), ("repeat", "-5m"), ("slip", -30)])
def test_a_negative_repeat_or_slip_is_said_to_be_negative(field: str, value) -> None:
    # it said "monitor.repeat: '-5m' is not a duration; expected ...": it is one, but negative
    block = (
        f"monitor: {{repeat: {value}}}" if field == "repeat" else f"monitor: {{repeat: PT10M, slip: {value}}}"
    )
    spec = MONITORED_SPEC.replace("monitor: {repeat: PT10M, slip: 30s}", block)
    with pytest.raises(SpecInvalid) as caught:
        parse_spec(spec, "mon.yaml")
    assert (
        f"monitor.{field}: must not be negative, got {value!r}; expected an ISO-8601 duration like PT10M, "
        "PT1H or P1D, or a duration like 10m, 1h (a bare number is seconds)"
    ) in str(caught.value), str(caught.value)


@pytest.mark.parametrize(
    ("metric", "threshold", "value"),
    [
        ("loss_ratio", "1%", 0.01),
        ("throughput_bps", "90mbit", 90e6),
        ("rtt_mean_ns", "5ms", 5e6),
        ("x", 3, 3.0),
    ],
)
def test_alert_thresholds_are_read_in_the_unit_the_metric_name_carries(
    metric: str, threshold, value: float
) -> None:
    rule = AlertRule(name="r", metric=metric, op=">", threshold=threshold)
    assert rule.threshold == pytest.approx(value)
    assert rule.breaks(value * 1.01) and not rule.breaks(value)


@pytest.mark.parametrize(
    ("metric", "op", "threshold", "shown"),
    [
        ("throughput_bps", "<", "30mbit", "throughput_bps < 30.00 Mbit/s for 2 runs"),
        ("loss_ratio", ">", "0.5%", "loss_ratio > 0.500 % for 2 runs"),
        ("rtt_p95_ns", ">", "60ms", "rtt_p95_ns > 60.0 ms for 2 runs"),
    ],
)
def test_a_rules_condition_shows_its_threshold_in_the_metrics_unit(
    metric: str, op: str, threshold: str, shown: str
) -> None:
    # the dashboard's alert list, /health and the webhook show this text: not 'throughput_bps < 3e+07'
    assert AlertRule(name="r", metric=metric, op=op, threshold=threshold, for_runs=2).describe() == shown


def test_a_bad_monitor_spec_is_a_located_error_with_the_fix() -> None:
    bad = MONITORED_SPEC.replace(
        "monitor: {repeat: PT10M, slip: 30s}", "monitor: {repeat: PT10M}\nschedule: {repetitions: 3}"
    )
    bad += "alerts:\n  - {name: x, measurement: udp, metric: loss_ratio, op: '>', threshold: 1%}\n"
    with pytest.raises(SpecInvalid) as caught:
        check_monitorable(parse_spec(bad, "mon.yaml"))
    text = str(caught.value)
    assert "mon.yaml:11: schedule.repetitions: a monitored campaign's runs are its repetitions" in text
    assert "mon.yaml:13: alerts[0].measurement: no measurement 'udp'; known: rtt, tcp" in text
    with pytest.raises(SpecInvalid, match="threshold"):
        parse_spec(
            MONITORED_SPEC + "alerts: [{name: x, metric: loss_ratio, op: '>', threshold: 2 apples}]\n",
            "m.yaml",
        )


@pytest.mark.parametrize(
    ("until", "expected"),
    [
        # pydantic alone said 'input should be a valid datetime or date, input is too short'
        ("tomorrow", "mon.yaml:10: monitor.until: 'tomorrow' is not a time: "),
        # a number was taken as seconds since 1970: the monitor would stop before its first run
        ("5", "mon.yaml:10: monitor.until: 5 is not a time (a bare number would be read as seconds"),
        # YAML's own date constructor raised ValueError: a traceback, then an error line without the field
        (
            "2026-13-01",
            "mon.yaml:10: monitor.until: 2026-13-01 is not a real date or time (month must be in 1..12); "
            "write one that exists, e.g. 2026-12-11T00:00:00Z",
        ),
        (
            "2026-02-30T00:00:00Z",
            "mon.yaml:10: monitor.until: 2026-02-30T00:00:00Z is not a real date or time (day is out of range "
            "for month); write one that exists, e.g. 2026-12-11T00:00:00Z",
        ),
    ],
)
def test_a_bad_until_names_the_line_and_what_a_time_looks_like(until: str, expected: str) -> None:
    spec = MONITORED_SPEC.replace("slip: 30s}", f"slip: 30s, until: {until}}}")
    with pytest.raises(SpecInvalid) as caught:
        parse_spec(spec, "mon.yaml")
    text = str(caught.value)
    assert expected in text and "2026-12-11T00:00:00Z" in text, text


def test_run_n_is_the_template_with_its_keys_and_repetition() -> None:
    loaded = parse_spec(MONITORED_SPEC, "mon.yaml")
    template = make_plan(loaded, "c1", 0)
    assert [s.key for s in template.steps] == ["r001/p/rtt/a>b", "r001/p/tcp/a>b"]
    run = run_plan(template, 12)
    assert [s.key for s in run.steps] == ["r012/p/rtt/a>b", "r012/p/tcp/a>b"]
    assert [f.key for s in run.steps for f in s.flows] == ["r012/p/rtt/a>b", "r012/p/tcp/a>b"]
    assert {s.repetition for s in run.steps} == {12}
    assert [s.seq for s in run.steps] == [22, 23]  # after runs 1..11's two steps each
    assert {s.not_before_ns for s in run.steps} == {0}
    assert run_plan(template, 1000).steps[0].key == "r1000/p/rtt/a>b"


def test_the_next_run_is_derived_from_the_newest_stored_run() -> None:
    assert next_run(None).run == 1
    assert next_run({"run": 3, "status": "ok", "scheduled_utc_ns": 5}).run == 4
    assert next_run({"run": 3, "status": "failed", "scheduled_utc_ns": 5}).run == 4
    cut = next_run({"run": 4, "status": "running", "scheduled_utc_ns": 7})
    assert (cut.run, cut.resumed, cut.scheduled_utc_ns) == (4, True, 7)
    assert next_run({"run": 4, "status": "interrupted", "scheduled_utc_ns": 7}).resumed


def test_slots_repeat_from_the_previous_slot_and_a_missed_one_runs_once_now() -> None:
    every = MonitorSchedule(repeat="PT10M")
    t0 = 1_700_000_000 * S
    assert next_slot(every, None, t0) == t0
    assert next_slot(every, t0, t0 + 5 * S) == t0 + 600 * S
    assert next_slot(every, t0, t0 + 3600 * S) == t0 + 3600 * S  # down for an hour: one run now, no burst


def test_cron_slots_are_the_next_matching_minute_in_utc() -> None:
    cron = MonitorSchedule(cron="*/15 * * * *")
    t = int(dt.datetime(2026, 1, 1, 10, 7, tzinfo=dt.UTC).timestamp()) * S
    assert next_slot(cron, None, t) == int(dt.datetime(2026, 1, 1, 10, 15, tzinfo=dt.UTC).timestamp()) * S
    slot = int(dt.datetime(2026, 1, 1, 10, 15, tzinfo=dt.UTC).timestamp()) * S
    assert next_slot(cron, slot, slot + S) == slot + 900 * S


def test_slip_is_random_within_its_bound_and_the_same_for_a_run_after_a_restart() -> None:
    schedule = MonitorSchedule(repeat="PT10M", slip="PT30S")
    slips = [slip_ns(schedule, 7, run) for run in range(1, 201)]
    assert all(0 <= s <= 30 * S for s in slips)
    assert len(set(slips)) == 200 and max(slips) > 20 * S and min(slips) < 10 * S
    assert slip_ns(schedule, 7, 5) == slips[4]
    assert slip_ns(MonitorSchedule(repeat="PT10M"), 7, 5) == 0


def test_limits_stop_after_max_runs_or_past_until() -> None:
    until = dt.datetime(2026, 1, 2, tzinfo=dt.UTC)
    limits = Limits.of(MonitorSchedule(repeat="PT1H", max_runs=240), None, until)
    end = int(until.timestamp()) * S
    assert limits.reached(240, end) is None
    assert limits.reached(241, end) == "240 runs done (max-runs)"
    # a restart with a smaller max-runs said "5 runs done (max-runs)" of a campaign with 240 runs
    assert Limits(5).reached(241, end) == (
        "the campaign has 240 runs, more than max-runs 5 (the last run number); give --max-runs 241 or "
        "more to go on"
    )
    assert "until" in (limits.reached(5, end + 1) or "")
    assert Limits.of(MonitorSchedule(repeat="PT1H", max_runs=240), 5, None).reached(6, 0) is not None


def test_the_monitor_continues_its_campaign_refuses_a_changed_spec_and_a_second_monitor(tmp_path) -> None:
    import subprocess
    import sys

    from vnetbench.monitor.service import MonitorError, prepare
    from vnetbench.store.db import Store
    from vnetbench.store.monitoring import MonitorStore

    store = Store(tmp_path / "m.db")
    first = prepare(parse_spec(MONITORED_SPEC, "mon.yaml"), store)
    assert not first.resumed
    # the schedule and the rules may change: the same campaign goes on
    again = prepare(parse_spec(MONITORED_SPEC.replace("PT10M", "PT5M") + "alerts: []\n", "mon.yaml"), store)
    assert again.resumed and again.campaign_id == first.campaign_id and again.seed == first.seed
    # a several-spec monitor's child gets the id its parent found or just created: it continues the
    # campaign (says 'continuing') only once the campaign has runs (it said so for a new one)
    assert not prepare(parse_spec(MONITORED_SPEC, "mon.yaml"), store, campaign_id=first.campaign_id).resumed
    MonitorStore(store).start_run(first.campaign_id, 1, 0, 2)
    assert prepare(parse_spec(MONITORED_SPEC, "mon.yaml"), store, campaign_id=first.campaign_id).resumed
    # what is measured may not: a new series needs --new-campaign
    changed = MONITORED_SPEC.replace("count: 3", "count: 5")
    with pytest.raises(MonitorError, match=r"different spec \(measurements changed; .* --new-campaign"):
        prepare(parse_spec(changed, "mon.yaml"), store)
    # it names what changed: here only the dashboard's thresholds (it said 'topology, measurements or
    # patterns changed' whatever it was)
    recoloured = MONITORED_SPEC + "thresholds: {rtt_mean_ns: {warning: 2ms, critical: 10ms}}\n"
    with pytest.raises(MonitorError, match=r"different spec \(thresholds changed; only monitor, alerts"):
        prepare(parse_spec(recoloured, "mon.yaml"), store)
    fresh = prepare(parse_spec(changed, "mon.yaml"), store, new_campaign=True)
    assert fresh.campaign_id != first.campaign_id
    # a live monitor process (here: a sleeper whose command line names vnetbench) keeps its campaign
    other = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)", "vnetbench"])
    try:
        # until the child has exec'd, its command line is its parent's (a loaded CI run saw that)
        wait_until(lambda: Path(f"/proc/{other.pid}/cmdline").read_bytes(), lambda c: b"vnetbench" in c, 10)
        MonitorStore(store).set_state(fresh.campaign_id, pid=other.pid, state="running")
        with pytest.raises(MonitorError, match=f"already monitored by process {other.pid}"):
            prepare(parse_spec(changed, "mon.yaml"), store)
    finally:
        other.kill()
        other.wait()
    assert prepare(parse_spec(changed, "mon.yaml"), store).campaign_id == fresh.campaign_id  # it died
    store.close()


# docs/drivers.md's "Summary metrics — TCP" table (the runner's path_pps_limit only through a link with
# `pps`, which MONITORED_SPEC has not)
TCP_METRICS = (
    "bytes_received, iperf3_throughput_bps, max_cwnd_bytes, max_rtt_ns, max_snd_wnd_bytes, mean_rtt_ns, "
    "min_rtt_ns, receiver_cpu_ratio, retransmits, sender_cpu_ratio, sender_throughput_bps, "
    "throughput_bps, window_bytes_received, window_ns"
)
# docs/drivers.md's ping "Summary metrics" table
RTT_METRICS = (
    "duplicate_replies, late_replies, loss_ratio, received_packets, rtt_max_ns, rtt_mdev_ns, rtt_mean_ns, "
    "rtt_median_ns, rtt_min_ns, rtt_p95_ns, rtt_p99_ns, rtt_sd_ns, sent_packets, unreachable_events"
)


def test_an_alert_on_a_metric_no_measurement_can_produce_is_refused_before_any_run() -> None:
    # it was said only after the first run had stored its samples ("can never fire: ... stores no metric")
    rules = (
        "alerts:\n"
        "  - {name: ok, measurement: tcp, metric: throughput_bps, op: '<', threshold: 10mbit}\n"
        "  - {name: slow, measurement: tcp, metric: thruput_bps, op: '<', threshold: 10mbit}\n"
        "  - {name: lossy, measurement: tcp, metric: loss_ratio, op: '>', threshold: 1%}\n"
        "  - {name: far, metric: rtt_p95_ns, op: '>', threshold: 60ms}\n"
        "  - {name: jitter, metric: jitter_mean_ns, op: '>', threshold: 1ms}\n"
    )
    with pytest.raises(SpecInvalid) as caught:
        check_monitorable(parse_spec(MONITORED_SPEC + rules, "mon.yaml"))
    lines = str(caught.value).splitlines()
    assert [line for line in lines if "alerts[" in line] == [
        "mon.yaml:13: alerts[1].metric: alert 'slow' can never fire: measurement tcp (kind tcp) cannot "
        "produce a metric 'thruput_bps'; did you mean throughput_bps? the metrics measurement tcp (kind tcp) "
        f"can produce: {TCP_METRICS} (docs/drivers.md)",
        # a loss ratio is a ping's or a UDP flow's, not a TCP flow's: the fix is a measurement that has it
        "mon.yaml:14: alerts[2].metric: alert 'lossy' can never fire: measurement tcp (kind tcp) cannot "
        "produce a metric 'loss_ratio'; the metrics measurement tcp (kind tcp) can produce: "
        f"{TCP_METRICS} (docs/drivers.md)",
        # without `measurement:` any measurement of the campaign may have it: rtt (ping) has rtt_p95_ns,
        # no kind here (rtt, tcp) has a jitter
        "mon.yaml:16: alerts[4].metric: alert 'jitter' can never fire: no measurement of this campaign can "
        "produce a metric 'jitter_mean_ns'; the metrics the measurements of this campaign can produce: "
        "bytes_received, duplicate_replies, iperf3_throughput_bps, late_replies, loss_ratio, max_cwnd_bytes, "
        "max_rtt_ns, max_snd_wnd_bytes, mean_rtt_ns, min_rtt_ns, received_packets, "
        "receiver_cpu_ratio, retransmits, rtt_max_ns, rtt_mdev_ns, rtt_mean_ns, rtt_median_ns, rtt_min_ns, "
        "rtt_p95_ns, rtt_p99_ns, rtt_sd_ns, sender_cpu_ratio, sender_throughput_bps, sent_packets, "
        "throughput_bps, unreachable_events, window_bytes_received, window_ns (docs/drivers.md)",
    ], lines


# FOUR_NODE_STAR with b's link limited to 20 000 packets/s: a→b crosses it, a→c does not
PPS_SPEC = (
    "name: mon\n"
    + FOUR_NODE_STAR.replace("{endpoints: [b, sw]}", "{endpoints: [b, sw], pps: 20000}")
    + "measurements:\n"
    "  - {name: rtt, kind: rtt, count: 3}\n"
    "  - {name: tcp, kind: tcp, duration: 1s}\n"
    "patterns:\n"
    "  - {name: ac, kind: pairs, pairs: [[a, c]], measurements: [rtt]}\n"
    "  - {name: ab, kind: pairs, pairs: [[a, b]], measurements: [tcp]}\n"
    "monitor: {repeat: PT10M}\n"
    "alerts:\n"
)


def test_a_rule_on_path_pps_limit_is_refused_where_no_flow_crosses_a_packet_rate_limited_link() -> None:
    # it passed the start check for any kind, and then never fired: the runner stores path_pps_limit
    # only for a flow whose path has a link with `pps`
    capped = "  - {name: capped, measurement: tcp, metric: path_pps_limit, op: '<', threshold: 30000}\n"
    anywhere = "  - {name: anywhere, metric: path_pps_limit, op: '<', threshold: 30000}\n"
    check_monitorable(parse_spec(PPS_SPEC + capped + anywhere, "mon.yaml"))  # tcp's a→b crosses b's link

    on_rtt = "  - {name: rtt-cap, measurement: rtt, metric: path_pps_limit, op: '<', threshold: 30000}\n"
    with pytest.raises(SpecInvalid) as caught:
        check_monitorable(parse_spec(PPS_SPEC + capped + on_rtt, "mon.yaml"))
    assert [line for line in str(caught.value).splitlines() if "alerts[" in line] == [
        "mon.yaml:19: alerts[1].metric: alert 'rtt-cap' can never fire: measurement rtt (kind rtt) cannot "
        "produce a metric 'path_pps_limit' (the runner stores it only for a flow through a link with `pps`, "
        "a packet-rate limited switch or vNIC, and no flow of measurement rtt crosses one); the metrics "
        f"measurement rtt (kind rtt) can produce: {RTT_METRICS} (docs/drivers.md)",
    ]
    # no link with `pps` at all: refused for a rule on every measurement too, without planning
    with pytest.raises(SpecInvalid) as caught:
        check_monitorable(parse_spec(MONITORED_SPEC + "alerts:\n" + anywhere, "mon.yaml"))
    lines = [line for line in str(caught.value).splitlines() if "alerts[" in line]
    assert len(lines) == 1 and lines[0].startswith(
        "mon.yaml:12: alerts[0].metric: alert 'anywhere' can never fire: no measurement of this campaign "
        "can produce a metric 'path_pps_limit' (the runner stores it only for a flow through a link with "
        "`pps`, a packet-rate limited switch or vNIC, and no flow of this campaign crosses one); the metrics "
        "the measurements of this campaign can produce: bytes_received, duplicate_replies, "
    ), lines


def test_two_alert_rules_of_one_name_are_refused_before_any_run() -> None:
    # a warning and a critical level under one name shared its episodes (stored by rule name): in a run
    # that broke only the warning level, the critical rule closed the warning's episode and the next run
    # opened it again, a firing and a resolved webhook message at every run
    rules = (
        "alerts:\n"
        "  - {name: slow, measurement: tcp, metric: throughput_bps, op: '<', threshold: 90mbit}\n"
        "  - {name: slow, measurement: tcp, metric: throughput_bps, op: '<', threshold: 50mbit, "
        "severity: critical}\n"
        "  - {name: far, metric: rtt_mean_ns, op: '>', threshold: 60ms}\n"
    )
    with pytest.raises(SpecInvalid) as caught:
        check_monitorable(parse_spec(MONITORED_SPEC + rules, "mon.yaml"))
    assert str(caught.value).splitlines() == [
        "mon.yaml:13: alerts[1].name: 'slow' is the name of alerts[0] too; each rule needs its own name "
        "(its episodes are stored under it), e.g. slow-critical"
    ]


def test_until_bounds_a_runs_start_with_its_slip(tmp_path, monkeypatch) -> None:
    # until was checked against the slot, not the slot + slip the run starts at: with slip PT1H a run
    # started up to an hour after `until` ("no run starts after this time", docs/monitoring.md)
    import dataclasses

    from rich.console import Console

    from vnetbench.monitor.service import Monitor, prepare
    from vnetbench.store.db import Store
    from vnetbench.store.records import now_utc_ns

    store = Store(tmp_path / "m.db")
    spec = parse_spec(MONITORED_SPEC.replace("slip: 30s", "slip: PT1H"), "mon.yaml")
    schedule = spec.campaign.monitor
    # a seed whose first run slips by more than 20 minutes (slip_ns is seeded by campaign and run)
    seed = next(s for s in range(1000) if slip_ns(schedule, s, 1) > 1200 * S)
    monitored = dataclasses.replace(prepare(spec, store), seed=seed)
    until = now_utc_ns() + 600 * S  # after run 1's slot (now), before its start (now + > 20 min)
    monitor = Monitor(store, monitored, Limits(None, until), console=Console(quiet=True))
    slept: list[int] = []
    monkeypatch.setattr(monitor, "_sleep_until", lambda deadline: slept.append(deadline) and False)
    outcome = monitor._one_cycle()
    assert slept == []  # nothing waited for, nothing measured
    assert outcome is not None and outcome.code == 0
    when = dt.datetime.fromtimestamp(until / 1e9, dt.UTC).isoformat(timespec="seconds")
    assert outcome.reason == f"the next run would start after {when} (until)"
    assert MonitorStore(store).monitored(monitored.campaign_id)["state"] == "finished"
    store.close()
