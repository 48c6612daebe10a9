"""Reproducibility across rebuilt topologies (ExoGENI experiment 5, Table 20), scored with explicit
thresholds instead of "same as initial experiment".

Input: one row per measured value with a build column (the first build and every rebuild), a metric
column and a value column. For every metric:

- the first build's values (its replications) are the reference;
- a rebuild is the unit of replication: each rebuild contributes its mean, and the coefficient of
  variation across rebuilds, CV = SD(rebuild means) / |mean|, says how much the result depends on
  the build;
- Welch's t test (and its interval of mean(rebuilds) − mean(first)) and the Mann-Whitney U test
  compare the rebuilds with the first build.

Verdict (the thresholds are parameters):
- "not reproducible" if CV across rebuilds > cv_max_ratio, or if the whole Welch interval of the
  difference lies outside ±tolerance_ratio·|mean(first)|;
- "reproducible" if the whole interval lies inside that band (an equivalence test: a difference too
  small to matter, measured precisely enough to say so);
- "inconclusive" otherwise (the interval straddles the band's edge: more rebuilds would decide), or
  with fewer than `min_builds` rebuilds or fewer than 2 first-build values.
A metric near zero (loss, a sub-millisecond RTT) makes every ratio huge: `tolerance_abs`, in the
metric's own unit, widens the band to at least ±tolerance_abs, and a CV above cv_max_ratio does not
count when the SD of the rebuild means is itself within tolerance_abs.
Mann-Whitney does not change the verdict; when it disagrees with Welch the reasoning says so (the
distributions may differ in shape while the means agree).
When every first-build value is the same and so is every rebuild's mean (0 % loss throughout),
Welch's t is undefined (t = d/0) and no test applies: the difference is exact (`exact`, Welch's p
and t NaN, its "interval" the point (d, d)), and the verdict weighs that exact difference against
the band like any interval.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import partial
from typing import Any, Literal

import numpy as np
import pandas as pd
from scipy import stats

from vnetbench.analysis.contrasts import mann_whitney, welch
from vnetbench.analysis.inputs import DataError, check_confidence, numeric_column, require_columns
from vnetbench.analysis.jsonable import jsonable
from vnetbench.analysis.stable import cut_at_zero
from vnetbench.spec.units import (
    cannot_be_negative,
    display_unit,
    format_metric,
    format_metric_interval,
    metric_name,
    minus,
    plain_number,
)

Verdict = Literal["reproducible", "not reproducible", "inconclusive"]


@dataclass(frozen=True)
class ReproducibilityThresholds:
    cv_max_ratio: float = 0.05  # largest acceptable CV of the rebuild means
    tolerance_ratio: float = 0.05  # largest difference from the first build that does not matter
    confidence: float = 0.95  # of the Welch interval; 1 − confidence is the tests' α
    min_builds: int = 2  # fewest rebuilds to judge
    tolerance_abs: float = 0.0  # absolute difference (metric's unit) that never matters

    def __post_init__(self) -> None:
        check_confidence(self.confidence)
        bad = self.cv_max_ratio <= 0 or self.tolerance_ratio <= 0 or self.tolerance_abs < 0
        if bad or self.min_builds < 2:
            raise DataError(
                "thresholds",
                "cv_max_ratio and tolerance_ratio must be > 0, tolerance_abs ≥ 0 and min_builds ≥ 2",
                "fix the values",
            )


@dataclass(frozen=True)
class MetricReproducibility:
    metric: str
    first_build: Any
    n_first: int
    mean_first: float
    sd_first: float
    first_ci: tuple[float, float]
    n_rebuilds: int
    mean_rebuilds: float  # mean of the rebuild means
    sd_rebuilds: float  # SD of the rebuild means
    cv_rebuilds_ratio: float
    difference: float  # mean_rebuilds − mean_first
    difference_ratio: float  # difference / |mean_first|
    welch_ci: tuple[float, float]  # (difference, difference) when exact
    welch_t: float  # NaN when exact
    welch_df: float  # NaN when exact
    welch_p: float  # NaN when exact: no test applies
    mannwhitney_u: float
    mannwhitney_p: float
    verdict: Verdict
    reasoning: tuple[str, ...]
    thresholds: ReproducibilityThresholds
    per_build: pd.DataFrame = field(repr=False)  # build, n, mean, sd, is_first
    exact: bool = False  # no spread in the first build nor among the rebuild means: the difference is exact

    @property
    def text(self) -> str:
        return " ".join(self.reasoning)

    def to_dict(self) -> dict[str, Any]:
        return jsonable(
            {
                k: getattr(self, k)
                for k in (
                    "metric",
                    "first_build",
                    "n_first",
                    "mean_first",
                    "sd_first",
                    "first_ci",
                    "n_rebuilds",
                    "mean_rebuilds",
                    "sd_rebuilds",
                    "cv_rebuilds_ratio",
                    "difference",
                    "difference_ratio",
                    "welch_ci",
                    "welch_t",
                    "welch_df",
                    "welch_p",
                    "exact",
                    "mannwhitney_u",
                    "mannwhitney_p",
                    "verdict",
                    "reasoning",
                    "per_build",
                )
            }
            | {"thresholds": vars(self.thresholds)}
        )


def reproducibility(
    frame: pd.DataFrame,
    value: str = "value",
    build: str = "build",
    metric: str = "metric",
    first_build: Any = None,
    thresholds: ReproducibilityThresholds | None = None,
) -> list[MetricReproducibility]:
    """One result per metric. `first_build` defaults to the smallest build id."""
    th = thresholds or ReproducibilityThresholds()
    require_columns(frame, [value, build, metric])
    data = frame.assign(**{value: numeric_column(frame, value)})
    first = data[build].min() if first_build is None else first_build
    first = first.item() if isinstance(first, np.generic) else first  # 0, not np.int64(0), in the text
    if not (data[build] == first).any():
        raise DataError(f"column '{build}'", f"first build {first!r} not in the data", "name a build present")
    return [_one(str(m), g, value, build, first, th) for m, g in data.groupby(metric, sort=True)]


def _one(
    name: str, g: pd.DataFrame, value: str, build: str, first: Any, th: ReproducibilityThresholds
) -> MetricReproducibility:
    ref = g.loc[g[build] == first, value].to_numpy(dtype=float)
    per_build = g.groupby(build, sort=True)[value].agg(n="count", mean=anchored_mean, sd="std").reset_index()
    per_build["is_first"] = per_build[build] == first
    rebuilds = per_build.loc[~per_build["is_first"], "mean"].to_numpy(dtype=float)

    m1 = anchored_mean(ref)
    # equal values have SD 0, not numpy's rounding residue; one value has none
    sd1 = (float(ref.std(ddof=1)) if np.ptp(ref) > 0 else 0.0) if ref.size > 1 else float("nan")
    t1 = float(stats.t.ppf((1 + th.confidence) / 2, ref.size - 1)) if ref.size > 1 else float("nan")
    half1 = t1 * sd1 / np.sqrt(ref.size)
    first_ci = cut_at_zero(m1 - half1, m1 + half1, cannot_be_negative(name))  # a mean: cut like describe()
    mr = anchored_mean(rebuilds) if rebuilds.size else float("nan")
    sdr = float(rebuilds.std(ddof=1)) if rebuilds.size > 1 else float("nan")
    cv = sdr / abs(mr) if rebuilds.size > 1 and mr != 0 else float("nan")
    diff = mr - m1
    diff_ratio = diff / abs(m1) if m1 != 0 else float("nan")
    band = max(th.tolerance_ratio * abs(m1), th.tolerance_abs)

    enough = ref.size >= 2 and rebuilds.size >= th.min_builds
    show = partial(format_metric, name)  # in the unit a person reads (Mbit/s, ms, %)
    why = [
        f"{shown_name(name)}: first build {first!r} mean {show(m1)} (n = {ref.size}); "
        f"{rebuilds.size} rebuilds, mean of their means {show(mr)}, CV across rebuilds {percent(cv)}."
    ]
    exact = bool(enough and np.ptp(ref) == 0 and np.ptp(rebuilds) == 0)
    welch_ci, wt, wdf, wp, mu, mp = _tests(ref, rebuilds, th, diff, enough)
    spread = _Spread(cv, sdr, diff, diff_ratio, band, welch_ci, wp, mp, exact)
    verdict = _verdict(th, enough, spread, why, name)
    return MetricReproducibility(
        metric=name,
        first_build=first,
        n_first=int(ref.size),
        mean_first=m1,
        sd_first=sd1,
        first_ci=first_ci,
        n_rebuilds=int(rebuilds.size),
        mean_rebuilds=mr,
        sd_rebuilds=sdr,
        cv_rebuilds_ratio=cv,
        difference=diff,
        difference_ratio=diff_ratio,
        welch_ci=welch_ci,
        welch_t=wt,
        welch_df=wdf,
        welch_p=wp,
        mannwhitney_u=mu,
        mannwhitney_p=mp,
        verdict=verdict,
        reasoning=tuple(why),
        thresholds=th,
        per_build=per_build.rename(columns={build: "build"}),
        exact=exact,
    )


def _tests(
    ref: np.ndarray, rebuilds: np.ndarray, th: ReproducibilityThresholds, diff: float, enough: bool
) -> tuple[tuple[float, float], float, float, float, float, float]:
    """Welch's interval (t, df, p) of the rebuilds' means against the first build, and Mann-Whitney (U, p)."""
    nan = float("nan")
    welch_ci, wt, wdf, wp, mu, mp = (nan, nan), nan, nan, nan, nan, nan
    if not enough:
        return welch_ci, wt, wdf, wp, mu, mp
    if np.ptp(ref) > 0 or np.ptp(rebuilds) > 0:
        w = welch(rebuilds, ref)
        ci = w.confidence_interval(th.confidence)
        welch_ci, wt, wdf, wp = (
            (float(ci.low), float(ci.high)),
            float(w.statistic),
            float(w.df),
            float(w.pvalue),
        )
    else:  # every value identical within each group: t = d/0, no test applies; the difference is exact
        welch_ci = (diff, diff)
    u = mann_whitney(rebuilds, ref)  # ranks: defined either way; exact for few rebuilds
    mu, mp = float(u.statistic), float(u.pvalue)
    return welch_ci, wt, wdf, wp, mu, mp


@dataclass(frozen=True)
class _Spread:
    """What the verdict weighs: the rebuilds' spread and their difference to the first build."""

    cv: float
    sdr: float
    diff: float
    diff_ratio: float
    band: float  # the tolerance, in the metric's unit
    welch_ci: tuple[float, float]
    wp: float
    mp: float
    exact: bool  # no spread on either side: welch_ci is the point (diff, diff), wp NaN


