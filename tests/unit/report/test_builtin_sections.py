"""The built-in report sections (RTT, TCP, competition) on stores built by hand (no root): one row
per connection and treatment in designed campaigns, the previous shape without factors, and the
spec's transient removal and outlier policy applied to the samples they use."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from tests.helpers.stores import campaign_store, host_cpu
from vnetbench.kinds.overhead import expected_max_bps
from vnetbench.report.html import build_times, write_report
from vnetbench.store.db import Store
from vnetbench.store.records import MeasurementRecord, Sample

NS = 10**9
MODEL_10M = expected_max_bps("tcp", 10_000_000)  # 9.564 Mbit/s
MODEL_20M = expected_max_bps("tcp", 20_000_000)

TOPOLOGY = """
topology:
  nodes: [{name: a}, {name: b}, {name: c}]
  switches: [{name: sw}]
  links:
    - {name: la, endpoints: [a, sw], rate: 10mbit}
    - {endpoints: [b, sw]}
    - {endpoints: [c, sw]}
"""

FACTORIAL = f"""
name: two-rates
{TOPOLOGY}
measurements: [{{name: tcp, kind: tcp, duration: 3s}}]
patterns:
  - {{name: p, kind: pairs, pairs: [[a, b]], measurements: [tcp]}}
  - {{name: s, kind: star, source: a, destinations: [b, c], alone: false, measurements: [tcp]}}
