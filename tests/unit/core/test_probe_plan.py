"""The probe measurements in the spec and the plan: sweep expansion, nodes patterns, background, checks."""

from __future__ import annotations

import numpy as np
import pytest

from tests.helpers.specs import FOUR_NODE_STAR
from vnetbench.kinds import offered
from vnetbench.plan import make_plan
from vnetbench.report.sections.probe import knee, limit_pps, trace_marks
from vnetbench.spec import parse_spec
from vnetbench.spec.loader import SpecInvalid

BASE = (
    "name: t\n"
    + FOUR_NODE_STAR
    + """measurements:
  - {name: sweep, kind: pps, rates: [5000, 1000], sizes: [18, 1472], duration: 1s}
  - {name: cs, kind: cpushare, duration: 2s}
  - {name: bg, kind: background, pps: 1000, size: 64, pairs: [[c, d]]}
  - {name: tr, kind: trace, rate: 10mbit}
patterns:
  - {name: p, kind: pairs, pairs: [[a, b]], measurements: [sweep, tr], background: [bg]}
  - {name: n, kind: nodes, nodes: [a, d], measurements: [cs]}
"""
)


def errors_of(text: str) -> list[str]:
    with pytest.raises(SpecInvalid) as err:
        make_plan(parse_spec(text), "c0ffee00", 1)
    return [str(e) for e in err.value.errors]


def test_a_sweep_is_one_step_per_size_and_rate() -> None:
    plan = make_plan(parse_spec(BASE), "c0ffee00", 1)
    sweep = [s for s in plan.steps if s.measurement == "sweep"]
    assert [s.params for s in sweep] == [
        {"size": 18, "pps": 1000},
        {"size": 18, "pps": 5000},
        {"size": 1472, "pps": 1000},
        {"size": 1472, "pps": 5000},
    ]
    assert [s.key for s in sweep][:2] == ["r001/p/sweep/a>b/s18/p1000", "r001/p/sweep/a>b/s18/p5000"]
    assert all(s.flows[0].key == s.key and s.planned_ns == 10**9 for s in sweep)
    assert len({s.key for s in plan.steps}) == len(plan.steps)
    others = [s for s in plan.steps if s.measurement != "sweep"]
    assert all(s.params == {} for s in others)


def test_nodes_pattern_runs_on_one_node() -> None:
    plan = make_plan(parse_spec(BASE), "c0ffee00", 1)
    cs = [s for s in plan.steps if s.kind == "cpushare"]
    assert [(s.key, s.flows[0].src, s.flows[0].dst) for s in cs] == [
        ("r001/n/cs/a", "a", "a"),
        ("r001/n/cs/d", "d", "d"),
    ]


def test_random_order_mixes_sweep_points_and_keeps_keys() -> None:
    text = BASE + "schedule: {order: random, repetitions: 2}\n"
    a = make_plan(parse_spec(text), "c0ffee00", 7)
    b = make_plan(parse_spec(BASE.replace("t\n", "t\n", 1) + "schedule: {repetitions: 2}\n"), "c0ffee00", 7)
    assert sorted(s.key for s in a.steps) == sorted(s.key for s in b.steps)
    assert [s.key for s in a.steps] != [s.key for s in b.steps]


def test_offered_rates_of_probe_flows() -> None:
    campaign = parse_spec(BASE).campaign
    assert offered(campaign.measurement("sweep"), {"pps": 1000, "size": 18}) == (144_000.0, 18)
    assert offered(campaign.measurement("bg"), {}) == (512_000.0, 64)
    assert offered(campaign.measurement("tr"), {}) == (10_000_000.0, 1472)
    assert offered(campaign.measurement("cs"), {}) is None


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        (("measurements: [cs]}", "measurements: [sweep]}"), "a nodes pattern runs measurements on one node"),
        (("measurements: [sweep, tr]", "measurements: [sweep, cs]"), "runs on one node: put it in a pattern"),
        (("background: [bg]", "background: [tr]"), "'tr' is not a measurement of kind background"),
        (("pairs: [[c, d]]", "pairs: [[c, x]]"), "no node named 'x'"),
        (  # a background flow lasts as long as its step: a duration of its own would go unused
            ("size: 64, pairs", "size: 64, duration: 30s, pairs"),
            "measurements[2].duration: a background flow runs as long as each step it accompanies",
        ),
        (("pairs: [[c, d]]", "pairs: [[c, c]]"), "would send to itself"),
        (("nodes: [a, d]", "nodes: [a, z]"), "patterns[1].nodes[1]: no node named 'z'"),
        (("rate: 10mbit}", "rate: 10mbit, pps: 5}"), "give exactly one of rate"),
        (("rate: 10mbit}", "size: 100}"), "give exactly one of rate"),
        (("rates: [5000, 1000]", "rates: []"), "rates"),
        (("sizes: [18, 1472]", "sizes: [17]"), "sizes[0]: input should be greater than or equal to 18"),
    ],
)
def test_probe_spec_errors_are_located(change: tuple[str, str], expected: str) -> None:
    old, new = change
    assert old in BASE
    found = errors_of(BASE.replace(old, new))
    assert any(expected in e for e in found), found
    assert all(":" in e.split(" ")[0] for e in found)  # file:line first


