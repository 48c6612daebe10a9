"""UDP effective throughput (ONL eq. 1): X̂ = (1 − π_ℓ) X for sending rate X and loss probability π_ℓ."""

from __future__ import annotations

import numpy as np
import pandas as pd

ArrayLike = float | np.ndarray | pd.Series


def effective_throughput_bps(rate_bps: ArrayLike, loss_ratio: ArrayLike) -> ArrayLike:
    """(1 − loss) × rate. Loss is a ratio in [0, 1] (not percent); iperf3 can report negative loss
    when duplicates arrive, which would inflate the result, so it is refused rather than used."""
    loss = np.asarray(loss_ratio, dtype=float)
    if np.any(loss < 0) or np.any(loss > 1):
        raise ValueError(
            "loss_ratio must be within [0, 1] (a ratio, not percent; negative loss is a tool artefact)"
        )
    out = (1.0 - loss) * np.asarray(rate_bps, dtype=float)
    if isinstance(rate_bps, pd.Series):
        return pd.Series(out, index=rate_bps.index, name="effective_throughput_bps")
    if isinstance(loss_ratio, pd.Series):
        return pd.Series(out, index=loss_ratio.index, name="effective_throughput_bps")
    return float(out) if out.ndim == 0 else out
