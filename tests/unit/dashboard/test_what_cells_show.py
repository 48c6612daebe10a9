"""What the campaign page's grid says about results like those of the scenario campaigns (docs/scenarios),
asked through a real uvicorn server on 127.0.0.1 over a real SQLite store: the expected numbers are computed
here from the values written, not taken from the dashboard's code."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import httpx
import pytest

from tests.helpers.dashboard_server import serving
from tests.helpers.dashboard_stores import record
from tests.helpers.stores import campaign_store
from vnetbench.dashboard import create_app

# onl-udp-receivers (b0bfad94), shrunk: constant-rate UDP flows of 20 Mbit/s into a host behind a
# 115 mbit link, and a TCP flow (no offered rate) beside them
SPEC = """\
name: rates
topology:
  nodes: [{name: client}, {name: vm1}, {name: vm2}]
  switches: [{name: br}]
  links:
    - {endpoints: [client, br], rate: 115mbit}
    - {endpoints: [vm1, br]}
    - {endpoints: [vm2, br]}
measurements:
  - {name: udp, kind: udp, duration: 3s, rate: 20mbit, length: 1470}
  - {name: tcp, kind: tcp, duration: 3s}
patterns:
  - {name: p, kind: pairs, pairs: [[client, vm1], [client, vm2]], measurements: [udp, tcp]}
"""
LINK_MAX_BPS = 111_805_555.6  # what the store holds for a 115 mbit link (the overhead model's maximum)
OFFERED_BPS = 20e6


@pytest.fixture
def client(tmp_path: Path):
    store = campaign_store(tmp_path / "r.db", "r1", "finished", spec_text=SPEC)

    def flow(seq: int, measurement: str, dst: str, throughput: float, offered: float | None):
        base = record("r1", seq, 1, measurement, "client", dst, {"throughput_bps": throughput})
        return replace(base, expected_max_bps=LINK_MAX_BPS, offered_bps=offered)

    store.save_measurements(
        [
            flow(0, "udp", "vm1", 19_994_620.0, OFFERED_BPS),  # all it was offered (0 % loss)
            flow(1, "udp", "vm2", 9_000_000.0, OFFERED_BPS),  # lost more than half
            flow(2, "tcp", "vm1", 105_000_000.0, None),  # TCP takes what the link gives
        ]
    )
    store.close()
    with serving(create_app(str(tmp_path / "r.db"))) as url, httpx.Client(base_url=url) as test_client:
        yield test_client


def _cells(client: httpx.Client, measurement: str) -> dict[str, dict]:
    grids = client.get("/api/campaigns/r1").json()["grids"]
    (grid,) = [g for g in grids if g["measurement"] == measurement and g["metric"] == "throughput_bps"]
    return {c["dst"]: c for c in grid["cells"]}


def test_a_constant_rate_flow_is_held_against_its_offered_rate_not_the_link(client: httpx.Client) -> None:
    # b0bfad94 client→vm1 received 19.99 of its 20 Mbit/s: the grid showed it critical, '17.9 % of max'
    udp = _cells(client, "udp")
    assert udp["vm1"]["compared"] == pytest.approx(19_994_620.0 / 20e6)
    assert udp["vm1"]["compared_as"] == "share of the offered rate"
    assert udp["vm1"]["level"] == "ok"
    assert udp["vm2"]["compared"] == pytest.approx(0.45) and udp["vm2"]["level"] == "critical"


def test_a_flow_without_an_offered_rate_is_still_held_against_the_model_maximum(client: httpx.Client) -> None:
    tcp = _cells(client, "tcp")["vm1"]
    assert tcp["compared"] == pytest.approx(105e6 / LINK_MAX_BPS)
    assert tcp["compared_as"] == "share of the expected maximum" and tcp["level"] == "ok"


# ec2-cpushare (dad499f8), shrunk: a cpushare measurement (no metric with a default threshold) beside a
# probe-rtt one
CPU_SPEC = """\
name: cpu
topology:
  nodes: [{name: small, cpu: 0.45}, {name: peer}]
  switches: [{name: br}]
  links:
    - {endpoints: [small, br], rate: 1gbit}
    - {endpoints: [peer, br], rate: 1gbit}
measurements:
  - {name: cpu, kind: cpushare, duration: 5s, threshold: 100us}
  - {name: rtt, kind: probe-rtt, count: 20, interval: 2ms, size: 64}
patterns:
  - {name: share, kind: nodes, nodes: [small], measurements: [cpu]}
  - {name: receive, kind: pairs, pairs: [[peer, small]], measurements: [rtt]}