def test_limit_knee_and_trace_marks() -> None:
    import pandas as pd

    assert limit_pps(100e6, 1472) == pytest.approx(100e6 / (1514 * 8))
    assert limit_pps(None, 18) is None
    pts = pd.DataFrame({"offered_pps": [1000, 2000, 3000, 4000], "loss": [0.0, 0.005, 0.2, 0.0]})
    assert knee(pts) == 2000  # the first failure ends the knee search
    assert knee(pd.DataFrame({"offered_pps": [1000], "loss": [0.5]})) is None
    sender_bound = pd.DataFrame(
        {"offered_pps": [1000, 2000, 3000], "achieved_pps": [1000, 1995, 2500], "loss": [0.0, 0.0, 0.0]}
    )
    assert knee(sender_bound) == 2000  # sent only 83 % of 3000: saturated without a drop
    v = np.array([10, 0, 10, 0, 0, 0, 10, 40, 10], dtype=float)
    quiet, burst = trace_marks(v, 10.0, pps=2000, bin_s=0.001)
    assert quiet.tolist() == [False, False, False, True, True, True, False, False, False]
    assert burst.tolist() == [False] * 7 + [True, False]


@pytest.mark.parametrize("name", ["openstack-bridges", "ec2-cpushare"])
def test_probe_scenarios_plan_and_have_docs(name: str) -> None:
    from pathlib import Path

    from vnetbench.scenarios import all_scenarios

    scenario = next(s for s in all_scenarios() if s.name == name)
    plan = make_plan(parse_spec(scenario.text), "c0ffee00", 1)
    assert plan.steps and plan.planned_ns < 5 * 60 * 10**9  # scaled to run in minutes
    doc = Path(__file__).resolve().parents[3] / "docs" / "scenarios" / f"{name}.md"
    assert doc.is_file(), f"{doc} is missing"


def test_background_flows_join_every_step_of_their_pattern() -> None:
    from vnetbench.layout import build_layout
    from vnetbench.run.background import background_plans
    from vnetbench.store.records import MeasurementRecord

    plan = make_plan(parse_spec(BASE), "c0ffee00", 1)
    campaign, layout = plan.variants[0], plan.layouts[0] if plan.layouts else None
    layout = layout or build_layout(campaign, "c0ffee00")
    step = next(s for s in plan.steps if s.measurement == "sweep")
    base = MeasurementRecord(
        campaign_id="c0ffee00", key=step.key, step_key=step.key, seq=step.seq, repetition=1,
        pattern=step.pattern, pattern_kind=step.pattern_kind, group_kind=step.group_kind, group_size=1,
        measurement="sweep", kind="pps", src="a", dst="b", placement="same-host",
    )  # fmt: skip
    ports = iter(range(6000, 6010))
    plans = background_plans(step, campaign, layout, base, lambda: next(ports))
    assert len(plans) == 1
    rec, cmds = plans[0]
    assert rec.key == f"{step.key}/bg/bg/c>d" and rec.group_kind == "background"
    assert (rec.kind, rec.src, rec.dst, rec.measurement) == ("background", "c", "d", "bg")
    assert rec.offered_bps == 1000 * 64 * 8
    dst = layout.address_of("d", "c")
    assert cmds.client[cmds.client.index("--dst") + 1] == f"{dst}:6000"
    assert cmds.client[cmds.client.index("--duration") + 1] == "1.5"  # the step's 1 s + 0.5 s tail
    assert cmds.port == 6000
    # a pattern without background gets none
    cs = next(s for s in plan.steps if s.kind == "cpushare")
    assert background_plans(cs, campaign, layout, base, lambda: next(ports)) == []
