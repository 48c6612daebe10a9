"""Rebuilds of a metric that is 0 in every build (UDP loss): its CV and relative difference are
undefined, and the report leaves them out instead of printing 'CV ' and '0 ()' (exogeni-exp5's
report, 2026-11-28)."""

from __future__ import annotations

from types import SimpleNamespace

import pandas as pd

from vnetbench.analysis import campaign_parts as cp
from vnetbench.analysis.reproducibility import ReproducibilityThresholds, reproducibility
from vnetbench.report.analysis_tables import _rebuilds
from vnetbench.report.sections.findings import rebuild_findings


def zero_loss() -> list:
    rows = [{"build": b, "metric": "loss_ratio", "value": 0.0} for b in range(6) for _ in range(3)]
    th = ReproducibilityThresholds(tolerance_abs=cp.ABS_TOLERANCE["loss_ratio"])
    return reproducibility(pd.DataFrame(rows), thresholds=th)


def test_undefined_ratios_are_left_out() -> None:
    (r,) = zero_loss()
    assert r.verdict == "reproducible"
    section = _rebuilds(cp.Rebuilds(6, r.thresholds, [r]))
    (row,) = section.tables[0].rows
    headers = section.tables[0].columns
    assert row[headers.index("difference")] == "0"  # the unit is in the metric column
    (line,) = rebuild_findings(SimpleNamespace(rebuilds=cp.Rebuilds(6, r.thresholds, [r])))
    assert line == "<b>Rebuilt 6 times</b> — Reproducible (1): loss (0 pp)."


def test_the_sentence_has_no_undefined_ratio_either() -> None:
    # exogeni-exp5's section read 'The difference 0 pp (undefined) is too small to matter'
    (r,) = zero_loss()
    assert "The difference 0 pp is too small to matter" in r.text and "undefined)" not in r.text
