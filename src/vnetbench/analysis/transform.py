"""Transform the response before the analysis (`--transform log | boxcox`), for errors whose SD grows
with the mean (Jain ch. 15: "transformations"). Effects and intervals are then on the transformed
scale: on the log scale a difference of levels is the log of their ratio.

Box–Cox: y(λ) = (y^λ − 1)/λ (log y for λ = 0) with λ chosen by maximum likelihood (scipy). Both need
every value > 0; a response with zeros (loss) is refused with the row, since adding an arbitrary
constant changes the result.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import stats

from vnetbench.analysis.inputs import DataError, numeric_column

TRANSFORMS = ("none", "log", "boxcox")


@dataclass(frozen=True)
class Transform:
    kind: str
    lam: float | None = None  # Box–Cox λ

    @property
    def label(self) -> str:
        if self.kind == "log":
            return "log(y)"
        if self.kind == "boxcox":
            return f"Box–Cox λ = {self.lam:.4g}: (y^λ − 1)/λ"
        return "y"

    def to_dict(self) -> dict[str, object]:
        return {"kind": self.kind, "lambda": self.lam, "label": self.label}


def transform_response(frame: pd.DataFrame, response: str, kind: str) -> tuple[pd.DataFrame, Transform]:
    if kind not in TRANSFORMS:
        raise DataError("--transform", f"'{kind}' is not a transform", f"use one of {', '.join(TRANSFORMS)}")
    if kind == "none":
        return frame, Transform("none")
    y = numeric_column(frame, response).to_numpy()
    bad = np.flatnonzero(y <= 0)
    if bad.size:
        raise DataError(
            f"column '{response}'",
            f"row {bad[0] + 1} of the data is {y[bad[0]]:g}; --transform {kind} needs every value > 0",
            "analyse without a transform and read Welch's ANOVA or Kruskal–Wallis",
        )
    if kind == "log":
        return frame.assign(**{response: np.log(y)}), Transform("log")
    if np.ptp(y) == 0:
        raise DataError(f"column '{response}'", "is constant", "Box–Cox needs a response that varies")
    values, lam = stats.boxcox(y)
    return frame.assign(**{response: values}), Transform("boxcox", float(lam))
