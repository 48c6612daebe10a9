"""Alert rules checked after every run: an episode opens when the last `for_runs` runs of a series
(measurement, src, dst) all break a rule, and closes at the first run that does not. Each episode is
one row in the store and one 'firing' (and later one 'resolved') webhook message: fire once per episode,
even across restarts, because the open episodes are read back from the store."""

from __future__ import annotations

import datetime as dt
import difflib
import json
import logging
import math
import urllib.error
import urllib.request
from dataclasses import dataclass
from typing import Any

from vnetbench.kinds import kind_of
from vnetbench.spec.monitoring import AlertRule
from vnetbench.spec.units import format_metric
from vnetbench.store.monitoring import MonitorStore, Series

log = logging.getLogger(__name__)
WEBHOOK_TIMEOUT_S = 10.0


@dataclass(frozen=True)
class Change:
    state: str  # firing | resolved
    episode_id: int
    rule: str
    series: Series
    value: float
    metric: str = ""  # the rule's metric: the unit `value` is shown in
    condition: str = ""  # the rule as it fired: "loss_ratio > 1.00 % for 3 runs"
    run: int = 0  # the run whose value opened or closed the episode


def evaluate(mstore: MonitorStore, campaign_id: str, rules: list[AlertRule], run: int) -> list[Change]:
    """Open and close episodes for run `run` (its measurements are in the store)."""
    changes: list[Change] = []
    open_now = {
        (e["rule"], Series(e["measurement"], e["src"], e["dst"])): e
        for e in mstore.open_episodes(campaign_id)
    }
    for rule in rules:
        values = mstore.recent_values(campaign_id, rule.metric, rule.for_runs, rule.measurement)
        for series, points in sorted(
            values.items(), key=lambda kv: (kv[0].measurement, kv[0].src, kv[0].dst)
        ):
            last_run, last_value = points[-1]
            if last_run != run:  # not measured (or failed) in this run: no news about this series
                continue
            episode = open_now.get((rule.name, series))
            if episode is not None:
                if not rule.breaks(last_value):
                    mstore.close_episode(episode["id"], run)
                    changes.append(
                        Change(
                            "resolved",
                            episode["id"],
                            rule.name,
                            series,
                            last_value,
                            rule.metric,
                            episode["condition"],
                            run,
                        )
                    )
                continue
            window = [v for r, v in points if r > run - rule.for_runs]
            if len(window) == rule.for_runs and all(rule.breaks(v) for v in window):
                episode_id = mstore.open_episode(
                    campaign_id=campaign_id,
                    rule=rule.name,
                    severity=rule.severity,
                    condition=rule.describe(),
                    measurement=series.measurement,
                    src=series.src,
                    dst=series.dst,
                    metric=rule.metric,
                    threshold=rule.threshold,
                    opened_run=run,
                    value=last_value,
                )
                changes.append(
                    Change(
                        "firing", episode_id, rule.name, series, last_value, rule.metric, rule.describe(), run
                    )
                )
    # a rule taken out of the spec no longer holds its episodes open
    names = {r.name for r in rules}
    for (rule_name, series), episode in open_now.items():
        if rule_name not in names:
            mstore.close_episode(episode["id"], run)
            changes.append(
                Change(
                    "resolved",
                    episode["id"],
                    rule_name,
                    series,
                    float("nan"),
                    episode["metric"],
                    episode["condition"],
                    run,
                )
            )
    return changes


# The runner's metric that only a flow through a link with `pps` (a packet-rate limited switch or vNIC)
# gets (run/runner.py): whether a measurement can store it is the plan's to say, not its kind's.
PATH_PPS_LIMIT = "path_pps_limit"
PPS_WHY = (
    "the runner stores it only for a flow through a link with `pps`, a packet-rate limited switch or vNIC"
)


