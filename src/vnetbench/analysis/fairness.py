"""Jain's fairness index of simultaneous flows, and how it varies over replications.

f(x) = (Σx)² / (n Σx²): 1 when every flow gets the same, 1/n when one flow gets everything.

The index is bounded and piles up just below 1, so its interval over replications is built for
that skew (`mean_index_interval`): symmetric intervals covered the true mean far less often than
they said, and a t interval ran past 1.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd
from scipy import stats

from vnetbench.analysis.inputs import DataError, check_confidence, numeric_column, require_columns
from vnetbench.spec.units import plain_number


def jain_index(values: Sequence[float] | np.ndarray | pd.Series) -> float:
    """Jain's fairness index (Σx)²/(n·Σx²) of non-negative allocations (NaN when all are 0)."""
    x = np.asarray(values, dtype=float)
    if x.size == 0 or np.any(x < 0) or not np.all(np.isfinite(x)):
        raise ValueError("Jain's index needs one or more finite, non-negative allocations")
    total = float(np.sum(x * x))
    if total == 0:
        return float("nan")  # all zero: undefined
    # Cauchy–Schwarz bounds it to [1/n, 1]; the clip only removes rounding (equal flows gave 1 + 1 ulp).
    return float(np.clip(x.sum() ** 2 / (x.size * total), 1 / x.size, 1.0))


def index_sd_text(sd: float) -> str:
    """The SD of Jain's index over repetitions as the fairness table writes it: three significant
    digits; one smaller than the table's last decimal (0.0001) as '< 0.0001' (not 4.84e-07, nor a
    '0.000' that reads as no spread); '' when there is none (one repetition)."""
    if sd is None or not np.isfinite(sd):
        return ""
    if 0 < sd < 1e-4:
        return "< 0.0001"
    text = plain_number(float(sd), 3)
    return text.rstrip("0").rstrip(".") if float(sd).is_integer() and "." in text else text


def mean_index_interval(
    indices: Sequence[float] | np.ndarray, n_flows: float, confidence: float = 0.95
) -> tuple[float, float]:
    """Interval of the expected Jain index E[J] of one replication, from the indices of n ≥ 2
    replications of `n_flows` flows each.

    J is bounded by 1 and piles up just below it, so the unfairness U = 1 − J is small, positive and
    skewed: for f flows with independent noise around a fair share, U is about a scaled χ² with
    f − 1 degrees of freedom (1/J − 1 is the flows' squared CV). Symmetric intervals cover E[J] far
    less often than they say (the old percentile bootstrap: 76 % at n = 3; a t interval: 82 % for
    two flows). Two intervals of E[U], mapped to E[J] = 1 − E[U]:

    - χ²: Σ U_i · (f − 1)/E[U] ~ χ²[n(f − 1)], exact for a fair share with noise;
    - log-t (delta method on log Ū): log Ū ∓ t[n − 1]·s_U/(√n·Ū), which follows the spread observed.

    When the observed spread of U is significantly smaller than the χ² model's (variance 2Ū²/(f − 1),
    one-sided 5 % test), the shares are systematically unequal, not noise around a fair share, and
    the log-t interval alone is used; otherwise the hull of both. A seeded simulation
    (tests/unit/analysis/test_fairness_coverage.py) checks coverage ≥ 0.93 at n = 3, 5 and 10 for
    fair and unfair shares of 2, 4 and 8 flows. The result is clipped to J's range [1/f, 1]."""
    check_confidence(confidence)
    j = np.asarray(indices, dtype=float)
    if j.size < 2:
        return float("nan"), float("nan")
    u = np.clip(1 - j, 0.0, None)  # an index of 1 + 1 ulp is 1
    n, total = u.size, float(u.sum())
    if total == 0 or n_flows <= 1:
        return 1.0, 1.0  # every replication perfectly fair: no unfairness to bound
    alpha = 1 - confidence
    mean, sd = total / n, float(u.std(ddof=1))
    u_low: list[float] = []
    u_high: list[float] = []
    if sd > 0:
        half = float(stats.t.ppf(1 - alpha / 2, n - 1)) * sd / (np.sqrt(n) * mean)
        u_low.append(mean * float(np.exp(-half)))
        u_high.append(mean * float(np.exp(half)))
    model_var = 2 * mean * mean / (n_flows - 1)
    unequal_shares = sd > 0 and stats.chi2.cdf((n - 1) * sd * sd / model_var, n - 1) < UNEQUAL_SHARES_P
    if not unequal_shares:
        nu = n * (n_flows - 1)
        u_low.append((n_flows - 1) * total / float(stats.chi2.ppf(1 - alpha / 2, nu)))
        u_high.append((n_flows - 1) * total / float(stats.chi2.ppf(alpha / 2, nu)))
    return float(np.clip(1 - max(u_high), 1 / n_flows, 1.0)), float(np.clip(1 - min(u_low), 1 / n_flows, 1.0))


