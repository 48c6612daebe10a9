"""Change points in the series of a periodic campaign (an interval schedule over hours or days): per
series, connection and treatment, the first response of every run in time order, searched
with E-divisive means (`changepoints.change_points`). A series needs `MIN_POINTS` runs: a campaign
of a few back-to-back repetitions has no history to break. Their tables are the report's
(report/analysis_tables.py)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pandas as pd

from vnetbench.analysis import campaign_data as cd
from vnetbench.analysis.changepoints import ChangePoint, change_points
from vnetbench.analysis.compare import treatment_label

MIN_POINTS = 20


@dataclass
class SeriesChanges:
    """One series searched: its key, response, the runs' start times and values, what was found."""

    key: dict[str, str]  # series, pair, treatment
    response: str
    times: list[int]  # UTC ns of each run's start, in order
    values: list[float]
    found: list[ChangePoint]

    def to_json(self) -> dict[str, Any]:
        """The entry of `analyze --json`'s `change_points`, with the series itself for the figure."""
        return (
            self.key
            | {"response": self.response, "points": len(self.values)}
            | {"change_points": [c.to_dict() for c in self.found]}
            | {"times": self.times, "values": self.values}
        )


@dataclass
class ChangePoints:
    """Every series long enough to search (MIN_POINTS runs), with or without a change point."""

    min_points: int
    series: list[SeriesChanges]

    def to_json(self) -> list[dict[str, Any]]:
        return [s.to_json() for s in self.series]


def series_of(flows: pd.DataFrame) -> list[tuple[dict[str, str], str, pd.DataFrame]]:
    """(key, response, rows in time order) for every series long enough to search."""
    if flows.empty:
        return []
    data = flows.assign(
        treatment=[treatment_label(f) for f in flows["factors"]],
        pair=flows["src"].astype(str) + "→" + flows["dst"].astype(str),
    )
    out = []
    for (series, pair, treatment, kind), g in data.groupby(
        ["series", "pair", "treatment", "kind"], sort=True
    ):
        response = cd.FLOW_RESPONSES.get(str(kind), ())[:1]
        if not response:
            continue
        rows = g.dropna(subset=[response[0], "started_utc_ns"]).sort_values("started_utc_ns")
        if len(rows) >= MIN_POINTS:
            key = {"series": str(series), "pair": str(pair), "treatment": str(treatment)}
            out.append((key, response[0], rows))
    return out


def campaign_change_points(flows: pd.DataFrame) -> ChangePoints | None:
    """Change points of every long enough series (None: no series has MIN_POINTS runs)."""
    found = []
    for key, response, rows in series_of(flows):
        times = rows["started_utc_ns"].astype("int64").tolist()
        values = rows[response].astype(float).tolist()
        found.append(
            SeriesChanges(key, response, times, values, change_points(rows[response].to_numpy(float), times))
        )
    return ChangePoints(MIN_POINTS, found) if found else None
