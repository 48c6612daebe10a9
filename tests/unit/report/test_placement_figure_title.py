"""The placement figures' titles: 'rtt: rtt mean (ms) per placement' named the metric twice (the
table above says 'rtt: mean (ms)'), and no title said what the error bars are (quickstart d1453f96).
Values: that campaign's RTT means per repetition (ms, measurement ids 3, 16, 6, 19, 9, 22)."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pandas as pd

from vnetbench.analysis import campaign_parts as cp
from vnetbench.analysis.placement import compare_placements
from vnetbench.report.sections.design import _placement_figures


def test_the_placement_figure_names_the_metric_once_and_says_what_its_bars_are(tmp_path: Path) -> None:
    values = {
        "same-host": [0.09565, 0.1293],
        "same-site": [0.11505, 0.12345],
        "cross-site": [0.14275, 0.13575],
    }
    frame = pd.DataFrame([{"placement": k, "rtt_mean_ns": v * 1e6} for k, vs in values.items() for v in vs])
    placements = cp.Placements(
        0.95, [cp.PlacementEntry("rtt", "rtt_mean_ns", compare_placements(frame, "rtt_mean_ns"))]
    )
    (figure,) = _placement_figures(placements.to_json(), SimpleNamespace(fig_dir=tmp_path))  # type: ignore[arg-type]
    assert figure.title == "rtt: mean (ms) per placement"
    svg = next(tmp_path.glob("*.svg")).read_text()
    assert "rtt: mean (ms) per placement (bars: 95 % interval of the mean)" in svg
    assert "rtt: rtt mean" not in svg  # the y axis says "rtt mean (ms)": no measurement name there