def producible_metrics(
    measurement_kinds: dict[str, str], pps_limited: frozenset[str] | None = None
) -> dict[str, frozenset[str]]:
    """measurement name -> the summary metrics its kind can store (kinds' `stored_metrics`); with
    `pps_limited` (the measurements with a flow through a link with `pps`, pps_limited_measurements),
    path_pps_limit only for those."""
    out = {name: kind_of(kind).stored_metrics() for name, kind in measurement_kinds.items()}
    if pps_limited is not None:
        out = {name: can if name in pps_limited else can - {PATH_PPS_LIMIT} for name, can in out.items()}
    return out


def impossible_rules(
    rules: list[AlertRule], measurement_kinds: dict[str, str], pps_limited: frozenset[str] | None = None
) -> dict[int, str]:
    """Rules whose metric no measurement they watch can ever produce, found before any run:
    {index in `alerts:`: what is wrong and the metrics that are available}. `measurement_kinds` maps
    the campaign's measurement names to their kinds; a rule naming an unknown measurement is left to
    the caller's own check. `pps_limited`: see producible_metrics (None: path_pps_limit is not judged)."""
    producible = producible_metrics(measurement_kinds, pps_limited)
    problems = {}
    for i, rule in enumerate(rules):
        if rule.measurement is not None:
            if rule.measurement not in producible:
                continue
            known: set[str] = set(producible[rule.measurement])
            whose = f"measurement {rule.measurement} (kind {measurement_kinds[rule.measurement]})"
            missing = f"{whose} cannot produce a metric '{rule.metric}'"
            flows = f"no flow of measurement {rule.measurement} crosses one"
        else:
            known = set().union(*producible.values())
            whose = "the measurements of this campaign"
            missing = f"no measurement of this campaign can produce a metric '{rule.metric}'"
            flows = "no flow of this campaign crosses one"
        if rule.metric in known:
            continue
        if rule.metric == PATH_PPS_LIMIT and pps_limited is not None:
            missing += f" ({PPS_WHY}, and {flows})"
        # 0.85: thruput_bps -> throughput_bps (0.88), not jitter_mean_ns -> rtt_mean_ns (0.8, not a typo)
        close = difflib.get_close_matches(rule.metric, sorted(known), n=1, cutoff=0.85)
        hint = f"did you mean {close[0]}? " if close else ""
        problems[i] = (
            f"alert '{rule.name}' can never fire: {missing}; {hint}"
            f"the metrics {whose} can produce: {', '.join(sorted(known))} (docs/drivers.md)"
        )
    return problems


def unproduced_rules(
    rules: list[AlertRule],
    run_metrics: dict[str, set[str]],
    run: int,
    measurement_kinds: dict[str, str] | None = None,
    run_names: dict[str, set[str]] | None = None,
) -> dict[str, str]:
    """Rules whose metric a measurement's kind can produce but that run `run` stored no value of (e.g.
    udp's run_packets_sent only with `omit`, path_pps_limit only through a packet-rate limited switch):
    {rule: what to do}. The metrics no kind can produce are refused before the first run
    (impossible_rules). `run_metrics` is MonitorStore.run_metrics of the run (the metrics with a value);
    `run_names` its valued=False (every name stored, NULL or not): a metric stored only as NULL is said
    as such, not as one the spec does not measure. A measurement without ok results says nothing (nor,
    for a rule on every measurement, does one of `measurement_kinds` whose kind can produce the metric
    but that has no ok result in the run)."""
    producible = producible_metrics(measurement_kinds or {})
    names = run_names or {}
    problems = {}
    for rule in rules:
        if rule.measurement is not None:
            if rule.measurement not in run_metrics:
                continue  # failed or not measured in this run: no news
            known = run_metrics[rule.measurement]
            null = rule.metric in names.get(rule.measurement, set())
            said = f"measurement {rule.measurement} stored"
            missing = f"{said} no '{rule.metric}' in run {run}"
        elif any(rule.metric in can and name not in run_metrics for name, can in producible.items()):
            continue  # the measurement that would store it failed in this run: no news
        else:
            known = set().union(*run_metrics.values()) if run_metrics else set()
            null = any(rule.metric in stored for stored in names.values())
            said = "the measurements stored"
            missing = f"no measurement stored a '{rule.metric}' in run {run}"
        if not known or rule.metric in known:
            continue
        listed = f"the metrics stored with a value: {', '.join(sorted(known))}"
        if null:  # the campaign measures it, this run had nothing to compute it from
            problems[rule.name] = (
                f"alert rule '{rule.name}' matched nothing: {said} '{rule.metric}' without a value in run "
                f"{run} (what it is computed from was not measured in that run, e.g. an RTT percentile with "
                f"every request lost); {listed} (docs/drivers.md says when each is stored)"
            )
            continue
        problems[rule.name] = (
            f"alert rule '{rule.name}' matched nothing: {missing} (its kind can produce it, but not "
            f"as this campaign measures it); the metrics stored: {', '.join(sorted(known))} "
            "(docs/drivers.md says when each is stored); fix the spec and start the monitor again"
        )
    return problems


