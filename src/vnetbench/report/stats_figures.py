"""Figures of the statistics results (matplotlib, Agg). Each function writes PNG and SVG beside
`path` (its suffix is replaced) and returns both paths."""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from vnetbench.analysis.contrasts import ContrastCI
from vnetbench.analysis.diagnostics import Diagnostics, Fitted, diagnostics
from vnetbench.analysis.one_factor import OneFactorAnova
from vnetbench.analysis.reproducibility import MetricReproducibility
from vnetbench.analysis.two_k_r import FactorialEffect, TwoKRResult
from vnetbench.palette import BLACK, BLUE, MAGENTA, NEUTRAL
from vnetbench.report import format as fmt
from vnetbench.report.figures import plt


def _save(fig: plt.Figure, path: Path) -> tuple[Path, Path]:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.tight_layout()
    png, svg = path.with_suffix(".png"), path.with_suffix(".svg")
    fig.savefig(png, dpi=110, bbox_inches="tight")  # legends beside the axes too
    fig.savefig(svg, bbox_inches="tight")
    plt.close(fig)
    return png, svg


def _diag(result: Fitted | Diagnostics) -> Diagnostics:
    return result if isinstance(result, Diagnostics) else diagnostics(result)


def residuals_vs_predicted(
    result: Fitted | Diagnostics, path: Path, title: str = "", scale: float = 1.0, unit: str = ""
) -> tuple[Path, Path]:
    """A trend or a funnel means the errors' spread depends on the response (Jain's visual test).
    `scale` and `unit` show the response in a readable unit (1e6, "Mbit/s" for bit/s)."""
    d = _diag(result)
    fig, ax = plt.subplots(figsize=(6, 4))
    ax.scatter(np.asarray(d.predicted) / scale, np.asarray(d.residuals) / scale, s=14, alpha=0.7)
    ax.axhline(0, color=NEUTRAL, lw=0.8)
    ax.set_xlabel("predicted response" + fmt.unit_suffix(unit))
    ax.set_ylabel("residual" + fmt.unit_suffix(unit))
    ax.set_title(title or "Residuals vs predicted response")
    return _save(fig, path)


def normal_qq(
    result: Fitted | Diagnostics, path: Path, title: str = "", scale: float = 1.0, unit: str = ""
) -> tuple[Path, Path]:
    """Residual quantiles against normal quantiles, with the fitted line; a straight line is normal.
    `scale` and `unit`: the residuals in the unit the title names (%, not a ratio, for a loss)."""
    d = _diag(result)
    fig, ax = plt.subplots(figsize=(5, 5))
    ax.scatter(d.qq_theoretical, np.asarray(d.qq_ordered) / scale, s=14, alpha=0.7)
    x = np.array([d.qq_theoretical.min(), d.qq_theoretical.max()]) if d.qq_theoretical.size else np.zeros(2)
    fit = (d.qq_intercept + d.qq_slope * x) / scale
    ax.plot(x, fit, color=MAGENTA, lw=1, label=f"fit, r = {d.qq_r:.3f}")
    ax.set_xlabel("normal quantile")
    ax.set_ylabel("residual quantile" + fmt.unit_suffix(unit))
    ax.set_title(title or "Normal quantile-quantile plot of residuals")
    ax.legend(loc="upper left")
    return _save(fig, path)


def level_means(
    anova: OneFactorAnova,
    path: Path,
    threshold: float | None = None,
    title: str = "",
    scale: float = 1.0,
    unit: str = "",
) -> tuple[Path, Path]:
    """Mean response per level with the interval of each mean (s_e/√r_j, pooled), and the
    capacity threshold as a reference line (grey dashed, named in the legend: a criterion of the
    capacity recommendation, not the dashboard's critical level, so not its vermillion)."""
    x = np.arange(anova.a)
    means = np.array([e.mean for e in anova.effects]) / scale
    half = np.array([anova.t_quantile * anova.s_e / np.sqrt(e.n) for e in anova.effects]) / scale
    threshold = None if threshold is None else threshold / scale
    fig, ax = plt.subplots(figsize=(7, 4))
    ax.errorbar(x, means, yerr=half, fmt="o-", capsize=3, label=f"mean, {100 * anova.confidence:g} % CI")
    if threshold is not None:
        shown = f"{threshold:g} {unit}".strip()
        ax.axhline(threshold, color=NEUTRAL, ls="--", lw=1, label=f"capacity threshold {shown}")
    ax.set_xticks(x, [str(lv) for lv in anova.levels])
    ax.set_xlabel(anova.factor)
    ax.set_ylabel(anova.response + fmt.unit_suffix(unit))
    ax.set_title(title or f"Mean {anova.response} per {anova.factor}")
    ax.legend()
    return _save(fig, path)


