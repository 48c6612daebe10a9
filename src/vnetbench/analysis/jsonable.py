"""Turn result objects into plain JSON values (numpy scalars → Python, NaN/inf → None)."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd


def jsonable(value: Any) -> Any:
    """The value as plain JSON: numpy scalars as Python numbers, NaN and infinities as None, frames as
    records."""
    if isinstance(value, Mapping):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, pd.DataFrame):
        return [jsonable(row) for row in value.to_dict(orient="records")]
    if isinstance(value, list | tuple | np.ndarray | pd.Series):
        return [jsonable(v) for v in list(value)]
    if isinstance(value, bool | np.bool_):
        return bool(value)
    if isinstance(value, int | np.integer):
        return int(value)
    if isinstance(value, float | np.floating):
        v = float(value)
        return v if math.isfinite(v) else None  # strict JSON has no NaN or Infinity
    if value is None or isinstance(value, str):
        return value
    return str(value)