"""


def test_a_measurement_without_a_thresholded_metric_is_named_not_left_out(tmp_path: Path) -> None:
    # dad499f8: the cpu measurement's 4 results appeared nowhere on the campaign page, without a word
    store = campaign_store(tmp_path / "c.db", "c1", "finished", spec_text=CPU_SPEC)
    cpu = {"cpu_share_ratio": 0.45, "gaps_count": 120.0, "steal_ratio": 0.0}
    store.save_measurements(
        [
            record("c1", 0, 1, "cpu", "small", "small", cpu),
            record("c1", 1, 1, "rtt", "peer", "small", {"rtt_mean_ns": 27_000.0, "loss_ratio": 0.0}),
        ]
    )
    store.close()
    with serving(create_app(str(tmp_path / "c.db"))) as url, httpx.Client(base_url=url) as client:
        answer = client.get("/api/campaigns/c1").json()
        page = client.get("/campaigns/c1").text
    assert {g["measurement"] for g in answer["grids"]} == {"rtt"}
    assert answer["without_grid"] == [{"measurement": "cpu", "metrics": sorted(cpu)}]
    assert 'id="without-grid"' in page


def test_a_pairs_series_says_which_pattern_and_offered_rate_each_point_had(tmp_path: Path) -> None:
    # quickstart efd6a61d: vm1→vm2 tcp twice per repetition (pattern 'connections' and the star's alone
    # flow), openstack-bridges a8dc3539: a sweep of offered rates; the table showed only 'repetition 1'
    store = campaign_store(tmp_path / "p.db", "p1", "finished", spec_text=SPEC)
    points = [
        (0, "udp", "p", 144_000.0, 144_005.0),
        (1, "udp", "p", 1_440_000.0, 1_440_009.0),
        (2, "udp", "p-bg", 144_000.0, 143_998.0),
    ]
    store.save_measurements(
        [
            replace(
                record("p1", seq, 1, m, "client", "vm1", {"throughput_bps": got}),
                key=f"k{seq}",
                pattern=pattern,
                offered_bps=offered,
            )
            for seq, m, pattern, offered, got in points
        ]
    )
    store.close()
    params = {"measurement": "udp", "src": "client", "dst": "vm1", "metric": "throughput_bps"}
    with serving(create_app(str(tmp_path / "p.db"))) as url, httpx.Client(base_url=url) as client:
        series = client.get("/api/campaigns/p1/series", params=params).json()
    assert [(p["pattern"], p["offered_bps"], p["value"]) for p in series["points"]] == [
        (pattern, offered, got) for _, _, pattern, offered, got in points
    ]


# openstack-bridges (a8dc3539), shrunk: a pair measured alone and, in another pattern, beside a
# background flow
BG_SPEC = """\
name: bg
topology:
  nodes: [{name: s1}, {name: r1}, {name: s2}, {name: r2}]
  switches: [{name: sw}]
  links:
    - {endpoints: [s1, sw]}
    - {endpoints: [r1, sw], rate: 1gbit}
    - {endpoints: [s2, sw]}
    - {endpoints: [r2, sw], rate: 1gbit}
measurements:
  - {name: udp, kind: udp, duration: 1s, rate: 500mbit}
  - {name: bg, kind: background, pps: 20000, size: 1472, pairs: [[s2, r2]]}
patterns:
  - {name: alone, kind: pairs, pairs: [[s1, r1]], measurements: [udp]}
  - {name: with-bg, kind: pairs, pairs: [[s1, r1]], measurements: [udp], background: [bg]}
"""


def test_a_flow_beside_background_traffic_is_not_shown_as_alone(tmp_path: Path) -> None:
    # a8dc3539: the 'sweep' grid (alone) showed lb-s1→lb-r1 404 Mbit/s, the newest point of pattern lb-bg
    # (with a background flow); the newest point measured alone was 712 Mbit/s
    store = campaign_store(tmp_path / "b.db", "b1", "finished", spec_text=BG_SPEC)

    def row(seq: int, measurement: str, src: str, dst: str, pattern: str, group_kind: str, bps: float):
        base = record("b1", seq, 1, measurement, src, dst, {"throughput_bps": bps}, group_kind=group_kind)
        return replace(base, key=f"k{seq}", step_key=f"s{seq}" if seq < 2 else "s1", pattern=pattern)

    store.save_measurements(
        [
            row(0, "udp", "s1", "r1", "alone", "single", 480e6),
            row(1, "udp", "s1", "r1", "with-bg", "single", 300e6),  # newer, beside the background flow
            row(2, "bg", "s2", "r2", "with-bg", "background", 176e6),
        ]
    )
    store.close()
    with serving(create_app(str(tmp_path / "b.db"))) as url, httpx.Client(base_url=url) as client:
        grids = client.get("/api/campaigns/b1").json()["grids"]
        cells = {
            (g["measurement"], g["contended"], c["src"], c["dst"]): (c["value"], c["count"])
            for g in grids
            if g["metric"] == "throughput_bps"
            for c in g["cells"]
        }
        params = {"measurement": "udp", "src": "s1", "dst": "r1", "metric": "throughput_bps"}
        alone = client.get("/api/campaigns/b1/series", params=params).json()["points"]
        beside = client.get("/api/campaigns/b1/series", params={**params, "contended": "true"}).json()
    assert cells == {
        ("udp", False, "s1", "r1"): (480e6, 1),
        ("udp", True, "s1", "r1"): (300e6, 1),
        ("bg", True, "s2", "r2"): (176e6, 1),
    }
    assert [p["value"] for p in alone] == [480e6]
    assert [p["value"] for p in beside["points"]] == [300e6]