factors: [{{name: rate, path: topology.links.la.rate, levels: [10mbit, 20mbit]}}]
design: {{kind: one-factor, replications: 3}}
"""

PLAIN = f"""
name: plain
{TOPOLOGY}
measurements: [{{name: tcp, kind: tcp, duration: 3s}}, {{name: rtt, kind: rtt, count: 3, interval: 1s}}]
patterns: [{{name: p, kind: pairs, pairs: [[a, b]], measurements: [tcp, rtt]}}]
schedule: {{repetitions: 3}}
"""


def _store(tmp_path: Path, spec: str) -> Store:
    return campaign_store(tmp_path / "s.db", status="finished", spec_text=spec)


def _tcp(seq: int, rep: int, rate: int, bps: float, **values: Any) -> MeasurementRecord:
    src, dst = values.pop("src", "a"), values.pop("dst", "b")
    base: dict[str, Any] = {
        "campaign_id": "c1", "key": f"k{seq}", "step_key": f"k{seq}", "seq": seq, "repetition": rep,
        "pattern": "p", "pattern_kind": "pairs", "group_kind": "single", "group_size": 1,
        "measurement": "tcp", "kind": "tcp", "src": src, "dst": dst, "placement": "same-host",
        "link_rate_bps": rate, "path_mtu": 1500, "expected_max_bps": expected_max_bps("tcp", rate),
        "summary": {"throughput_bps": bps}, "start_skew_ns": 0,
    }  # fmt: skip
    return MeasurementRecord(**(base | values))


def _report(tmp_path: Path, store: Store) -> dict[str, Any]:
    write_report(store, "c1", tmp_path / "rep")
    store.close()
    summary = json.loads((tmp_path / "rep" / "report.json").read_text())
    return {s["title"]: s for s in summary["sections"]}


def _rows(table: dict[str, Any]) -> list[dict[str, str]]:
    return [dict(zip(table["columns"], row, strict=True)) for row in table["rows"]]


def test_each_treatment_gets_its_own_rows_and_its_own_link(tmp_path: Path) -> None:
    store = _store(tmp_path, FACTORIAL)
    seq = 0
    for rate, label, values, shares in (
        (10_000_000, "10mbit", (9.0e6, 9.1e6, 9.2e6), (4.5e6, 4.6e6)),
        (20_000_000, "20mbit", (17.0e6, 17.2e6, 17.4e6), (9.0e6, 9.2e6)),
    ):
        for rep, bps in enumerate(values, start=1):
            seq += 1
            store.save_measurements([_tcp(seq, rep, rate, bps, factors={"rate": label})])
            flows = []
            for dst, share in zip(("b", "c"), shares, strict=True):
                seq += 1
                flows.append(
                    _tcp(seq, rep, rate, share, dst=dst, factors={"rate": label}, step_key=f"s{rate}/{rep}",
                         pattern="s", pattern_kind="star", group_kind="together", group_size=2)
                )  # fmt: skip
            store.save_measurements(flows)
    sections = _report(tmp_path, store)

    tcp = sections["TCP throughput"]
    rows = _rows(tcp["tables"][0])
    assert tcp["tables"][0]["columns"][:2] == ["connection", "treatment"]
    assert [(r["treatment"], r["n"], r["mean (Mbit/s)"], r["link"]) for r in rows] == [
        ("rate=10mbit", "3", "9.100", "10 Mbit/s"),  # Mbit/s: 4 digits
        ("rate=20mbit", "3", "17.20", "20 Mbit/s"),
    ]
    assert rows[0]["of model max"] == f"{100 * 9.1e6 / MODEL_10M:.1f} %" == "95.1 %"
    assert rows[1]["of model max"] == f"{100 * 17.2e6 / MODEL_20M:.1f} %" == "89.9 %"

    comp = sections["Simultaneous flows"]
    titles = [t["title"] for t in comp["tables"]]
    assert titles == ["s · tcp · rate=10mbit", "s · tcp · rate=20mbit"]
    sums = [_rows(t)[-1] for t in comp["tables"]]
    assert [s["together (Mbit/s)"] for s in sums] == ["9.10", "18.2"]  # never the 27.3 of both
    flow_b = [_rows(t)[0]["together / model max"] for t in comp["tables"]]
    assert flow_b == [f"{100 * 4.5e6 / MODEL_10M:.1f} %", f"{100 * 9.0e6 / MODEL_20M:.1f} %"]
    assert comp["figures"] == ["competition_treatments_0.png", "competition_ts_treatments_0.png"]
    assert comp["items"] == ["<b>s · tcp</b>, all 2 treatments: no flow was measured alone; cannot compare."]
    html = (tmp_path / "rep" / "index.html").read_text()
    assert "one value per repetition, per connection and treatment" in html


def test_without_factors_the_table_keeps_its_shape(tmp_path: Path) -> None:
    store = _store(tmp_path, PLAIN)
    for rep, bps in enumerate((9.0e6, 9.1e6, 9.2e6), start=1):
        store.save_measurements([_tcp(rep, rep, 10_000_000, bps)])
    sections = _report(tmp_path, store)
    table = sections["TCP throughput"]["tables"][0]
    assert table["title"] == "TCP throughput per connection"
    assert table["columns"] == [
        "connection", "placement", "n", "mean (Mbit/s)", "SD", "min", "median", "p95", "max",
        "link", "model max (Mbit/s)", "of model max",
    ]  # fmt: skip
    assert table["rows"] == [
        [
            "a → b",
            "same-host",
            "3",
            "9.100",  # Mbit/s keep 4 digits, as the Findings quote the same mean ('9.100 Mbit/s')
            "0.1000",  # SD of 9.0, 9.1, 9.2 is 0.1: the metric's 4 digits (0.0999…96 printed 0.1000)
            "9.000",  # a measured 9.0 Mbit/s with the column's digits, not '9' as if a count
            "9.100",
            "–",  # no p95 of 3 values: it was 9.19, the top two interpolated
            "9.200",
            "10 Mbit/s",
            "9.564",  # 10 Mbit/s × 1448 / 1514 (payload 1500 − 20 − 20 − 12, frame 1500 + 14) = 9.5641
            "95.1 %",
        ]
    ]
    assert "p95 is left out (–) where n < 20" in table["note"]
    assert not any(s["title"].startswith(("Designed", "Outliers")) for s in sections.values())


def _with_samples(seq: int, rep: int, values: list[tuple[float, float]], metric: str, **kw: Any) -> Any:
    samples = [Sample(int(t * NS), metric, v) for t, v in values]
    if metric == "throughput_bps":
        mean = sum(v for _, v in values) / len(values)
        return _tcp(seq, rep, 10_000_000, mean, samples=samples, **kw)
    rtt = sum(v for _, v in values) / len(values)
    return _tcp(seq, rep, 10_000_000, 0, samples=samples, measurement="rtt", kind="rtt",
                summary={"rtt_mean_ns": rtt, "sent_packets": 3, "received_packets": 3}, **kw)  # fmt: skip


def test_omit_removes_the_first_seconds_samples(tmp_path: Path) -> None:
    store = _store(tmp_path, PLAIN.replace("schedule:", "analysis: {omit: 1s}\nschedule:"))
    for rep in (1, 2, 3):
        slow_start = [(0.0, 1e6), (0.5, 3e6), (1.0, 9e6), (1.5, 9e6), (2.0, 9e6)]
        store.save_measurements([_with_samples(2 * rep, rep, slow_start, "throughput_bps")])
        replies = [(0.0, 100e6), (1.0, 1e6), (2.0, 2e6)]  # the first reply waited for ARP
        store.save_measurements([_with_samples(2 * rep + 1, rep, replies, "rtt_ns")])
    sections = _report(tmp_path, store)
    tcp = _rows(sections["TCP throughput"]["tables"][0])[0]
    assert tcp["mean (Mbit/s)"] == "9.000" and tcp["min"] == "9.000"  # 6.2 with the first second
    rtt = _rows(sections["Round-trip time"]["tables"][0])[0]
    assert rtt["n"] == "6" and rtt["max"] == "2.00" and rtt["mean (ms)"] == "1.50"  # not max "2"
    html = (tmp_path / "rep" / "index.html").read_text()
    html = html.replace('<span class="nowrap">', "").replace("</span>", "")  # '1 s' is kept on one line
    assert "the first 1 s of every flow is dropped, 6 throughput intervals in all" in html
    assert "the first 1 s of every flow is dropped, 3 replies in all" in html


@pytest.mark.parametrize("method", ["iqr", "mad"])
def test_the_outlier_policy_drops_a_stray_repetition(tmp_path: Path, method: str) -> None:
    store = _store(tmp_path, PLAIN.replace("schedule:", f"analysis: {{outliers: {method}}}\nschedule:"))
    values = (9.0e6, 9.1e6, 9.2e6, 9.1e6, 9.0e6, 2.0e6)  # the sixth repetition stalled
    for rep, bps in enumerate(values, start=1):
        store.save_measurements([_tcp(rep, rep, 10_000_000, bps)])
    sections = _report(tmp_path, store)
    tcp = _rows(sections["TCP throughput"]["tables"][0])[0]
    assert tcp["n"] == "5" and tcp["min"] == "9.000"  # a measured 9.0 with the 4 digits of Mbit/s
    html = (tmp_path / "rep" / "index.html").read_text()
    assert "judged per connection and treatment: 1 of 6 measurements excluded" in html


INTO_HOST = """
name: into-host
topology:
  nodes: [{name: a}, {name: b}, {name: c}]
  switches: [{name: sw}]
  links:
    - {name: up, endpoints: [a, sw], rate: 50mbit}
    - {endpoints: [b, sw], rate: 20mbit}
    - {endpoints: [c, sw], rate: 20mbit}