UNEQUAL_SHARES_P = 0.05  # one-sided test: spread of 1 − J below what noise around a fair share gives


def fairness_by_group(frame: pd.DataFrame, value: str, group: Sequence[str]) -> pd.DataFrame:
    """One row per group of simultaneous flows (e.g. group = configuration columns + replication):
    the group's columns, `n_flows` and `jain_index` (a factor may well be called `flows`)."""
    require_columns(frame, [value, *group])
    data = frame.assign(**{value: numeric_column(frame, value)})
    if (data[value] < 0).any():
        raise DataError(f"column '{value}'", "has negative values", "fairness needs allocations ≥ 0")
    out = data.groupby(list(group), sort=True, observed=True)[value].agg(
        n_flows="count", jain_index=jain_index
    )
    return out.reset_index()


def fairness_spread(
    frame: pd.DataFrame,
    value: str,
    config: Sequence[str],
    replication: str,
    confidence: float = 0.95,
) -> pd.DataFrame:
    """Per configuration: the index of each replication's flows, then its mean, SD, min, max and an
    interval of the expected index (`mean_index_interval`) over replications (ONL Table 2's
    "fairness" and "SD of fairness"); the interval stays in [1/n, 1] where a t interval would not.

    A replication in which every flow got 0 has no index (0/0: undefined, not fair nor unfair). It is
    left out of the mean, SD, min, max and interval, counted in `undefined`, and `note` says so; with
    no replication left they are NaN. (It used to make the mean NaN.)"""
    check_confidence(confidence)
    per_rep = fairness_by_group(frame, value, [*config, replication])
    rows = []
    for keys, g in per_rep.groupby(list(config), sort=True, observed=True):
        defined = g[g["jain_index"].notna()]
        j = defined["jain_index"].to_numpy(dtype=float)
        n, undefined = j.size, len(g) - j.size
        nan = float("nan")
        low, high = mean_index_interval(j, float(defined["n_flows"].mean()), confidence) if n else (nan, nan)
        keys = keys if isinstance(keys, tuple) else (keys,)
        rows.append(
            dict(zip(config, keys, strict=True))
            | {
                "replications": len(g),
                "undefined": undefined,
                "mean": float(j.mean()) if n else nan,
                "sd": float(j.std(ddof=1)) if n > 1 else nan,
                "min": float(j.min()) if n else nan,
                "max": float(j.max()) if n else nan,
                "ci_low": low,
                "ci_high": high,
                "note": _undefined_note(undefined, len(g)),
            }
        )
    return pd.DataFrame(rows)


def _undefined_note(undefined: int, replications: int) -> str | None:
    if not undefined:
        return None
    which = (
        "every replication" if undefined == replications else f"{undefined} of {replications} replications"
    )
    left = "" if undefined == replications else "; the mean, SD and interval are over the others"
    return f"{which}: every flow got 0, so Jain's index is undefined (0/0) there and left out{left}"
