"""The values the analysis uses, per measurement, for `vnetbench export` (store/export.py): each flow's
throughput, loss, RTT and UDP effective throughput after the spec's `analysis.omit` transient removal
(`campaign_data.flow_table`, as the report, `analyze` and `compare` compute them)."""

from __future__ import annotations

from typing import Any

import pandas as pd

from vnetbench.analysis.campaign_data import flow_table, load_campaign_frames
from vnetbench.spec.loader import SpecInvalid, spec_of
from vnetbench.store.export import ANALYSIS_COLUMNS, AnalysisValues


def analysis_values(store: Any, row: dict[str, Any]) -> AnalysisValues:
    """The `analysis_*` columns of a stored campaign (row: its campaigns row); when they cannot be
    computed (a stored spec this version no longer accepts, nothing ok), `unavailable` says why."""
    try:
        spec = spec_of(row)
    except SpecInvalid as exc:
        first = str(exc.errors[0]) if exc.errors else str(exc)
        return AnalysisValues(0, pd.DataFrame(), f"its stored spec is not valid for this version ({first})")
    omit_ns = int(spec.analysis.omit)
    if omit_ns == 0:
        # nothing dropped: the whole-run values are the analysis's, and reading every sample to say so
        # would cost a 10-million-sample export its time budget (benchmarks/scale)
        return AnalysisValues(0, pd.DataFrame())
    frames = load_campaign_frames(store, row["id"])
    flows, _ = flow_table(frames.measurements, frames.samples, frames.builds, [], omit_ns)
    if flows.empty:
        return AnalysisValues(omit_ns, pd.DataFrame(), "no measurement finished ok")
    columns = {whole: ours for whole, ours in ANALYSIS_COLUMNS.items() if whole in flows}
    return AnalysisValues(omit_ns, flows[["id", *columns]].rename(columns=columns))
