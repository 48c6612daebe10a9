"""The `parallel` pattern (disjoint pairs at the same moment): spec checks, plan expansion of a `pps`
sweep (one step per point, N flows each), the analysis series and the report's multi-flow part."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from tests.helpers.stores import campaign_store, host_cpu
from vnetbench.analysis.campaign_data import series_label
from vnetbench.plan import make_plan
from vnetbench.report.html import write_report
from vnetbench.report.sweeps_multi import multi_flow_part
from vnetbench.spec import parse_spec
from vnetbench.spec.loader import SpecInvalid
from vnetbench.store.records import MeasurementRecord

SPEC = """
name: tenants
topology:
  nodes: [{name: s1}, {name: r1}, {name: s2}, {name: r2}, {name: s3}, {name: r3}]
  switches: [{name: lb}]
  links:
    - {endpoints: [s1, lb]}
    - {endpoints: [lb, r1], rate: 1gbit}
    - {endpoints: [s2, lb]}
    - {endpoints: [lb, r2], rate: 1gbit}
    - {endpoints: [s3, lb]}
    - {endpoints: [lb, r3], rate: 1gbit}
measurements:
  - {name: sweep, kind: pps, rates: [2000, 1000], sizes: [18, 1472], duration: 1s}
patterns:
  - name: t
    kind: parallel
    pairs: [[s1, r1], [s2, r2], [s3, r3]]
    count: 2
    measurements: [sweep]
