"""Campaign `design:`s for two factors (with or without replication), 2^k with r = 1 and 2^(k−p)
fractions: the plan makes exactly the runs of the design, bad designs are located spec errors, and
`analyze` fits the design's model (expected numbers: the hand cases of test_two_factor and
test_fractional)."""

from __future__ import annotations

import itertools

import pytest

from tests.helpers.campaign_frames import _frames, _row
from vnetbench.analysis.campaign_analysis import Settings, analyze_campaign
from vnetbench.plan import make_plan
from vnetbench.spec import parse_spec
from vnetbench.spec.loader import SpecInvalid

BASE = """
name: d
topology:
  nodes: [{name: a}, {name: b}]
  links: [{name: ab, endpoints: [a, b], rate: 100mbit}]
measurements:
  - {name: tcp, kind: tcp, duration: 1s, streams: 1, window: 128k}
patterns:
  - {name: p, kind: pairs, pairs: [[a, b]], measurements: [tcp]}
"""

FRACTION = (
    BASE
    + """
factors:
  - {name: cc, path: measurements.tcp.congestion, levels: [cubic, reno]}
  - {name: rate, path: topology.links.ab.rate, levels: [10mbit, 100mbit]}
  - {name: streams, path: measurements.tcp.streams, levels: [1, 2]}
  - {name: window, path: measurements.tcp.window, levels: [128k, 256k]}
design: {kind: 2k-p, generators: [D=ABC], replications: 1}
"""
)

TWO_FACTOR = (
    BASE
    + """
factors:
  - {name: cc, path: measurements.tcp.congestion, levels: [cubic, reno, bbr]}
  - {name: rate, path: topology.links.ab.rate, levels: [10mbit, 100mbit]}
design: {kind: two-factor, replications: 1}
"""
)


def test_a_half_fraction_plans_its_eight_runs() -> None:
    plan = make_plan(parse_spec(FRACTION), "c0ffee00", seed=1)
    runs = {tuple(s.factors.values()) for s in plan.steps}
    assert len(runs) == 8 and len(plan.steps) == 8
    sign = {"cubic": -1, "reno": 1, "10mbit": -1, "100mbit": 1, 1: -1, 2: 1, "128k": -1, "256k": 1}
    assert all(sign[d] == sign[a] * sign[b] * sign[c] for a, b, c, d in runs)  # D = ABC in every run


def test_two_factor_without_replication_plans_each_cell_once() -> None:
    plan = make_plan(parse_spec(TWO_FACTOR), "c0ffee00", seed=1)
    assert len(plan.steps) == 6 and {s.repetition for s in plan.steps} == {1}


@pytest.mark.parametrize(
    ("spec", "needle"),
    [
        (FRACTION.replace("generators: [D=ABC], ", ""), "a 2k-p design needs generators"),
        (FRACTION.replace("D=ABC", "D=ABX"), "'D=ABX' is not a generator of factors A, B, C, D"),
        (TWO_FACTOR.replace("kind: two-factor", "kind: two-factor, generators: [C=AB]"), "generators are for kind 2k-p"),
        (FRACTION.replace("levels: [1, 2]", "levels: [1, 2, 4]"), "a 2k-p design needs exactly two levels"),
        (TWO_FACTOR.replace("design:", "  - {name: s, path: measurements.tcp.streams, levels: [1, 2]}\ndesign:"),
         "two-factor needs exactly two factors, found 3"),
    ],
)  # fmt: skip
def test_bad_designs_are_spec_errors(spec: str, needle: str) -> None:
    with pytest.raises(SpecInvalid) as err:
        make_plan(parse_spec(spec), "c0ffee00", seed=1)
    assert any(needle in str(e) for e in err.value.errors), err.value.errors


def test_analyze_fits_the_fraction_with_its_alias_chains() -> None:
    """y = 10 + 3A + 2B + AB + 0.5D (Mbit/s) in the runs of D = ABC: q_A = 3 (A + BCD), q_ABC = 0.5
    (ABC + D), SST = 114 (test_fractional)."""
    levels = {
        "cc": ["cubic", "reno"],
        "rate": ["10mbit", "100mbit"],
        "streams": [1, 2],
        "window": ["128k", "256k"],
    }
    rows = []
    for i, (c, b, a) in enumerate(itertools.product([-1, 1], repeat=3)):
        d = a * b * c
        factors = {name: lv[(s + 1) // 2] for (name, lv), s in zip(levels.items(), (a, b, c, d), strict=True)}
        y = (10 + 3 * a + 2 * b + a * b + 0.5 * d) * 1e6
        rows.append(_row(i, kind="tcp", measurement="tcp", pattern="p", pattern_kind="pairs", src="a", dst="b",
                         factors=factors, throughput_bps=y, step_key=f"s{i}"))  # fmt: skip
    result = analyze_campaign(_frames(FRACTION, rows), Settings(response="throughput_bps")).json
    (model,) = result["models"]
    assert model["model"] == "2k-p" and model["defining_relation"] == "I = ABCD"
    q = {e["letters"]: e for e in model["result"]["effects"]}
    assert q["A"]["q"] == pytest.approx(3e6) and q["A"]["name"] == "A + BCD"
    assert q["ABC"]["q"] == pytest.approx(0.5e6) and model["result"]["sst"] == pytest.approx(114e12)


def test_analyze_fits_two_factors_without_replication() -> None:
    """test_two_factor's hand case (3 5 10 / 5 9 12) as throughput in Mbit/s: F_A = 37, F_B = 16."""
    y = {("cubic", "10mbit"): 3, ("reno", "10mbit"): 5, ("bbr", "10mbit"): 10,
         ("cubic", "100mbit"): 5, ("reno", "100mbit"): 9, ("bbr", "100mbit"): 12}  # fmt: skip
    rows = [
        _row(i, kind="tcp", measurement="tcp", pattern="p", pattern_kind="pairs", src="a", dst="b",
             factors={"cc": cc, "rate": rate}, throughput_bps=v * 1e6, step_key=f"s{i}")
        for i, ((cc, rate), v) in enumerate(y.items())
    ]  # fmt: skip
    result = analyze_campaign(_frames(TWO_FACTOR, rows), Settings(response="throughput_bps")).json
    (model,) = result["models"]
    assert model["model"] == "two-factor"
    assert [t["f"] for t in model["result"]["terms"]] == pytest.approx([37, 16])
