"""A stored campaign as the analysis reads it (CampaignFrames), built from rows written in the test.

ONL_SPEC is the ONL study's one-factor design (receivers per group); `_row` one measurement row
with defaults a test overrides; `_frames` the frames of a spec and its rows.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

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
