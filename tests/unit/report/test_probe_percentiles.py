"""vnb-probe's CPU share table and UDP RTT findings: shares in %, as the Findings give them, and no
99th percentile of too few values for one (ec2-cpushare dad499f8: the unlimited node's 13.5 gaps per
run had a 'gap p99 0.813 ms', its largest gaps interpolated)."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pandas as pd

from vnetbench.report.sections.findings import probe_findings
from vnetbench.report.sections.probe import _cpushare_section


def rows() -> pd.DataFrame:
    common = {"kind": "cpushare", "status": "ok", "measurement": "cpu", "steal_ratio": 0.0}
    small = [common | {"src": "small", "cpu_share_ratio": s, "rusage_cpu_ratio": 0.453, "gaps_count": 150,
                       "gap_p99_ns": 58.1e6, "gap_max_ns": 58.2e6} for s in (0.450, 0.454)]  # fmt: skip
    medium = [common | {"src": "medium", "cpu_share_ratio": s, "rusage_cpu_ratio": 0.999, "gaps_count": n,
                        "gap_p99_ns": 0.813e6, "gap_max_ns": 1.45e6} for s, n in ((0.998, 13), (1.0, 14))]  # fmt: skip
    return pd.DataFrame(small + medium)


def test_shares_are_in_percent_and_a_p99_of_few_gaps_is_left_out(tmp_path: Path) -> None:
    section = _cpushare_section(rows(), tmp_path)
    assert section is not None
    (table,) = section.tables
    assert table.columns[3:7] == ["share, median (%)", "share, min – max (%)", "rusage (%)", "steal (%)"]
    small, medium = table.rows
    assert small[3:] == ["45.2", "45.0 – 45.4", "45.3", "0", "150", "58.1", "58.2"]
    assert medium[3:] == ["99.9", "99.8 – 100", "99.9", "0", "13.5", "–", "1.45"]
    assert "gap p99 is left out (–) for a node with a run of fewer than 100 gaps" in table.note
    # the Findings quote the same median share
    ctx = SimpleNamespace(frame=rows(), samples=None)
    (line,) = probe_findings(ctx)  # type: ignore[arg-type]
    assert line == "<b>CPU share</b> (median of the runs): small 45.2 %; medium 99.9 %."


class _Samples:
    """`ctx.samples.values(ids, metric, since)`: each probe's RTT, by measurement."""

    def __init__(self, rtts: dict[int, list[float]]) -> None:
        self.rtts = rtts

    def values(self, ids: list[int], metric: str, since_ns: int) -> pd.DataFrame:
        rows = [{"measurement_id": i, "value": v} for i in ids for v in self.rtts[i]]
        return pd.DataFrame(rows)


def test_a_p99_of_fewer_than_100_probes_is_called_the_max() -> None:
    # 4,000 probes (ec2-cpushare) have a p99; 20 have only their largest interpolated
    frame = pd.DataFrame(
        [
            {"id": 1, "kind": "probe-rtt", "status": "ok", "src": "peer-s", "dst": "small"},
            {"id": 2, "kind": "probe-rtt", "status": "ok", "src": "peer-m", "dst": "medium"},
        ]
    )
    samples = _Samples({1: [20_000.0 + i for i in range(200)], 2: [10_030.0 + 100 * i for i in range(20)]})
    (line,) = probe_findings(SimpleNamespace(frame=frame, samples=samples))  # type: ignore[arg-type]
    assert "peer-s→small median 0.0201 ms, p99 0.0202 ms" in line
    assert "peer-m→medium median 0.0110 ms, max 0.0119 ms (20 probes)" in line