def value_detail(metric: str, value: float | None, run: int | None) -> str | None:
    """'(value 3.40 % in run 2)': an episode's value in its metric's unit and the run it is from, the one
    wording of the monitor's alert line and the dashboard's alert list (/api/alerts `detail_text`);
    None without a value (a rule taken out of the spec resolves its episode without one)."""
    if value is None or not math.isfinite(value):
        return None
    return f"(value {format_metric(metric, value)} in run {run})"


def _iso(ns: int | None) -> str | None:
    return None if ns is None else dt.datetime.fromtimestamp(ns / 1e9, dt.UTC).isoformat(timespec="seconds")


def payload(episode: dict[str, Any], campaign_name: str, resolved: bool) -> dict[str, Any]:
    """The JSON a webhook receives (one message per episode start, one per end)."""
    return {
        "status": "resolved" if resolved else "firing",
        "alert": episode["rule"],
        "severity": episode["severity"],
        "condition": episode["condition"],
        "campaign": campaign_name,
        "campaign_id": episode["campaign_id"],
        "measurement": episode["measurement"],
        "src": episode["src"],
        "dst": episode["dst"],
        "metric": episode["metric"],
        "threshold": episode["threshold"],
        "value": episode["value"],
        "opened_run": episode["opened_run"],
        "opened_utc": _iso(episode["opened_utc_ns"]),
        "closed_run": episode["closed_run"],
        "closed_utc": _iso(episode["closed_utc_ns"]),
        "episode": episode["id"],
    }


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    """A redirect is not followed: urllib turned the POST into a GET without the JSON, to another URL,
    and its 200 counted as delivered though no receiver got the message."""

    def redirect_request(
        self, req: urllib.request.Request, fp: Any, code: int, msg: str, headers: Any, newurl: str
    ) -> None:
        raise urllib.error.HTTPError(
            req.full_url, code, f"{msg}, to {newurl}; give that URL as --webhook", headers, fp
        )


_OPENER = urllib.request.build_opener(_NoRedirect)


def post_json(url: str, body: dict[str, Any]) -> None:
    """POST body as JSON to the configured URL (and only there); raises on a non-2xx answer."""
    request = urllib.request.Request(
        url,
        data=json.dumps(body).encode(),
        headers={"Content-Type": "application/json", "User-Agent": "vnetbench-monitor"},
        method="POST",
    )
    with _OPENER.open(request, timeout=WEBHOOK_TIMEOUT_S) as response:  # the user's own URL
        response.read()


def notify(mstore: MonitorStore, campaign_id: str, campaign_name: str, webhook: str | None) -> list[str]:
    """Send every message the webhook has not accepted yet; returns the problems (retried next run)."""
    if not webhook:
        return []
    problems = []
    for episode in mstore.unnotified(campaign_id):
        messages = [] if episode["notified_utc_ns"] is not None else [False]
        if episode["closed_run"] is not None:
            messages.append(True)
        for resolved in messages:
            try:
                post_json(webhook, payload(episode, campaign_name, resolved))
            except (OSError, urllib.error.URLError, ValueError) as err:
                problems.append(f"webhook {webhook}: {err}")
                log.warning("alert webhook %s failed: %s", webhook, err)
                return problems  # the receiver is down: keep the order, try again after the next run
            mstore.mark_notified(episode["id"], resolved)
    return problems
