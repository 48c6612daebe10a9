"""`analyze_campaign` on synthetic store frames (no root): the campaign analysis must give what the
library gives on the same numbers, and its own steps (transient removal, groups, factor columns,
reproducibility, placement) must compute what they say."""

from __future__ import annotations

import json
from typing import Any

import numpy as np
import pandas as pd
import pytest

from tests.helpers.campaign_frames import ONL_SPEC, PAIRS_SPEC, _frames, _row, onl_rows
from tests.helpers.stats_app import ONL
from vnetbench.analysis import campaign_data as cd
from vnetbench.analysis.campaign_analysis import Settings, analyze_campaign
from vnetbench.report.analysis_tables import analysis_parts

NS = 10**9


@pytest.fixture(scope="module")
def onl() -> dict[str, Any]:
    """ONL Table 3 as a campaign (tests/helpers/campaign_frames.onl_rows), analysed."""
    return analyze_campaign(_frames(ONL_SPEC, onl_rows())).json


def test_campaign_analysis_reproduces_onl_table_4(onl: dict[str, Any]) -> None:
    model = onl["models"][0]
    a = model["anova"]
    assert (
        model["model"] == "one-factor" and model["series"] == "rx · udp" and a["levels"] == list(range(1, 11))
    )
    # Table 4 in percent², here in ratio² (÷ 10⁴); F does not depend on the unit
    assert a["ssa"] * 1e4 == pytest.approx(39981.668, rel=1e-3)
    assert a["sse"] * 1e4 == pytest.approx(129.906, rel=1e-3)
    assert a["sst"] * 1e4 == pytest.approx(40111.574, rel=1e-3)
    assert a["f"] == pytest.approx(1367.886, rel=1e-3)
    assert (a["df_a"], a["df_e"]) == (9, 40)
    # successive differences by the textbook formula: ±t[0.975; 40]·s_e·√(2/5) (not the paper's ±17.66)
    half = 2.021075 * np.sqrt(a["sse"] / 40) * np.sqrt(2 / 5)
    assert [c["half_width"] for c in model["successive_differences"]] == pytest.approx([half] * 9, rel=1e-5)
    assert [c["significant"] for c in model["successive_differences"]] == [False] * 4 + [True] * 5
    cap = model["capacity"]
    assert cap["max_level_under_threshold"] == 5 and cap["recommended"] == 5
    assert cap["first_significant_increase"] == 6
    assert model["truncated"]["levels"] == [6, 7, 8, 9, 10]
    assert model["truncated"]["diagnostics"]["shapiro_p"] > 0.05 > model["diagnostics"]["shapiro_p"]
    json.dumps(onl, allow_nan=False)  # strict JSON


def test_udp_effective_throughput_per_level(onl: dict[str, Any]) -> None:
    rows = {r["receivers"]: r for r in onl["udp_effective_throughput"]}
    table = pd.read_csv(ONL)
    for n in (1, 6, 10):
        loss = table[table["receivers"] == n]["loss"].mean() / 100
        assert rows[n]["effective_throughput_bps"] == pytest.approx((1 - loss) * 1e9, rel=1e-12)
        assert rows[n]["n_flows"] == 5 * n