def _verdict(
    th: ReproducibilityThresholds,
    enough: bool,
    sp: _Spread,
    why: list[str],
    name: str,
) -> Verdict:
    """Reproducible, not, or inconclusive; the reasons go to `why`, in the display unit of `name`."""
    show = partial(format_metric, name)
    cv, sdr, diff, diff_ratio, band, welch_ci, wp, mp, exact = (
        sp.cv, sp.sdr, sp.diff, sp.diff_ratio, sp.band, sp.welch_ci, sp.wp, sp.mp, sp.exact
    )  # fmt: skip
    alpha = 1 - th.confidence
    pct = f"{100 * th.confidence:g} %"
    verdict: Verdict
    if not enough:
        verdict = "inconclusive"
        why.append(f"Too few values to judge: need ≥ 2 in the first build and ≥ {th.min_builds} rebuilds.")
    elif np.isfinite(cv) and cv > th.cv_max_ratio and not sdr <= th.tolerance_abs:
        verdict = "not reproducible"
        why.append(
            f"The rebuilds disagree with each other: CV {percent(cv)} > the allowed "
            f"{percent(th.cv_max_ratio)}."
        )
    else:
        if np.isfinite(cv) and cv > th.cv_max_ratio:
            why.append(
                f"The CV {percent(cv)} exceeds {percent(th.cv_max_ratio)} only because the mean is near "
                "zero: "
                f"the rebuild means' SD {show(sdr, True, True).lstrip('+')} is within the absolute "
                f"tolerance {show(th.tolerance_abs, True, True).lstrip('+')}."
            )
        lo, hi = welch_ci
        interval = format_metric_interval(name, lo, hi, unit=True, delta=True)  # pp of a ratio
        tolerance = show(band, True, True).lstrip("+")  # a difference: of a ratio, in percentage points
        tested = (
            "the exact difference (every first-build value and every rebuild's mean the same: no spread, "
            "so no test applies) "
            if exact
            else f"the {pct} Welch interval of the difference {interval} "
        )
        where = tested + (
            f"against the tolerance ±{percent(th.tolerance_ratio)} of the first build's mean (±{tolerance})"
            if band > th.tolerance_abs
            else f"against the absolute tolerance ±{tolerance}"
        )
        # relative to a first build of 0 (no loss) there is no ratio: '0 pp', not '0 pp (undefined)'
        relative = f" ({percent(diff_ratio, True)})" if np.isfinite(diff_ratio) else ""
        if -band <= lo and hi <= band:
            verdict = "reproducible"
            why.append(
                f"The difference {show(diff, True, True)}{relative} is too small to matter: "
                f"{where} lies inside."
            )
            if exact and diff != 0:
                why.append(
                    "The difference is real, the same in every repetition, but smaller than the tolerance: "
                    "real is not the same as important."
                )
            elif lo > 0 or hi < 0:
                why.append(
                    f"The difference is detectable (Welch p = {wp:.3g}) but smaller than the tolerance: "
                    "significant is not the same as important."
                )
        elif lo > band or hi < -band:
            verdict = "not reproducible"
            why.append(
                f"The rebuilds differ by {show(diff, True, True)}{relative}: {where} lies wholly outside."
            )
        else:
            verdict = "inconclusive"
            why.append(
                f"Cannot tell: {where} straddles the band's edge; more rebuilds or replications would decide."
            )
        if np.isfinite(wp) and np.isfinite(mp) and (wp < alpha) != (mp < alpha):
            why.append(
                f"Welch p = {wp:.3g} and Mann-Whitney p = {mp:.3g} disagree at α = {alpha:g}: "
                "the distributions may differ in shape even where the means agree."
            )
    return verdict


