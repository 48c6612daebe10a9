"""Sweeps, patterns and lines on the dashboard, asked through a real uvicorn server on 127.0.0.1 over a
real SQLite store written with results shaped like openstack-bridges (tests/helpers/dashboard_sweeps.py:
a Linux bridge's fabric passes 60 K packets/s; the pair is swept alone, beside a background flow (lb-bg)
and by two tenants at once (lb-2tenants)). The expected knees, ratios and lines are worked out here
from the values written, not taken from the dashboard's code."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import httpx
import pytest

from tests.helpers.dashboard_server import serving
from tests.helpers.dashboard_stores import record
from tests.helpers.dashboard_sweeps import RATES, SIZES, mixed_patterns_store, sweep_store
from tests.helpers.stores import campaign_store
from vnetbench.dashboard import create_app


@pytest.fixture(scope="module")
def url(tmp_path_factory):
    path = tmp_path_factory.mktemp("sweeps") / "o.db"
    sweep_store(path)
    with serving(create_app(str(path))) as base:
        yield base


def _grids(url: str) -> dict[tuple, dict]:
    grids = httpx.get(f"{url}/api/campaigns/o1").json()["grids"]
    return {(g["measurement"], g["contended"], g["pattern"], g["metric"]): g for g in grids}


def _cell(grid: dict, src: str, dst: str) -> dict:
    (cell,) = [c for c in grid["cells"] if (c["src"], c["dst"]) == (src, dst)]
    return cell


def test_a_sweep_cell_shows_the_knee_of_its_newest_complete_sweep(url: str) -> None:
    # before: the cell was the newest row, repetition 4's 18-byte 10 K pps point (all lost), or in a
    # finished campaign the 1472-byte 200 K pps point, past the fabric's 60 K by design
    grids = _grids(url)
    tput = _cell(grids[("sweep", False, None, "throughput_bps")], "lb-s1", "lb-r1")
    assert tput["text"] == ["18 B: knee 60 K pps", "1472 B: knee 60 K pps"]
    assert tput["repetition"] == 3  # repetition 4 is not complete
    assert tput["sweep"]["in_progress"] == {"repetition": 4, "points": 2}
    assert tput["sweep"]["knees_pps"] == {"18": 60000.0, "1472": 60000.0}
    assert tput["sweep"]["ceilings_pps"] == pytest.approx({"18": 60000.0, "1472": 60000.0})
    # against the best knee of repetitions 1 and 2 (60 K each): 60 K / 60 K
    assert tput["sweep"]["earlier_sweeps"] == 2
    assert (tput["compared"], tput["level"]) == (1.0, "ok")
    loss = _cell(grids[("sweep", False, None, "loss_ratio")], "lb-s1", "lb-r1")
    assert loss["text"] == tput["text"]
    # within the fabric's 60 K pps: 1, 10, 30 and 60 K pps of both sizes, none lost; 100 K and 200 K
    # (70 % lost) are beyond it and do not colour the cell
    assert loss["sweep"]["points_within_capacity"] == 8
    assert (loss["compared"], loss["level"]) == (0.0, "ok")


def test_a_knee_that_fell_against_the_earlier_sweeps_colours_the_cell(url: str) -> None:
    grids = _grids(url)
    cell = _cell(grids[("sweep", True, "lb-bg", "throughput_bps")], "lb-s1", "lb-r1")
    assert cell["text"] == ["18 B: knee 30 K pps", "1472 B: knee 10 K pps"]
    # 1472 B: 10 K against the earlier best 30 K = 0.33 (critical: <= 0.5); 18 B: 30 K / 30 K
    assert cell["compared"] == pytest.approx(10000 / 30000)
    assert cell["level"] == "critical" and cell["levels"]["critical"] == 0.5
    assert cell["compared_as"] == "the knee against the best knee of the 2 earlier complete sweeps"
    loss = _cell(grids[("sweep", True, "lb-bg", "loss_ratio")], "lb-s1", "lb-r1")
    # the step's flows together within the fabric's 60 K pps: 1, 10 and 30 K beside the background's
    # 20 K (60 K + 20 K is beyond), of both sizes; the worst, 1472 B at 30 K pps: 1 - 10/30 lost
    assert loss["sweep"]["points_within_capacity"] == 6
    assert loss["compared"] == pytest.approx(1 - 10000 / 30000) and loss["level"] == "critical"


def test_tenants_share_the_capacity_their_loss_is_judged_against(url: str) -> None:
    # 2 tenants at 30 K pps each fill the 60 K fabric; at 60 K each (120 K together) they lose half,
    # by design: that point is beyond the capacity and does not colour the cell
    grids = _grids(url)
    loss = _cell(grids[("sweep", True, "lb-2tenants", "loss_ratio")], "lb-s1", "lb-r1")
    assert loss["sweep"]["points_within_capacity"] == 6  # 1, 10 and 30 K pps of both sizes
    assert (loss["compared"], loss["level"]) == (0.0, "ok")


def test_the_first_sweep_is_coloured_by_its_loss_within_the_paths_capacity(url: str) -> None:
    grids = _grids(url)
    cell = _cell(grids[("sweep", False, None, "throughput_bps")], "veth-s", "veth-r")
    assert cell["text"] == ["18 B: knee 200 K pps", "1472 B: knee 60 K pps"]
    assert cell["sweep"]["earlier_sweeps"] == 0
    # a 1 gbit link counting 1514-byte frames passes 82.6 K pps of 1472 bytes: 100 K and 200 K are
    # beyond it; every 18-byte rate is within (200 K pps of 18 bytes: 28.8 of the model's 300 Mbit/s)
    assert cell["sweep"]["points_within_capacity"] == 10
    assert cell["compared"] == 0.0 and cell["level"] == "ok"
    assert cell["compared_as"].startswith("first complete sweep: the worst loss at the 10 of 12")


def test_contended_cells_are_one_per_pattern(url: str) -> None:
    # before: one '(with others)' cell for lb-s1→lb-r1 merging lb-bg and lb-2tenants
    grids = _grids(url)
    contended = {(k[2], k[3]) for k in grids if k[0] == "sweep" and k[1]}
    assert contended == {
        ("lb-bg", "throughput_bps"),
        ("lb-bg", "loss_ratio"),
        ("lb-2tenants", "throughput_bps"),
        ("lb-2tenants", "loss_ratio"),
    }
    tenants = grids[("sweep", True, "lb-2tenants", "throughput_bps")]
    assert {(c["src"], c["dst"], c["pattern"]) for c in tenants["cells"]} == {
        ("lb-s1", "lb-r1", "lb-2tenants"),
        ("lb-s2", "lb-r2", "lb-2tenants"),
    }
    assert {c["sweep"]["knees_pps"]["1472"] for c in tenants["cells"]} == {30000.0}
    # each pattern's own count: 3 repetitions x 12 points
    assert _cell(grids[("sweep", True, "lb-bg", "loss_ratio")], "lb-s1", "lb-r1")["count"] == 36


def _series(url: str, **params) -> dict:
    query = {"measurement": "sweep", "metric": "throughput_bps", **params}
    return httpx.get(f"{url}/api/campaigns/o1/series", params=query).json()


def test_a_sweeps_series_is_one_line_per_sweep_point(url: str) -> None:
    series = _series(url, src="lb-s1", dst="lb-r1")
    lines = series["lines"]
    assert [line["label"] for line in lines] == [f"{s} B at {r // 1000} K pps" for s in SIZES for r in RATES]
    assert [line["points"] for line in lines] == [4, 4] + [3] * 10  # repetition 4's two points
    assert len({line["key"] for line in lines}) == 12
    for n, line in enumerate(lines):
        mine = [p for p in series["points"] if p["line"] == n]
        size, pps = line["sweep_point"]["size"], line["sweep_point"]["pps"]
        assert {p["offered_bps"] for p in mine} == {float(size * pps * 8)}
        assert {p["pattern"] for p in mine} == {"alone"}
    assert all(line["change_points"] is None for line in lines)  # 3 or 4 runs: too few to search
    assert series["change_points"] is None


def test_a_contended_series_never_joins_two_patterns(url: str) -> None:
    series = _series(url, src="lb-s1", dst="lb-r1", contended="true")
    labels = [line["label"] for line in series["lines"]]
    assert len(labels) == 24
    assert labels[0] == "lb-bg · 18 B at 1 K pps" and labels[12] == "lb-2tenants · 18 B at 1 K pps"
    for n, line in enumerate(series["lines"]):
        assert {p["pattern"] for p in series["points"] if p["line"] == n} == {line["pattern"]}


def test_change_points_are_searched_within_one_line(tmp_path: Path) -> None:
    # a→b measured by two patterns in turn: 'pairs' at 100 Mbit/s (80 from its 11th run on) and 'slow'
    # at 50 Mbit/s, and by 'rare' four times. Over the mixed series every switch between the patterns
    # looked like a change; within each line only the real step is one.
    mixed_patterns_store(tmp_path / "c.db")
    params = {"measurement": "tcp", "src": "a", "dst": "b", "metric": "throughput_bps"}
    with serving(create_app(str(tmp_path / "c.db"))) as base:
        series = httpx.get(f"{base}/api/campaigns/c1/series", params=params).json()
    lines = {line["label"]: line for line in series["lines"]}
    assert list(lines) == ["pairs", "slow", "rare"]
    (step,) = lines["pairs"]["change_points"]
    assert series["points"][step]["pattern"] == "pairs" and series["points"][step]["repetition"] == 11
    assert lines["slow"]["change_points"] == []
    assert lines["rare"]["change_points"] is None and lines["rare"]["ok_points"] == 4
    assert series["change_points"] == [step]
    assert series["min_points_for_change"] == 10


# A designed experiment whose treatments sweep different ladders of rates (a slow bridge's and a fast
# one's): each treatment's sweep is complete when its own 3 points are stored, not the 5 of both.
DESIGN_SPEC = """\
name: ladders
topology:
  nodes: [{name: s}, {name: r}]
  switches: [{name: br}]
  links:
    - {endpoints: [s, br]}
    - {endpoints: [br, r]}