def test_transient_removal_recomputes_from_samples_after_omit() -> None:
    rows = [
        _row(1, kind="tcp", throughput_bps=99.0),
        _row(2, kind="udp", throughput_bps=99.0, loss_ratio=0.5),
    ]
    samples = pd.DataFrame(
        [(1, t * NS // 2, "throughput_bps", v, None) for t, v in enumerate([10.0, 20.0, 30.0])]
        + [(1, NS, "throughput_bps", 1e6, 0)]  # a per-stream row: not the sum, never used
        + [(2, t * NS // 2, "lost_packets", v, None) for t, v in enumerate([5.0, 1.0, 1.0])]
        + [(2, t * NS // 2, "packets", v, None) for t, v in enumerate([95.0, 99.0, 99.0])],
        columns=["measurement_id", "t_ns", "metric", "value", "stream"],
    )
    flows, record = cd.flow_table(
        pd.DataFrame(rows), samples, pd.DataFrame(columns=["id", "ordinal"]), [], NS // 2
    )
    assert flows.loc[0, "throughput_bps"] == 25.0  # mean of the samples at 0.5 s and 1 s
    assert flows.loc[1, "loss_ratio"] == pytest.approx(2 / 200)
    assert record["samples_dropped"] == 3 and record["flows_recomputed"] == 1


def test_groups_take_the_mean_per_flow_and_jains_index_and_skip_alone_steps() -> None:
    rows = [
        _row(1, kind="tcp", step_key="g", group_kind="together", throughput_bps=30.0),
        _row(2, kind="tcp", step_key="g", group_kind="together", dst="v2", throughput_bps=10.0),
        _row(3, kind="tcp", step_key="a", group_kind="alone", throughput_bps=50.0),
    ]
    flows, _ = cd.flow_table(pd.DataFrame(rows), pd.DataFrame(), pd.DataFrame(columns=["id", "ordinal"]), [])
    groups = cd.group_table(flows, [])
    assert groups["step_key"].tolist() == ["g"]
    g = groups.iloc[0]
    assert (g["throughput_bps"], g["total_throughput_bps"], g["n_flows"]) == (20.0, 40.0, 2)
    assert g["jain_index"] == pytest.approx(40**2 / (2 * (900 + 100)))


def test_a_factor_named_like_a_column_gets_its_own_column() -> None:
    assert cd.factor_columns(["flows", "src", "kind"]) == {
        "flows": "flows",
        "src": "src_factor",
        "kind": "kind_factor",
    }


def test_rebuilds_and_placements_are_compared() -> None:
    rng = np.random.default_rng(1)
    rows, i = [], 0
    for build in (1, 2, 3, 4):
        for rep in (1, 2):
            for dst, placement, rate in (("b", "same-host", 100e6), ("c", "same-site", 50e6)):
                i += 1
                rows.append(_row(i, kind="tcp", measurement="tcp", pattern="p", pattern_kind="pairs", src="a",
                                 dst=dst, placement=placement, build_id=build, repetition=rep,
                                 throughput_bps=rate * (1 + 0.001 * rng.standard_normal())))  # fmt: skip
    result = analyze_campaign(_frames(PAIRS_SPEC, rows, builds=4), Settings()).json
    repro = {r["metric"]: r for r in result["reproducibility"]}
    assert set(repro) == {"tcp a→b throughput_bps", "tcp a→c throughput_bps"}
    assert all(r["n_first"] == 2 and r["n_rebuilds"] == 3 for r in repro.values())
    assert {r["verdict"] for r in repro.values()} == {"reproducible"}  # 0.1 % noise, 5 % tolerance
    place = result["placement"][0]
    assert [c["category"] for c in place["categories"]] == ["same-host", "same-site"]
    pair = place["pairs"][0]
    assert pair["difference"] == pytest.approx(-50e6, rel=0.01) and pair["ci_high"] < 0
    assert result["models"] == []  # no factors: no model


def _rebuilt_rows(shift: float) -> list[dict[str, Any]]:
    """a→b TCP over 3 builds, 2 repetitions each; builds 2 and 3 are `shift` above build 1."""
    rng = np.random.default_rng(2)
    rows, i = [], 0
    for build in (1, 2, 3):
        for rep in (1, 2):
            i += 1
            rate = 100e6 * (1 + (shift if build > 1 else 0) + 0.001 * rng.standard_normal())
            rows.append(_row(i, kind="tcp", measurement="tcp", pattern="p", pattern_kind="pairs", src="a",
                             dst="b", placement="same-host", build_id=build, repetition=rep,
                             throughput_bps=rate))  # fmt: skip
    return rows


def test_reproducibility_thresholds_come_from_the_spec() -> None:
    """A 3 % shift after rebuilding: within the default ±5 %, outside `reproducibility_tolerance: 0.01`."""
    frames = _frames(PAIRS_SPEC, _rebuilt_rows(0.03), builds=3)
    (default,) = analyze_campaign(frames).json["reproducibility"]
    assert default["verdict"] == "reproducible"
    strict_spec = PAIRS_SPEC + "analysis: {reproducibility_tolerance: 0.01, reproducibility_cv_max: 0.02}\n"
    strict = analyze_campaign(_frames(strict_spec, _rebuilt_rows(0.03), builds=3))
    (verdict,) = strict.json["reproducibility"]
    assert verdict["verdict"] == "not reproducible"
    intro = next(p for p in analysis_parts(strict) if p.title == "Reproducibility across rebuilds").intro
    assert "≤ 2 %" in intro and "±1 %" in intro


def test_outlier_policy_is_explicit() -> None:
    rows, i = [], 0
    for n in (1, 2):
        for rep in range(1, 7):
            i += 1
            loss = 0.5 if (n, rep) == (2, 6) else 0.01 * n + 0.0001 * rep
            rows.append(
                _row(i, step_key=f"{n}/{rep}", repetition=rep, factors={"receivers": n}, loss_ratio=loss)
            )
    spec = ONL_SPEC.replace("levels: [1]", "levels: [1, 2]").replace(
        "destinations: [v1]", "destinations: [v1, v2]"
    )
    spec = spec.replace("nodes: [{name: c, host: a}, {name: v1, host: pc12}]",
                        "nodes: [{name: c, host: a}, {name: v1, host: pc12}, {name: v2, host: pc12}]")  # fmt: skip
    spec = spec.replace(
        "links: [{endpoints: [c, v1]}]", "links: [{endpoints: [c, v1]}, {endpoints: [c, v2]}]"
    )
    kept = analyze_campaign(_frames(spec, rows), Settings(response="loss_ratio")).json
    assert kept["outliers"]["excluded"] == [] and kept["models"][0]["anova"]["n"] == 12
    cut = analyze_campaign(_frames(spec, rows), Settings(response="loss_ratio", outliers="iqr")).json
    assert [e["step_key"] for e in cut["outliers"]["excluded"]] == ["2/6"]
    assert "iqr" in cut["outliers"]["excluded"][0]["reason"] and cut["models"][0]["anova"]["n"] == 11


@pytest.mark.parametrize(
    ("name", "design", "steps"),
    [
        ("onl-tcp-factorial", "2k-r", 2**3 * 3),
        ("onl-udp-receivers", "one-factor", 8 * 5),
        ("exogeni-exp5", None, 6 * 3 * 2 * 3),
        ("geni-categories", None, 5 * 3 * 2),
    ],
)
def test_the_design_scenarios_plan_as_documented(name: str, design: str | None, steps: int) -> None:
    from vnetbench.plan import make_plan
    from vnetbench.scenarios import get_scenario
    from vnetbench.spec.loader import parse_spec

    sc = get_scenario(name)
    assert sc.study and sc.summary
    loaded = parse_spec(sc.text, f"scenario:{name}")
    plan = make_plan(loaded, "00000000", 1)
    assert (loaded.campaign.design.kind if loaded.campaign.design else None) == design
    assert len(plan.steps) == steps
    if name == "exogeni-exp5":  # a rebuild before every repetition but the first
        assert sum(s.rebuild_before for s in plan.steps) == 5


def test_a_campaign_over_days_gets_hour_and_weekday_profiles() -> None:
    hour = 3600 * NS
    rows = [
        _row(
            i,
            kind="rtt",
            measurement="rtt",
            pattern="p",
            pattern_kind="pairs",
            rtt_mean_ns=1e6 * (1 + (i % 24 >= 12)),
            started_utc_ns=i * hour,
            repetition=i + 1,
        )
        for i in range(72)
    ]
    result = analyze_campaign(_frames(PAIRS_SPEC, rows), Settings()).json
    views = {v["period"]: v["rows"] for v in result["periodic"]}
    assert set(views) == {"hour", "weekday"}
    by_hour = {r["hour"]: r for r in views["hour"]}
    assert by_hour[3]["mean"] == 1e6 and by_hour[15]["mean"] == 2e6 and by_hour[15]["n"] == 3
    assert [r["day"] for r in views["weekday"]] == [
        "Thursday",
        "Friday",
        "Saturday",
    ]  # 1970-01-01 was a Thursday


def test_a_periodic_campaign_gets_its_change_points() -> None:
    """40 hourly TCP runs of one pair, 1 % noise, −10 % from run 24 on: one change point at run 24 ± 2
    in `analyze --json`; a series of 4 runs is too short to search."""
    hour = 3600 * NS
    g = np.random.default_rng(40)
    level = [94e6 * (0.9 if i >= 24 else 1.0) * (1 + g.normal(0, 0.01)) for i in range(40)]
    rows = [
        _row(i, kind="tcp", measurement="tcp", pattern="p", pattern_kind="pairs", src="a", dst="b",
             throughput_bps=level[i], started_utc_ns=i * hour, repetition=i + 1)
        for i in range(40)
    ] + [
        _row(100 + i, kind="tcp", measurement="tcp", pattern="p", pattern_kind="pairs", src="a", dst="c",
             throughput_bps=50e6 + i, started_utc_ns=i * hour, repetition=i + 1)
        for i in range(4)
    ]  # fmt: skip
    result = analyze_campaign(_frames(PAIRS_SPEC, rows), Settings()).json
    [series] = result["change_points"]
    assert series["series"] == "p · tcp · a→b" and series["points"] == 40
    [cp] = series["change_points"]
    assert abs(cp["index"] - 24) <= 2 and cp["time"] == cp["index"] * hour
    assert cp["relative_change"] == pytest.approx(-0.1, abs=0.02)


FACTORIAL_SPEC = """
name: ff
topology:
  nodes: [{name: c}, {name: v1}]
  links: [{endpoints: [c, v1]}]
measurements: [{name: udp, kind: udp, duration: 1s, rate: 1gbit}]
patterns: [{name: rx, kind: star, source: c, destinations: [v1], alone: false, measurements: [udp]}]
factors:
  - {name: n, path: measurements.udp.streams, levels: [1, 2, 3]}
  - {name: size, path: measurements.udp.length, levels: [100, 1400]}
design: {kind: full-factorial, replications: 2}
analysis: {response: loss_ratio}
"""


def test_a_full_factorial_campaign_gets_anova_and_successive_levels_per_factor() -> None:
    from vnetbench.analysis.contrasts import factor_successive_differences
    from vnetbench.analysis.full_factorial import full_factorial_anova

    cells = {(1, 100): [10, 12], (1, 1400): [14, 15], (2, 100): [20, 23], (2, 1400): [25, 24],
             (3, 100): [21, 20], (3, 1400): [30, 33]}  # fmt: skip
    rows, i = [], 0
    for (n, size), values in cells.items():
        for rep, v in enumerate(values, start=1):
            i += 1
            rows.append(_row(i, step_key=f"{n}/{size}/{rep}", repetition=rep, factors={"n": n, "size": size},
                             loss_ratio=v / 100))  # fmt: skip
    result = analyze_campaign(_frames(FACTORIAL_SPEC, rows)).json
    (model,) = result["models"]
    assert model["model"] == "full-factorial" and model["factors"] == ["n", "size"]
    frame = pd.DataFrame([{"n": n, "size": s, "y": v / 100} for (n, s), vs in cells.items() for v in vs])
    lib = full_factorial_anova(frame, "y", ["n", "size"])
    assert [t["ss"] for t in model["result"]["terms"]] == pytest.approx([t.ss for t in lib.terms])
    assert model["result"]["sse"] == pytest.approx(lib.sse)
    steps = model["successive_differences"]
    assert set(steps) == {"n", "size"}
    expect = factor_successive_differences(lib, "n")
    assert [c["ci"] for c in steps["n"]] == [pytest.approx([c.ci_low, c.ci_high]) for c in expect]
    assert len(steps["size"]) == 1


TWO_K_SPEC = """
name: tk
topology:
  nodes: [{name: c}, {name: v1}]
  links: [{endpoints: [c, v1]}]
measurements: [{name: tcp, kind: tcp, duration: 3s}]
patterns: [{name: rx, kind: star, source: c, destinations: [v1], alone: false, measurements: [tcp]}]
factors:
  - {name: cc, path: measurements.tcp.congestion, levels: [reno, cubic]}
  - {name: length, path: measurements.tcp.duration, levels: [3s, 6s]}
design: {kind: 2k-r, replications: 2}
"""


def test_a_2k_design_codes_the_first_listed_level_minus_one_whatever_the_run_order() -> None:
    """Text levels follow the spec's list, not the (randomised) order the runs happened in: the first
    run here is cubic/6s, the list says reno, 3s. cubic adds 2 Mbit/s, 6 s adds 1 Mbit/s."""
    runs = [("cubic", "6s"), ("reno", "3s"), ("cubic", "3s"), ("reno", "6s")] * 2
    rows = [
        _row(i, step_key=f"{cc}/{length}/{i}", repetition=1 + i // 4, factors={"cc": cc, "length": length},
             pattern="rx", kind="tcp", measurement="tcp",
             throughput_bps=10e6 + (2e6 if cc == "cubic" else 0) + (1e6 if length == "6s" else 0) + i * 1e3)
        for i, (cc, length) in enumerate(runs)
    ]  # fmt: skip
    result = analyze_campaign(_frames(TWO_K_SPEC, rows), Settings(response="throughput_bps")).json
    (model,) = result["models"]
    coding = model["result"]["coding"]
    assert coding == {"cc": {"-1": "reno", "+1": "cubic"}, "length": {"-1": "3s", "+1": "6s"}}
    q = {e["name"]: e["q"] for e in model["result"]["effects"]}
    assert q["cc"] == pytest.approx(1e6, rel=0.01) and q["length"] == pytest.approx(0.5e6, rel=0.01)


def test_target_precision_plans_repetitions_per_treatment() -> None:
    """ONL's Table 3 as a pilot at ±5 %: 10 receivers (mean 74.88 %, SD 2.007 points over 5
    replications) need n with t[0.975; n−1]·2.007/√n ≤ 3.744: n = 4 (3.19), as `stats` says."""
    frames = _frames(ONL_SPEC, onl_rows())
    result = analyze_campaign(frames, Settings(target_precision=0.05, response="loss_ratio")).json
    [plan] = result["plan"]
    by_level = {t["receivers"]: t for t in plan["treatments"]}
    assert by_level[10]["repetitions_needed"] == 4 and by_level[10]["n"] == 5
    assert by_level[10]["mean"] == pytest.approx(0.7488)
    assert "plan" not in analyze_campaign(frames, Settings(response="loss_ratio")).json