def _effect_label(result: TwoKRResult, e: FactorialEffect) -> str:
    """A main effect names the levels its sign compares ('A (cc: reno − cubic)'): a bar to the right
    means the second level's mean is higher. Interactions keep their name (the table says alike −
    unlike in full)."""
    if len(e.letters) == 1:
        return f"{e.letters} ({result.compares(e)})"
    return e.letters if e.name == e.letters else f"{e.letters} ({e.name})"


def effects_chart(
    result: TwoKRResult | OneFactorAnova, path: Path, title: str = "", scale: float = 1.0, unit: str = ""
) -> tuple[Path, Path]:
    """Effects with their intervals: q's of a 2^k r design (without q0), or α_j of a one-factor one."""
    if isinstance(result, TwoKRResult):
        items = [
            (_effect_label(result, e), e.q, e.ci_low, e.ci_high) for e in result.effects if e.letters != "I"
        ]
        default = f"Effects on {result.response}"
    else:
        items = [(str(e.level), e.effect, e.ci_low, e.ci_high) for e in result.effects]
        default = f"Effects α_j of {result.factor} on {result.response}"
    labels, q, lo, hi = zip(*items, strict=True)
    q, lo, hi = np.array(q) / scale, np.array(lo) / scale, np.array(hi) / scale
    y = np.arange(len(labels))
    fig, ax = plt.subplots(figsize=(7, 0.5 * len(labels) + 1.5))
    colours = [BLUE if (a > 0 or b < 0) else NEUTRAL for a, b in zip(lo, hi, strict=True)]
    ax.barh(y, q, color=colours, alpha=0.6)
    ax.errorbar(q, y, xerr=[q - lo, hi - q], fmt="none", ecolor="black", capsize=3)
    ax.axvline(0, color=NEUTRAL, lw=0.8)
    ax.set_yticks(y, labels)
    ax.invert_yaxis()
    ax.set_xlabel(f"effect{fmt.unit_suffix(unit)}, {100 * result.confidence:g} % CI; grey: not significant")
    ax.set_title(title or default)
    return _save(fig, path)


def contrast_intervals(
    contrasts: Sequence[ContrastCI], path: Path, title: str = "", scale: float = 1.0, unit: str = ""
) -> tuple[Path, Path]:
    """Intervals of contrasts (e.g. successive differences) against zero."""
    est = np.array([c.estimate for c in contrasts]) / scale
    lo = np.array([c.ci_low for c in contrasts]) / scale
    hi = np.array([c.ci_high for c in contrasts]) / scale
    y = np.arange(len(contrasts))
    fig, ax = plt.subplots(figsize=(7, 0.45 * len(contrasts) + 1.5))
    ax.errorbar(est, y, xerr=[est - lo, hi - est], fmt="o", capsize=3)
    ax.axvline(0, color=NEUTRAL, lw=0.8)
    ax.set_yticks(y, [c.label for c in contrasts])
    ax.invert_yaxis()
    conf = f"{100 * contrasts[0].confidence:g} %" if contrasts else ""
    ax.set_xlabel(f"contrast{fmt.unit_suffix(unit)}, {conf} CI")
    ax.set_title(title or "Confidence intervals of contrasts")
    return _save(fig, path)


