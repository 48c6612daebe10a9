"""A label names its measurement and its metric each once: a measurement called 'rtt' measures the
metric rtt_mean_ns, and 'rtt vma→vmb rtt mean (ms)' said 'rtt' twice."""

from __future__ import annotations

from types import SimpleNamespace

import pandas as pd

from vnetbench.analysis import campaign_parts as cp
from vnetbench.analysis.placement import compare_placements
from vnetbench.analysis.reproducibility import shown_name
from vnetbench.report import format as fmt
from vnetbench.report.analysis_tables import _placement
from vnetbench.report.sections.findings import placement_findings


def test_a_metric_after_its_measurement_drops_the_repeated_word() -> None:
    assert shown_name("rtt vma→vmb rtt_mean_ns") == "rtt vma→vmb mean (ms)"
    assert fmt.shown_metric("rtt vma→vmb rtt_mean_ns") == "rtt vma→vmb mean (ms)"
    # nothing repeated: nothing dropped
    assert shown_name("tcp vma→vmb throughput_bps") == "tcp vma→vmb throughput (Mbit/s)"
    assert fmt.shown_metric("ping vma→vmb rtt_mean_ns") == "ping vma→vmb rtt mean (ms)"
    # a lone metric keeps its whole name
    assert fmt.shown_metric("rtt_mean_ns") == "rtt mean (ms)"
    assert fmt.metric_name("rtt_mean_ns", "rtt") == "mean"


def _rtts() -> cp.Placements:
    # same-host 1 and 3 ms, cross-site 10 and 12 ms (stored in ns)
    frame = pd.DataFrame(
        {"placement": ["same-host"] * 2 + ["cross-site"] * 2, "rtt_mean_ns": [1e6, 3e6, 10e6, 12e6]}
    )
    return cp.Placements(
        0.95, [cp.PlacementEntry("rtt", "rtt_mean_ns", compare_placements(frame, "rtt_mean_ns"))]
    )


def test_the_placement_finding_and_table_name_the_metric_once() -> None:
    (line,) = placement_findings(SimpleNamespace(placement=_rtts()))
    assert line.startswith(
        "<b>rtt: mean by placement</b> (alone; 95 % t interval over flows × repetitions, n = 2 per placement): "
    )
    section = _placement(_rtts())
    assert [t.title for t in section.tables] == [
        "rtt: mean (ms) per placement (95 % interval of the mean)",
        "rtt: differences of mean (ms) (second − first, Welch 95 %)",
    ]


def test_the_placement_sd_has_the_digits_of_the_mean_beside_it() -> None:
    # 1 and 3 ms: mean 2, SD √2 = 1.414 ms by hand; an RTT's 3 digits as the mean '2.00': '1.41', not
    # '1.414' (the 4 digits of `scaled`) beside it; the same for 10 and 12 ms
    table = _placement(_rtts()).tables[0]
    assert [(row[0], row[2], row[3]) for row in table.rows] == [
        ("same-host", "2.00", "1.41"),
        ("cross-site", "11.0", "1.41"),
    ]