measurements: [{name: tcp, kind: tcp, duration: 3s}]
patterns: [{name: s, kind: star, source: a, destinations: [b, c], alone: false, measurements: [tcp]}]
factors: [{name: cc, path: measurements.tcp.congestion, levels: [cubic, reno]}]
design: {kind: one-factor, replications: 2}
"""


def test_the_sum_of_a_star_is_set_against_the_link_the_flows_share(tmp_path: Path) -> None:
    """Each flow is limited by its own 20 Mbit/s link; together they share the 50 Mbit/s uplink."""
    store = _store(tmp_path, INTO_HOST)
    seq = 0
    for cc in ("cubic", "reno"):
        for rep in (1, 2):
            flows = []
            for dst in ("b", "c"):
                seq += 1
                flows.append(
                    _tcp(seq, rep, 20_000_000, 19.0e6, dst=dst, factors={"cc": cc}, step_key=f"{cc}/{rep}",
                         pattern="s", pattern_kind="star", group_kind="together", group_size=2)
                )  # fmt: skip
            store.save_measurements(flows)
    comp = _report(tmp_path, store)["Simultaneous flows"]
    model_50m = expected_max_bps("tcp", 50_000_000)
    for table in comp["tables"]:
        flow, total = _rows(table)[0], _rows(table)[-1]
        assert flow["together / model max"] == f"{100 * 19.0e6 / MODEL_20M:.1f} %" == "99.3 %"
        assert total["together (Mbit/s)"] == "38"
        assert total["together / model max"] == (
            f"{100 * 38e6 / model_50m:.1f} % of the shared link up (50 Mbit/s, model max 47.8 Mbit/s)"
        )  # not "199 %: more than one link carries"


def test_flows_together_on_a_saturated_host_are_flagged_beside_their_table(tmp_path: Path) -> None:
    """cubic's first repetition together ran with the host 97 % busy; every other one 20 %."""
    store = _store(tmp_path, INTO_HOST)
    seq = 0
    for cc in ("cubic", "reno"):
        for rep in (1, 2):
            busy = (970, 30) if (cc, rep) == ("cubic", 1) else (200, 800)
            flows = []
            for dst in ("b", "c"):
                seq += 1
                flows.append(
                    _tcp(seq, rep, 20_000_000, 19.0e6, dst=dst, factors={"cc": cc}, step_key=f"{cc}/{rep}",
                         pattern="s", pattern_kind="star", group_kind="together", group_size=2,
                         telemetry=host_cpu(*busy))
                )  # fmt: skip
            store.save_measurements(flows)
    comp = _report(tmp_path, store)["Simultaneous flows"]
    notes = {t["title"]: t["note"] for t in comp["tables"]}
    [cubic] = [n for title, n in notes.items() if "cubic" in title]
    [reno] = [n for title, n in notes.items() if "reno" in title]
    assert cubic.endswith("host CPU ≥ 95 % busy in 1 of 2 repetitions together")
    assert "host CPU" not in reno
    [item] = [i for i in comp["items"] if i.startswith("Machine as bottleneck")]
    assert "cubic" in item and "1 of 2 repetitions" in item