measurements:
  - {name: sweep, kind: pps, rates: [1000], sizes: [1472], duration: 1s}
patterns:
  - {name: alone, kind: pairs, pairs: [[s, r]], measurements: [sweep]}
factors:
  - {name: ladder, path: measurements.sweep.rates, levels: [[1000, 10000, 30000], [30000, 60000, 100000]]}
design: {kind: one-factor, replications: 3}
"""
SLOW, FAST = [1000, 10000, 30000], [30000, 60000, 100000]


def designed_sweep_store(path: Path) -> None:
    """Replications 1 and 2 of both treatments, then the first point of the fast one's third. The slow
    ladder passes 10 K pps; the fast one 60 K in replication 1, 30 K in replication 2."""
    store = campaign_store(path, "x1", "running", spec_text=DESIGN_SPEC)
    runs = [(1, SLOW, 10000), (1, FAST, 60000), (2, SLOW, 10000), (2, FAST, 30000), (3, FAST[:1], 30000)]
    rows = []
    for rep, ladder, passed in runs:
        t = 1 if ladder == SLOW else 2
        for pps in ladder:
            loss = 0.0 if pps <= passed else 1 - passed / pps
            summary = {"loss_ratio": loss, "achieved_pps": float(pps), "received_pps": pps * (1 - loss)}
            summary["throughput_bps"] = summary["received_pps"] * 1472 * 8
            key = f"t{t:03d}/r{rep:03d}/alone/sweep/s>r/s1472/p{pps}"
            base = record("x1", len(rows), rep, "sweep", "s", "r", summary)
            rows.append(
                replace(
                    base,
                    key=key,
                    step_key=key,
                    kind="pps",
                    pattern="alone",
                    factors={"ladder": SLOW if t == 1 else FAST},
                    offered_bps=float(pps * 1472 * 8),
                )
            )
    store.save_measurements(rows)
    store.close()


def test_each_treatment_of_a_designed_sweep_is_complete_on_its_own_points(tmp_path: Path) -> None:
    # before: completeness was judged on both ladders' 5 points, which no treatment sweeps, so the
    # cell stayed 'sweep in progress: 1 of 5 points' however many replications were stored
    designed_sweep_store(tmp_path / "x.db")
    with serving(create_app(str(tmp_path / "x.db"))) as base:
        grids = httpx.get(f"{base}/api/campaigns/x1").json()["grids"]
    (grid,) = [g for g in grids if g["measurement"] == "sweep" and g["metric"] == "throughput_bps"]
    cell = _cell(grid, "s", "r")
    # the newest complete sweep: the fast ladder's replication 2 (its replication 3 has 1 of 3 points)
    assert cell["sweep"]["treatment"] == "ladder=[30000, 60000, 100000]"
    assert cell["sweep"]["points"] == 3
    assert cell["repetition"] == 2 and cell["text"] == ["knee 30 K pps"]
    assert cell["sweep"]["in_progress"] == {"repetition": 3, "points": 1}
    # against its own treatment's earlier sweep (60 K), not the slow ladder's (10 K): 30 K / 60 K
    assert cell["sweep"]["earlier_sweeps"] == 1
    assert cell["sweep"]["earlier_best_knees_pps"] == {"1472": 60000.0}
    assert (cell["compared"], cell["level"]) == (0.5, "critical")