"""


def errors_of(text: str) -> list[str]:
    with pytest.raises(SpecInvalid) as err:
        make_plan(parse_spec(text, "t.yaml"), "c0ffee00", 1)
    return [str(e) for e in err.value.errors]


def test_a_node_in_two_pairs_is_refused_naming_the_field_and_the_fix() -> None:
    found = errors_of(SPEC.replace("[s2, r2], [s3, r3]]", "[s2, r1], [s3, r3]]"))
    assert len(found) == 1, found
    line, message = found[0].split(" ", 1)
    assert line == "t.yaml:18:"  # the pairs line
    assert message.startswith("patterns[0].pairs:")
    assert "node 'r1' is in pairs[0] and pairs[1]" in message
    assert "give each pair its own nodes" in message and "star or fan-in" in message


def test_a_pair_sending_to_itself_and_a_count_beyond_the_pairs_are_refused() -> None:
    assert any(
        "pairs[0][1]: 's1' would measure itself" in e
        for e in errors_of(SPEC.replace("[s1, r1],", "[s1, s1],"))
    )
    found = errors_of(SPEC.replace("count: 2", "count: 4"))
    assert any("patterns[0].count: 4 but only 3 pairs are listed" in e for e in found), found
    assert any(
        "pairs[2][1]: no node named 'x9'" in e for e in errors_of(SPEC.replace("[s3, r3]", "[s3, x9]"))
    )


def test_star_and_fan_in_counts_beyond_their_lists_are_refused_too() -> None:
    head = SPEC[: SPEC.index("  - name: t")]
    star = (
        head + "  - {name: t, kind: star, source: s1, destinations: [r1], count: 2, measurements: [sweep]}\n"
    )
    assert any("patterns[0].count: 2 but only 1 destination is listed" in e for e in errors_of(star))
    fan = (
        head
        + "  - {name: t, kind: fan-in, sources: [s1, s2], destination: r1, count: 3, measurements: [sweep]}\n"
    )
    assert any("patterns[0].count: 3 but only 2 sources are listed" in e for e in errors_of(fan))
    make_plan(parse_spec(fan.replace("count: 3", "count: 2"), "t.yaml"), "c0ffee00", 1)  # within: fine


def test_a_parallel_sweep_is_one_step_per_point_with_one_flow_per_pair() -> None:
    plan = make_plan(parse_spec(SPEC), "c0ffee00", 1)
    alone = [s for s in plan.steps if s.group_kind == "alone"]
    together = [s for s in plan.steps if s.group_kind == "together"]
    assert len(plan.steps) == len(alone) + len(together)
    # count: 2 uses s1>r1 and s2>r2 only; alone: true (the default) sweeps each pair alone first
    assert [(s.flows[0].src, s.params["size"], s.params["pps"]) for s in alone] == [
        (src, size, pps) for src in ("s1", "s2") for size in (18, 1472) for pps in (1000, 2000)
    ]
    assert all(len(s.flows) == 1 and s.flows[0].key == s.key for s in alone)
    assert [s.params for s in together] == [
        {"size": 18, "pps": 1000},
        {"size": 18, "pps": 2000},
        {"size": 1472, "pps": 1000},
        {"size": 1472, "pps": 2000},
    ]
    first = together[0]
    assert first.key == "r001/t/sweep/together/s18/p1000"
    assert [(f.key, f.src, f.dst) for f in first.flows] == [
        ("r001/t/sweep/together/s1>r1/s18/p1000", "s1", "r1"),
        ("r001/t/sweep/together/s2>r2/s18/p1000", "s2", "r2"),
    ]
    assert all(len(s.flows) == 2 and s.pattern_kind == "parallel" and s.planned_ns == 10**9 for s in together)
    assert alone[0].key == "r001/t/sweep/alone/s1>r1/s18/p1000"
    keys = [f.key for s in plan.steps for f in s.flows]
    assert len(keys) == len(set(keys)) == plan.flow_count == 8 + 8
    # stable: another seed, or the same spec planned again, gives the same keys in the same order
    again = make_plan(parse_spec(SPEC), "c0ffee00", 99)
    assert [f.key for s in again.steps for f in s.flows] == keys


def test_count_as_a_factor_changes_the_number_of_flows_per_step() -> None:
    text = SPEC.replace("    count: 2\n", "    alone: false\n") + (
        "factors: [{name: tenants, path: patterns.t.count, levels: [1, 3]}]\ndesign: {kind: one-factor}\n"
    )
    plan = make_plan(parse_spec(text), "c0ffee00", 1)
    sizes = {level: {len(s.flows) for s in plan.steps if s.factors["tenants"] == level} for level in (1, 3)}
    assert sizes == {1: {1}, 3: {3}}
    assert {s.group_kind for s in plan.steps if s.factors["tenants"] == 1} == {"single"}


def test_a_sweep_series_carries_its_point() -> None:
    row = {"pattern": "t", "pattern_kind": "parallel", "group_kind": "together", "measurement": "sweep",
           "kind": "pps", "src": "s1", "dst": "r1", "payload_bytes": 18.0, "target_pps": 1000.0}  # fmt: skip
    assert series_label(row) == "t · sweep · 18 B at 1000 pps"
    tcp = row | {"kind": "tcp", "pattern_kind": "pairs", "group_kind": "single"}
    assert series_label(tcp) == "t · sweep · s1→r1"


def _rec(
    seq: int, key: str, step: str, group: str, src: str, dst: str, pps: int, got: float, **kw: Any
) -> MeasurementRecord:
    size = kw.pop("size", 18)
    base: dict[str, Any] = {
        "campaign_id": "c1", "key": key, "step_key": step, "seq": seq, "repetition": 1,
        "pattern": kw.pop("pattern", "t"), "pattern_kind": kw.pop("pattern_kind", "parallel"),
        "group_kind": group, "group_size": kw.pop("group_size", 2 if group == "together" else 1),
        "measurement": "sweep", "kind": "pps", "src": src, "dst": dst, "placement": "same-host",
        "link_rate_bps": 10**9, "path_mtu": 1500, "start_skew_ns": kw.pop("skew", 0),
        "summary": {"payload_bytes": size, "target_pps": pps, "achieved_pps": pps, "received_pps": got,
                    "loss_ratio": 1 - got / pps, "throughput_bps": got * size * 8},
    }  # fmt: skip
    return MeasurementRecord(**(base | kw))


def _records() -> list[MeasurementRecord]:
    """s1>r1 alone receives what it is offered (1000 and 40000 pps); the two tenants together get
    1000 each at 1000 pps but 30000 and 28000 at 40000 pps (a shared limit of 58000)."""
    out = []
    seq = 0
    for pps, got in ((1000, 1000.0), (40000, 40000.0)):
        seq += 1
        out.append(_rec(seq, f"alone/s1>r1/p{pps}", f"alone/s1>r1/p{pps}", "single", "s1", "r1", pps, got,
                        pattern="alone", pattern_kind="pairs"))  # fmt: skip
    for pps, got in ((1000, (1000.0, 1000.0)), (40000, (30000.0, 28000.0))):
        step = f"t/together/p{pps}"
        for (src, dst), value in zip((("s1", "r1"), ("s2", "r2")), got, strict=True):
            seq += 1
            out.append(
                _rec(seq, f"{step}/{src}>{dst}", step, "together", src, dst, pps, value, skew=2_000_000)
            )
    return out


def test_the_report_shows_each_tenant_the_mean_per_tenant_and_the_aggregate(tmp_path: Path) -> None:
    store = campaign_store(tmp_path / "s.db", status="finished", spec_text=SPEC)
    store.save_measurements(_records())
    write_report(store, "c1", tmp_path / "rep")
    frame = store.measurements_frame("c1")
    store.close()
    summary = json.loads((tmp_path / "rep" / "report.json").read_text())
    section = next(s for s in summary["sections"] if s["title"] == "Packet rate: received vs offered")
    tables = {t["title"]: t for t in section["tables"]}
    # the single-flow table keeps only flows measured alone
    assert [r[0] for r in tables["Sweep summary"]["rows"]] == ["alone: sweep s1→r1"]
    points = [dict(zip(tables["Simultaneous flows per sweep point"]["columns"], r, strict=True))
              for r in tables["Simultaneous flows per sweep point"]["rows"]]  # fmt: skip
    top = points[-1]
    # packet rates in K pps with four digits, as the sweep summary and the Findings: 40000 pps is 40.00
    assert (top["flows"], top["offered per flow (K pps)"]) == ("2", "40.00")
    assert top["received per flow, mean (K pps)"] == "29.00"
    assert top["per flow min – max (K pps)"] == "28.00 – 30.00"
    assert top["aggregate received (K pps)"] == "58.00" and top["total offered (K pps)"] == "80.00"
    assert top["one flow alone (K pps)"] == "40.00" and top["mean per flow / alone %"] == "72.5"
    assert top["start skew ms"] == "2"
    assert float(top["Jain"]) == pytest.approx((58000**2) / (2 * (30000**2 + 28000**2)), abs=1e-4)
    shared = tables["Simultaneous flows: saturation shared"]["rows"]
    # no telemetry was read: whether the host was saturated is unknown, not "0 of 2"
    assert tables["Simultaneous flows: saturation shared"]["columns"][3:6] == [
        "max mean per flow (K pps)",
        "max aggregate (K pps)",
        "max of one flow alone (K pps)",
    ]
    assert shared == [["t: sweep", "2", "18", "29.00", "58.00", "40.00", "no", "1.45", "–"]]
    assert section["figures"] == ["probe_pps_18.png", "probe_pps_multi_18.png"]  # single-flow figure stays
    # only flows of the same sweep started together count; a background flow never does
    assert multi_flow_part(frame[frame["group_kind"] == "single"], tmp_path) is None
    bg = pd.DataFrame([{**frame.iloc[0].to_dict(), "group_kind": "background"}])
    assert multi_flow_part(bg, tmp_path) is None


def test_steps_on_a_saturated_host_are_named_as_the_machines_limit(tmp_path: Path) -> None:
    # the 40000 pps step ran with the host 98 % busy (1960 of 2000 ms), the 1000 pps step 30 % busy
    records = _records()
    for rec in records:
        if rec.group_kind == "together":
            top = rec.summary["target_pps"] == 40000
            rec.telemetry = host_cpu(1960, 40) if top else host_cpu(600, 1400)
    store = campaign_store(tmp_path / "s.db", status="finished", spec_text=SPEC)
    store.save_measurements(records)
    write_report(store, "c1", tmp_path / "rep")
    store.close()
    summary = json.loads((tmp_path / "rep" / "report.json").read_text())
    section = next(s for s in summary["sections"] if s["title"] == "Packet rate: received vs offered")
    tables = {t["title"]: t for t in section["tables"]}
    points = tables["Simultaneous flows per sweep point"]
    busy = [r[points["columns"].index("host CPU busy % (max)")] for r in points["rows"]]
    assert busy == ["30", "98"]
    shared = tables["Simultaneous flows: saturation shared"]
    assert shared["rows"][0][shared["columns"].index("steps with host CPU saturated")] == "1 of 2"
    [item] = [i for i in section["items"] if i.startswith("Machine as bottleneck")]
    assert "t: sweep: in 1 of 2 steps" in item and "40.00 K pps offered per flow" in item