def anchored_mean(values: Any) -> float:
    """The mean taken around the first value: identical values have that value as their mean exactly
    (numpy's mean of three 0.1 is 0.10000000000000002, of two 0.1 is 0.1, a difference of 1.4e-17
    between two builds that measured the same)."""
    x = np.asarray(values, dtype=float)
    return float(x[0] + (x - x[0]).mean())


def percent(ratio: float, signed: bool = False) -> str:
    """A ratio as a percentage, three significant digits, never in exponent form (the rebuilds
    table and its sentences alike: a CV of 0.00795 %, not '0.00 %' in one and '7.95e-03 %');
    `signed` for a difference: '+0.00296 %' beside '−0.00166 %' (the minus sign U+2212, as
    `format_metric`'s differences)."""
    if not np.isfinite(ratio):
        return "undefined"
    text = plain_number(100 * ratio, 3)
    text = text.rstrip("0").rstrip(".") if "." in text else text
    if signed and ratio > 0 and text != "0":
        text = "+" + text
    return f"{minus(text)} %"


def shown_name(name: str) -> str:
    """A metric's name ending in its stored name, for people, with the unit: 'tcp vma→vmb
    throughput_bps' -> 'tcp vma→vmb throughput (Mbit/s)', as the rebuilds table names its rows; the
    measurement's name once: 'rtt vma→vmb mean (ms)', not 'rtt vma→vmb rtt mean (ms)'."""
    words = name.split()
    if not words:
        return name
    label = display_unit(words[-1]).label
    after = words[0] if len(words) > 1 else ""
    return " ".join([*words[:-1], metric_name(words[-1], after) + (f" ({label})" if label else "")])
