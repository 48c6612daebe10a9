"""Planning from a pilot campaign (`vnetbench analyze --target-precision 1%`): per series, response
and treatment, how many repetitions a ±x % interval of the mean needs (Jain §13.9,
`planning.plan_repetitions`), on the same observations the models use (one per group of flows).
Its tables are the report's (report/analysis_tables.py)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from vnetbench.analysis import campaign_data as cd
from vnetbench.analysis.inputs import DataError
from vnetbench.analysis.planning import PlanRow, plan_repetitions


@dataclass
class SeriesPlan:
    series: str
    response: str
    rows: list[PlanRow]  # one per treatment

    def to_json(self) -> dict[str, Any]:
        return {
            "series": self.series,
            "response": self.response,
            "treatments": [r.to_dict() for r in self.rows],
        }


@dataclass
class RepetitionPlan:
    """The repetitions each series' treatments need, and why a series could not be planned."""

    precision: float
    confidence: float
    series: list[SeriesPlan]
    notes: list[str] = field(default_factory=list)

    def to_json(self) -> list[dict[str, Any]]:
        return [s.to_json() for s in self.series]


def repetition_plan(
    groups: pd.DataFrame, factors: list[str], precision: float, confidence: float
) -> RepetitionPlan | None:
    """The plan of the first response of every series (None: nothing to plan)."""
    if groups.empty:
        return None
    plan = RepetitionPlan(precision, confidence, [])
    for series, g in groups.groupby("series", sort=False):
        kind = str(g["kind"].iloc[0])
        varying = [f for f in factors if g[f].nunique() > 1]
        for response in cd.RESPONSES.get(kind, ())[:1]:
            data = g.dropna(subset=[response])
            try:
                rows = plan_repetitions(data, response, varying, precision, confidence)
            except DataError as exc:
                plan.notes.append(f"{series} · {response}: {exc}")
                continue
            plan.series.append(SeriesPlan(str(series), response, rows))
    return plan if plan.series or plan.notes else None
