"""A stored campaign as the analysis reads it (CampaignFrames), built from rows written in the test.

ONL_SPEC is the ONL study's one-factor design (receivers per group) and `onl_rows` its Table 3 as
measurement rows; PAIRS_SPEC two TCP pairs with rebuilds; `_row` one measurement row with defaults
a test overrides; `_frames` the frames of a spec and its rows; `star` the measurement rows of one
star of two flows, alone and together.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from tests.helpers.stats_app import ONL
from vnetbench.analysis import campaign_data as cd

ONL_SPEC = """
name: onl-synthetic
topology:
  hosts: [{name: a}, {name: pc12}]
  nodes: [{name: c, host: a}, {name: v1, host: pc12}]
  links: [{endpoints: [c, v1]}]
measurements: [{name: udp, kind: udp, duration: 1s, rate: 1gbit}]
patterns: [{name: rx, kind: star, source: c, destinations: [v1], alone: false, measurements: [udp]}]
factors: [{name: receivers, path: patterns.rx.count, levels: [1]}]
design: {kind: one-factor, replications: 5}
analysis: {loss_threshold: 0.01, response: loss_ratio}
"""

PAIRS_SPEC = """
name: rebuilt
topology:
  hosts: [{name: h1}, {name: h2}]
  nodes: [{name: a, host: h1}, {name: b, host: h1}, {name: c, host: h2}]
  links: [{endpoints: [a, b]}, {endpoints: [a, c]}]
measurements: [{name: tcp, kind: tcp, duration: 1s}]
patterns: [{name: p, kind: pairs, pairs: [[a, b], [a, c]], measurements: [tcp]}]
schedule: {repetitions: 2, rebuild: true}
"""


def _row(i: int, **values: Any) -> dict[str, Any]:
    base = {
        "id": i, "step_key": f"s{i}", "repetition": 1, "factors": {}, "pattern": "rx", "pattern_kind": "star",
        "group_kind": "single", "measurement": "udp", "kind": "udp", "src": "c", "dst": "v1",
        "placement": "same-site", "status": "ok", "build_id": 1, "started_utc_ns": 0, "offered_bps": 1e9,
        "throughput_bps": np.nan, "loss_ratio": np.nan,
    }  # fmt: skip
    return base | values


def _frames(
    spec: str, rows: list[dict[str, Any]], builds: int = 1, samples: pd.DataFrame | None = None
) -> Any:
    campaign = {"id": "abc12345", "name": "x", "seed": 3, "spec_text": spec, "spec_source": "test"}
    empty_samples = pd.DataFrame(columns=["measurement_id", "t_ns", "metric", "value", "seq", "stream"])
    return cd.CampaignFrames(
        campaign=campaign,
        measurements=pd.DataFrame(rows),
        samples=empty_samples if samples is None else samples,
        events=pd.DataFrame(columns=["kind", "detail"]),
        builds=pd.DataFrame({"id": range(1, builds + 1), "ordinal": range(1, builds + 1)}),
    )


def onl_rows() -> list[dict[str, Any]]:
    """ONL Table 3 as a campaign: a group of N receivers per replication, every flow with the loss of
    the table (in percent there, as a ratio here)."""
    rows, i = [], 0
    for rec in pd.read_csv(ONL).to_dict("records"):
        n, rep, loss = int(rec["receivers"]), int(rec["replication"]), rec["loss"] / 100
        for j in range(n):
            i += 1
            rows.append(_row(i, step_key=f"t{n}/r{rep}", repetition=rep, factors={"receivers": n},
                             group_kind="together" if n > 1 else "single", dst=f"v{j + 1}", loss_ratio=loss))  # fmt: skip
    return rows


def star(together: list[tuple[float, float]], duration_s: float = 6.0, kind: str = "tcp") -> pd.DataFrame:
    """vm1 → vm2 and vm1 → vm3, 95 Mbit/s each alone, `together` = each repetition's two rates."""
    rows = []
    for rep, pair in enumerate(together, start=1):
        for dst, together_bps in zip(("vm2", "vm3"), pair, strict=True):
            common = {"status": "ok", "pattern": "star", "pattern_kind": "star", "measurement": kind}
            common |= {"kind": kind, "src": "vm1", "dst": dst, "repetition": rep, "link_rate_bps": 1e8}
            common |= {"expected_max_bps": 95.64e6, "duration_ns": duration_s * 1e9}
            rows.append(common | {"group_kind": "alone", "throughput_bps": 95e6, "start_skew_ns": 0})
            rows.append(
                common | {"group_kind": "together", "throughput_bps": together_bps, "start_skew_ns": 1e5}
            )
    return pd.DataFrame(rows)
