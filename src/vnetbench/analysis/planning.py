"""How many repetitions give a ±x % interval of the mean (Jain §13.9), from a pilot campaign.

For an interval x̄ ∓ z·s/√n to be within ±r % of x̄: n = (100·z·s / (r·x̄))² (Jain eq. 13.9, with z
from the normal distribution). With few repetitions t[n − 1] is larger than z, so the smallest n with
t[(1+c)/2; n−1]·s/√n ≤ r·x̄/100 is also given; it is the one to plan with. Per group (level or
cell), since each treatment's mean needs its own precision. A treatment whose mean is 0 but whose
values vary (a response that can be negative) has no relative precision: ±r % of 0 is an interval
of no width, which no n reaches; its row says so (`note`, no n) and gives the pilot's absolute
half-width instead, and the other treatments are planned as usual.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats

from vnetbench.analysis.inputs import DataError, check_confidence, numeric_column, require_columns
from vnetbench.analysis.jsonable import jsonable
from vnetbench.analysis.stable import round_off_only
from vnetbench.spec.units import plain_number

MAX_REPETITIONS = 10**9


def parse_precision(text: str | float) -> float:
    """ "1%" → 0.01, "0.01" → 0.01; a clear error otherwise."""
    raw = str(text).strip()
    try:
        value = float(raw[:-1]) / 100 if raw.endswith("%") else float(raw)
    except ValueError:
        value = math.nan
    if not 0 < value < 1:
        raise DataError(
            "--target-precision",
            f"'{text}' is not a precision",
            "give a share above 0 and below 100 %, such as 1% or 0.01",
        )
    return value


def repetitions_needed(
    mean: float, sd: float, precision: float, confidence: float = 0.95, treatment: str | None = None
) -> tuple[int, int]:
    """(Jain's z formula, the smallest n whose t interval meets the precision).

    A mean of 0 with spread has no relative precision: a DataError naming `treatment` ('f=a', as
    `PlanRow.treatment` writes it; the parameter `mean` without one) says why and what to judge it
    by instead (`plan_repetitions` gives such a treatment a row with that note and no n). Beyond
    MAX_REPETITIONS (a mean that is 0 but for rounding) both are Jain's n: t[n − 1] exceeds z by a
    relative (1 + z²)/(4n) ≤ 1.3e-9 there, and scipy's t quantile cannot take such an n (1e34 raised a
    TypeError)."""
    check_confidence(confidence)
    if sd == 0:
        return 1, 2
    if mean == 0:
        raise DataError(
            f"treatment {treatment}" if treatment else "mean",
            _zero_mean_problem(precision),
            "judge it by the absolute half-width t·s/√n of its mean instead (plan_repetitions gives "
            "the pilot's in its note), or plan only the treatments whose mean is not 0",
        )
    z = float(stats.norm.ppf((1 + confidence) / 2))
    target = precision * abs(mean)
    jain = math.ceil((z * sd / target) ** 2)
    if jain > MAX_REPETITIONS:
        return jain, jain
    n = max(2, jain)
    while float(stats.t.ppf((1 + confidence) / 2, n - 1)) * sd / math.sqrt(n) > target:
        n += 1
        if n > MAX_REPETITIONS:
            break
    return jain, n


def treatment_label(group: dict[str, Any]) -> str:
    """'receivers=5, cc=reno', or 'all' without factors."""
    return ", ".join(f"{k}={v}" for k, v in group.items()) or "all"


@dataclass(frozen=True)
class PlanRow:
    group: dict[str, Any]
    n: int
    mean: float
    sd: float
    half_width_ratio: float  # t·s/√n / |mean| of the pilot (∞ for a mean of 0)
    needed_jain: int | None  # None: no n reaches the precision (mean 0, see note)
    needed: int | None
    note: str | None = None  # why there is no n

    @property
    def treatment(self) -> str:
        return treatment_label(self.group)

    def to_dict(self) -> dict[str, Any]:
        return jsonable(
            self.group
            | {
                "n": self.n,
                "mean": self.mean,
                "sd": self.sd,
                "half_width_ratio": self.half_width_ratio,
                "repetitions_needed_z": self.needed_jain,
                "repetitions_needed": self.needed,
                "note": self.note,
            }
        )


def plan_repetitions(
    frame: pd.DataFrame, response: str, factors: Sequence[str], precision: float, confidence: float = 0.95
) -> list[PlanRow]:
    """One row per treatment (combination of the factors' levels) of the pilot."""
    require_columns(frame, [response, *factors])
    data = frame.assign(**{response: numeric_column(frame, response)})
    rows = []
    groups = data.groupby(list(factors), sort=False) if factors else [((), data)]
    for keys, g in groups:
        keys = keys if isinstance(keys, tuple) else (keys,)
        y = g[response].to_numpy(dtype=float)
        y_c = y - y[0]  # centred: the SD keeps its digits at any offset
        mean = float(y[0] + y_c.mean())
        sd = float(np.std(y_c, ddof=1)) if y.size > 1 else math.nan
        if not math.isfinite(sd):
            raise DataError(
                f"column '{response}'",
                f"treatment {dict(zip(factors, keys, strict=True))} has one observation, so no SD",
                "a pilot needs at least 2 repetitions of every treatment",
            )
        t = float(stats.t.ppf((1 + confidence) / 2, y.size - 1))
        group = dict(zip(factors, keys, strict=True))
        half = t * sd / math.sqrt(y.size)
        if sd > 0 and round_off_only(np.array([mean]), y):  # 0, or 0 but for rounding
            rows.append(
                PlanRow(group, int(y.size), 0.0, sd, math.inf, None, None, _zero_mean_note(half, precision))
            )
            continue
        jain, needed = repetitions_needed(mean, sd, precision, confidence, treatment_label(group))
        rows.append(
            PlanRow(group, int(y.size), mean, sd, half / abs(mean) if mean else math.inf, jain, needed)
        )
    return rows


def _zero_mean_problem(precision: float) -> str:
    return (
        f"the mean is 0, so ±{100 * precision:g} % of it is an interval of no width, which no number of "
        "repetitions reaches"
    )


def _zero_mean_note(half: float, precision: float) -> str:
    return (
        f"{_zero_mean_problem(precision)}; judge this treatment by the absolute half-width t·s/√n instead "
        f"(±{plain_number(half, 4)} from this pilot, shrinking as 1/√n)"
    )