def test_build_times_of_one_build_have_no_median_and_keep_their_zeros() -> None:
    one = build_times(pd.Series([31.25e6]), pd.Series([4.4e6]))
    assert one == "The topology was built once: build 31.25 ms, teardown 4.400 ms."
    six = build_times(pd.Series([12e6, 13.04e6, 12.5e6]), pd.Series([3.16e6, 3.2e6, 3.1e6]))
    assert six == "The topology was built 3 times: build 12.50 ms median, teardown 3.160 ms median."


def test_flows_over_separate_links_competed_for_no_link() -> None:
    # exogeni-exp4's star (three links, 300.0 % of one link's model max): its 'Machine as bottleneck'
    # line said the flows 'competed for this machine's cores as well as for the link'
    from types import SimpleNamespace

    from vnetbench.report.html import _separate_links

    star = SimpleNamespace(model_max=95.6e6, sum_together=287e6, link_rate=100e6)
    assert _separate_links(star, None)  # type: ignore[arg-type]
    one_link = SimpleNamespace(model_max=95.6e6, sum_together=95.6e6, link_rate=100e6)
    assert not _separate_links(one_link, None)  # type: ignore[arg-type]


def test_the_campaign_table_counts_the_earlier_attempts_a_re_run_replaced(tmp_path: Path) -> None:
    """'2 ok, 0 failed' hid that k1 had failed twice before its third attempt was ok (store built by
    hand: 3 attempts of k1, 1 of k2; so 2 earlier attempts, neither used by any table)."""
    store = _store(tmp_path, PLAIN)
    for attempt, status in ((1, "failed"), (2, "setup_failed"), (3, "ok")):
        summary = {"throughput_bps": 9.0e6} if status == "ok" else {}
        store.save_measurements(
            [_tcp(1, 1, 10_000_000, 9.0e6, attempt=attempt, status=status, summary=summary)]
        )
    store.save_measurements([_tcp(2, 2, 10_000_000, 9.2e6)])
    sections = _report(tmp_path, store)
    facts = dict(sections["Campaign"]["tables"][0]["rows"])
    assert facts["measurements"] == "2 ok, 0 failed (and 2 earlier attempts of re-run measurements, not used)"
    tcp = _rows(sections["TCP throughput"]["tables"][0])
    assert [(r["n"], r["mean (Mbit/s)"]) for r in tcp] == [("2", "9.100")]  # (9.0 + 9.2) / 2


def test_the_campaign_table_says_nothing_of_attempts_when_none_was_re_run(tmp_path: Path) -> None:
    store = _store(tmp_path, PLAIN)
    store.save_measurements([_tcp(1, 1, 10_000_000, 9.0e6), _tcp(2, 2, 10_000_000, 9.2e6)])
    facts = dict(_report(tmp_path, store)["Campaign"]["tables"][0]["rows"])
    assert facts["measurements"] == "2 ok, 0 failed"
