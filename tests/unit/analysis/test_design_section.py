"""The report's designed-experiment sections (report/sections/design.py) on ONL's Table 3 as a
campaign: the tables of `vnetbench analyze` and the residual, QQ, level-mean and contrast figures."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from tests.helpers.campaign_frames import ONL_SPEC, PAIRS_SPEC, _frames, _row, onl_rows
from vnetbench.analysis import campaign_data as cd
from vnetbench.report.sections import ReportContext, builders
from vnetbench.report.sections.design import ORDER, build


class FrameStore:
    """The read side of `Store` that the analysis uses, over fixed frames."""

    def __init__(self, frames: cd.CampaignFrames) -> None:
        self.frames = frames

    def campaign(self, _ident: str | None = None) -> dict[str, Any]:
        return self.frames.campaign

    def measurements_frame(self, _cid: str) -> pd.DataFrame:
        return self.frames.measurements

    def samples_frame(self, _cid: str, _metrics: Any = None) -> pd.DataFrame:
        return self.frames.samples

    def sample_aggregates(self, _cid: str, metrics: Any, omit_ns: int = 0, ids: Any = None) -> pd.DataFrame:
        return cd.FrameSamples(self.frames.samples).stats(ids, metrics, omit_ns)

    def sample_values(self, _cid: str, metric: str, ids: Any = None, since_ns: int = 0) -> pd.DataFrame:
        return cd.FrameSamples(self.frames.samples).values(ids, metric, since_ns)

    def events_frame(self, _cid: str) -> pd.DataFrame:
        return self.frames.events

    def builds_frame(self, _cid: str) -> pd.DataFrame:
        return self.frames.builds

    def telemetry_runs_frame(self, _cid: str) -> pd.DataFrame:
        return pd.DataFrame()  # no telemetry: no loss localization (the capacity caveat reads it)

    def telemetry_totals(self, _ids: Any) -> dict[int, Any]:
        return {}


def _onl_frames() -> cd.CampaignFrames:
    return _frames(ONL_SPEC, onl_rows())


def test_the_section_is_discovered_after_the_built_in_ones() -> None:
    assert ORDER == 70
    assert (ORDER, build) in builders()


def test_design_sections_show_the_tables_and_the_diagnostic_plots(tmp_path: Path) -> None:
    frames = _onl_frames()
    ctx = ReportContext(FrameStore(frames), frames.campaign, frames.measurements, tmp_path)  # type: ignore[arg-type]
    sections = {s.anchor: s for s in build(ctx)}
    assert list(sections) == [
        "analysis-design", "analysis-outliers", "analysis-effects", "analysis-udp-effective",
    ]  # fmt: skip
    effects = sections["analysis-effects"]
    titles = [t.title for t in effects.tables]
    assert titles[0] == "rx · udp · loss (%): one-factor ANOVA by receivers (a = 10, N = 50)"
    anova = effects.tables[0]
    row = {r[0]: r for r in anova.rows}["receivers"]
    assert row[2] == "99.68 %" and row[3] == "9" and float(row[5]) == pytest_approx(1367.9, 0.1)
    assert any("successive differences" in t for t in titles)
    assert any("Recommended maximum: receivers = 5" in item for item in effects.items)
    figures = [f.title for f in effects.figures]
    assert figures == [
        "rx · udp · loss (%): residuals vs predicted",
        "rx · udp · loss (%): normal QQ plot of residuals",
        "rx · udp · loss (%): mean per level",
        "rx · udp · loss (%): successive differences",
        "rx · udp · loss (%) (truncated model, levels [6, 7, 8, 9, 10]): normal QQ plot",
    ]
    for f in effects.figures:
        assert f.png.exists() and f.png.with_suffix(".svg").exists() and f.png.stat().st_size > 5000


def pytest_approx(value: float, abs_tol: float) -> Any:
    import pytest

    return pytest.approx(value, abs=abs_tol)


def test_a_periodic_campaign_gets_a_figure_of_each_series_with_its_change_points(tmp_path: Path) -> None:
    """The series of test_campaign_analysis's change-point test (40 hourly runs, −10 % from run 24):
    the report's change-point section has its table and a figure of the series."""
    hour = 3600 * 10**9
    g = np.random.default_rng(40)
    rows = [
        _row(i, kind="tcp", measurement="tcp", pattern="p", pattern_kind="pairs", src="a", dst="b",
             throughput_bps=94e6 * (0.9 if i >= 24 else 1.0) * (1 + g.normal(0, 0.01)),
             started_utc_ns=i * hour, repetition=i + 1)
        for i in range(40)
    ]  # fmt: skip
    frames = _frames(PAIRS_SPEC, rows)
    ctx = ReportContext(FrameStore(frames), frames.campaign, frames.measurements, tmp_path)  # type: ignore[arg-type]
    section = {s.anchor: s for s in build(ctx)}["analysis-change-points"]
    assert len(section.tables) == 1 and "p · tcp · a→b" in section.tables[0].title
    [figure] = section.figures
    assert figure.png.exists() and figure.png.stat().st_size > 5000
