"""Placement categories compared (GENI Table 1): same-host, same-site, cross-site.

Per category the mean, SD, n and a t interval of the mean; per pair of categories the difference
of means with Welch's interval (unequal variances and sizes are the rule here: a cross-site link
varies far more than a same-host one). Two categories without any spread (every value of each the
same, e.g. 0 % loss in every repetition) have an exact difference: no test applies (p and
`significant` undefined, `exact` true), as for a contrast without error variance; a nonzero one is
a real difference, seen in every repetition, and a zero one says the categories gave the same value.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from itertools import combinations
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats

from vnetbench.analysis.contrasts import welch
from vnetbench.analysis.inputs import DataError, check_confidence, numeric_column, require_columns
from vnetbench.analysis.jsonable import jsonable
from vnetbench.analysis.stable import cut_at_zero
from vnetbench.spec.units import cannot_be_negative, display_unit, metric_name

PLACEMENTS = ("same-host", "same-site", "cross-site")


@dataclass(frozen=True)
class CategoryStats:
    category: str
    n: int
    mean: float
    sd: float
    ci_low: float
    ci_high: float


@dataclass(frozen=True)
class PairDifference:
    first: str
    second: str
    difference: float  # mean(second) − mean(first)
    ci_low: float
    ci_high: float
    dof: float  # Welch–Satterthwaite; NaN when exact
    t: float  # NaN when exact
    p_value: float  # NaN when exact: no test applies
    exact: bool = False  # neither category has any spread: the difference has no random error

    @property
    def significant(self) -> bool | None:
        """Welch's interval excludes 0; None when the difference is exact (no test applies)."""
        return None if self.exact else self.ci_low > 0 or self.ci_high < 0


@dataclass(frozen=True)
class PlacementComparison:
    value: str
    confidence: float
    categories: tuple[CategoryStats, ...]
    pairs: tuple[PairDifference, ...]
    notes: tuple[str, ...]

    def category(self, name: str) -> CategoryStats:
        return next(c for c in self.categories if c.category == name)

    def pair(self, first: str, second: str) -> PairDifference:
        return next(p for p in self.pairs if (p.first, p.second) == (first, second))

    def to_dict(self) -> dict[str, Any]:
        return jsonable(
            {
                "value": self.value,
                "confidence": self.confidence,
                "categories": [vars(c) for c in self.categories],
                "pairs": [vars(p) | {"significant": p.significant} for p in self.pairs],
                "notes": list(self.notes),
            }
        )


def compare_placements(
    frame: pd.DataFrame,
    value: str,
    category: str = "placement",
    order: Sequence[str] = PLACEMENTS,
    confidence: float = 0.95,
    group: str = "",
) -> PlacementComparison:
    """Categories in `order` first (those present), then any others in order of appearance. Each note
    names what it is about as the report's tables do, the `group` of flows (a measurement) and the
    metric with its unit: 'udp: loss (%): same-host vs cross-site: needs ≥ 2 values in each, not
    compared' — a report lists the notes of every metric under one heading."""
    check_confidence(confidence)
    unit = display_unit(value).label
    about = ": ".join([*([group] if group else []), metric_name(value) + (f" ({unit})" if unit else "")])
    require_columns(frame, [value, category])
    data = frame.assign(**{value: numeric_column(frame, value)})
    present = [str(c) for c in pd.unique(data[category].astype(str))]
    names = [c for c in order if c in present] + [c for c in present if c not in order]
    if not names:
        raise DataError(f"column '{category}'", "is empty", "give at least one measured category")
    groups = {c: data.loc[data[category].astype(str) == c, value].to_numpy(dtype=float) for c in names}
    cats, notes = [], []
    for c, x in groups.items():
        mean = float(x.mean())
        if x.size > 1:
            # equal values have SD 0, not numpy's rounding residue (ten RTTs of 10.1 gave 1.87e-15)
            sd = float(x.std(ddof=1)) if np.ptp(x) > 0 else 0.0
            half = float(stats.t.ppf((1 + confidence) / 2, x.size - 1) * sd / np.sqrt(x.size))
        else:
            sd, half = float("nan"), float("nan")
            notes.append(f"{about}: {c}: a single value, no SD or interval")
        low, high = cut_at_zero(mean - half, mean + half, cannot_be_negative(value))
        cats.append(CategoryStats(c, int(x.size), mean, sd, low, high))
    pairs = []
    for a, b in combinations(names, 2):
        xa, xb = groups[a], groups[b]
        if xa.size < 2 or xb.size < 2:
            notes.append(f"{about}: {b} vs {a}: needs ≥ 2 values in each, not compared")
            continue
        if np.ptp(xa) == 0 and np.ptp(xb) == 0:  # no variance at all: t = d/0, the difference is exact
            d = float(xb[0] - xa[0])
            nan = float("nan")
            pairs.append(PairDifference(a, b, d, d, d, nan, nan, nan, exact=True))
            continue
        w = welch(xb, xa)  # one group without spread (e.g. two equal RTTs) is fine for it
        ci = w.confidence_interval(confidence)
        pairs.append(
            PairDifference(
                a,
                b,
                float(xb.mean() - xa.mean()),
                float(ci.low),
                float(ci.high),
                float(w.df),
                float(w.statistic),
                float(w.pvalue),
            )
        )
    return PlacementComparison(value, confidence, tuple(cats), tuple(pairs), tuple(notes))