def reproducibility_chart(result: MetricReproducibility, path: Path, title: str = "") -> tuple[Path, Path]:
    """Mean of each rebuild against the first build's interval (band) and the tolerance (dashed), in
    the metric's display unit (Mbit/s, ms, %)."""
    pb = result.per_build
    rebuilds = pb[~pb["is_first"]]
    scale = fmt.unit_of(result.metric)[0]
    fig, ax = plt.subplots(figsize=(8, 4))
    ax.axhspan(
        *(v / scale for v in result.first_ci),
        color=MAGENTA,
        alpha=0.25,
        label=f"first build, {100 * result.thresholds.confidence:g} % CI",
    )
    ax.axhline(result.mean_first / scale, color=MAGENTA, lw=1)
    th = result.thresholds
    band = max(th.tolerance_ratio * abs(result.mean_first), th.tolerance_abs)
    relative = band > th.tolerance_abs
    absolute = fmt.metric(result.metric, band, True, delta=True).lstrip("+")
    tolerance = f"tolerance ±{100 * th.tolerance_ratio:g} %" if relative else f"tolerance ±{absolute}"
    for sign in (-1, 1):
        label = tolerance if sign > 0 else None
        ax.axhline((result.mean_first + sign * band) / scale, color=NEUTRAL, ls="--", lw=0.8, label=label)
    numeric = pd.api.types.is_numeric_dtype(rebuilds["build"])
    x = rebuilds["build"] if numeric else np.arange(len(rebuilds))
    ax.plot(x, rebuilds["mean"] / scale, "o", color=BLUE, ms=4, label="rebuild mean")
    ax.xaxis.get_major_locator().set_params(integer=True)  # rebuild 2, 3, …: no 2.5
    ax.set_xlabel("rebuild")
    ax.set_ylabel(fmt.shown_metric(result.metric))
    ax.set_title(title or f"{fmt.shown_metric(result.metric)}: {result.verdict}")
    ax.legend(fontsize="small", loc="upper left", bbox_to_anchor=(1.01, 1))  # off the points
    return _save(fig, path)


def placement_chart(
    comparison: dict[str, Any], path: Path, scale: float = 1.0, unit: str = "", title: str = ""
) -> tuple[Path, Path]:
    """Mean per placement category with its interval (GENI Table 1 as a figure). `comparison` is a
    `PlacementComparison.to_dict()`."""
    cats = comparison["categories"]
    names = [c["category"] for c in cats]
    mean = np.array([c["mean"] for c in cats], dtype=float) / scale
    lo = np.array([c["ci_low"] if c["ci_low"] is not None else c["mean"] for c in cats], dtype=float) / scale
    hi = (
        np.array([c["ci_high"] if c["ci_high"] is not None else c["mean"] for c in cats], dtype=float) / scale
    )
    fig, ax = plt.subplots(figsize=(6, 3.8))
    x = np.arange(len(names))
    ax.bar(x, mean, color=BLUE, alpha=0.6)
    ax.errorbar(x, mean, yerr=[mean - lo, hi - mean], fmt="none", ecolor="black", capsize=4)
    ax.set_xticks(x, names)
    value = fmt.metric_name(comparison["value"])  # 'throughput (Mbit/s)', not 'throughput_bps (Mbit/s)'
    ax.set_ylabel(value + fmt.unit_suffix(unit))
    ax.set_title(title or f"{value} per placement ({100 * comparison['confidence']:g} % CI)")
    return _save(fig, path)


def change_points_chart(
    series: dict[str, Any], path: Path, scale: float = 1.0, unit: str = "", title: str = ""
) -> tuple[Path, Path]:
    """A periodic series in time order with its change points (dashed lines) and each segment's
    mean. `series` is an entry of `analyze --json`'s `change_points` (with `times` and `values`)."""
    times = pd.to_datetime(np.asarray(series["times"], dtype="int64"), unit="ns", utc=True)
    values = np.asarray(series["values"], dtype=float) / scale
    fig, ax = plt.subplots(figsize=(8, 3.6))
    ax.plot(times, values, ".", color=BLUE, markersize=3)
    bounds = [0, *(c["index"] for c in series["change_points"]), len(values)]
    for start, end in itertools.pairwise(bounds):
        ax.hlines(values[start:end].mean(), times[start], times[end - 1], color=MAGENTA, linewidth=2)
    for c in series["change_points"]:
        ax.axvline(times[c["index"]], color=BLACK, linestyle="--", linewidth=1)
        label = f"{fmt.signed(100 * c['relative_change'], '.1f')} %"
        ax.annotate(label, (times[c["index"]], values.max()), fontsize="small", color=BLACK, xytext=(3, -10),
                    textcoords="offset points")  # fmt: skip
    ax.set_ylabel(fmt.metric_name(series["response"]) + fmt.unit_suffix(unit))  # no stored name
    ax.set_title(title or f"{series['series']} {series['pair']}: change points")
    fig.autofmt_xdate()
    return _save(fig, path)
