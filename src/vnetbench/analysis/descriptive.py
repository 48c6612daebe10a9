"""Per-connection descriptive statistics and the competition verdict (ExoGENI Tables 11–17 form).

Inputs are the store's frames: `measurements_frame` (one row per flow measurement with its summary
metrics as columns) and `samples_frame` (long format time series).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from scipy import stats

from vnetbench.analysis.fairness import index_sd_text, jain_index, mean_index_interval
from vnetbench.analysis.stable import cut_at_zero
from vnetbench.spec.units import cannot_be_negative, interval_ends

STATS = ("n", "mean", "sd", "min", "median", "p95", "max", "ci_low", "ci_high")
CONFIDENCE = 0.95  # of the interval of the mean that describe() gives unless asked for another
CONNECTION = ["measurement", "kind", "src", "dst", "placement"]
ALONE = ("single", "alone")  # a flow measured on its own
FAIR_INDEX = 0.95  # Jain's index from which a repetition's shares count as fair
SETTLED_TCP_S = 60  # TCP flows shorter than this may not have converged (benchmarks/fidelity window study)


def describe(
    values: pd.Series | np.ndarray | list[float], nonnegative: bool = False, confidence: float = CONFIDENCE
) -> dict[str, float]:
    """n, mean, SD, min, median, p95, max of the values (NaN left out), and the t interval of the mean
    at `confidence` (a campaign's `analysis.confidence`, 95 % by default; SD and interval NaN with
    fewer than two values), cut at 0 when the metric cannot be negative;
    `ci_cut` says whether it was, so a report can say so beside an interval that starts at 0."""
    arr = np.asarray(pd.Series(values).dropna(), dtype=float)
    if arr.size == 0:
        return {"n": 0, **{k: float("nan") for k in STATS[1:]}, "ci_cut": False}
    # equal values have SD 0, not numpy's rounding residue (ten pings of 10.1 ms printed "SD 1.87e-15");
    # one value has no sample SD at all (n − 1 = 0), not an SD of 0
    spread = float(arr.std(ddof=1)) if arr.max() > arr.min() else 0.0
    sd = spread if arr.size > 1 else float("nan")
    half = (
        float(stats.t.ppf((1 + confidence) / 2, arr.size - 1)) * sd / np.sqrt(arr.size)
        if arr.size > 1
        else np.nan
    )
    low, high = cut_at_zero(float(arr.mean() - half), float(arr.mean() + half), nonnegative)
    cut = bool(arr.mean() - half < low)
    return {
        "n": int(arr.size),
        "mean": float(arr.mean()),
        "sd": sd,
        "min": float(arr.min()),
        "median": float(np.median(arr)),
        "p95": float(np.percentile(arr, 95)),
        "max": float(arr.max()),
        "ci_low": low,
        "ci_high": high,
        "ci_cut": cut,
    }


def ok_alone(frame: pd.DataFrame) -> pd.DataFrame:
    """The ok measurements of flows that ran alone (single, or the alone steps of a group)."""
    if frame.empty:
        return frame
    return frame[(frame["status"] == "ok") & frame["group_kind"].isin(ALONE)]


def connection_table(
    frame: pd.DataFrame, kind: str, metric: str, scale: float = 1.0, confidence: float = CONFIDENCE
) -> pd.DataFrame:
    """One row per connection: statistics of `metric` over its repetitions, divided by `scale`, the
    interval of the mean at `confidence`; `repetitions` counts the distinct repetitions among its n
    values (n when each is one repetition's), `offered_rate` and `of_offered` a UDP flow's offered rate
    (÷ `scale`) and the mean share of it received."""
    rows = ok_alone(frame)
    if rows.empty or metric not in rows:
        return pd.DataFrame()
    rows = rows[rows["kind"] == kind]
    out = []
    for keys, group in rows.groupby(CONNECTION, sort=False):
        summary = describe(group[metric] / scale, cannot_be_negative(metric), confidence)
        entry = dict(zip(CONNECTION, keys, strict=True)) | summary
        valued = group[group[metric].notna()]
        if "repetition" in valued:
            entry["repetitions"] = int(valued["repetition"].nunique())
        if "offered_bps" in group and group["offered_bps"].gt(0).any() and metric == "throughput_bps":
            offered = group[group["offered_bps"].gt(0)]
            entry["offered_rate"] = float(offered["offered_bps"].mean() / scale)
            entry["of_offered"] = float((offered[metric] / offered["offered_bps"]).mean())
        if (
            "expected_max_bps" in group
            and group["expected_max_bps"].notna().any()
            and metric == "throughput_bps"
        ):
            entry["of_model_max"] = float((group[metric] / group["expected_max_bps"]).mean())
            entry["model_max"] = float(group["expected_max_bps"].mean() / scale)
        if "link_rate_bps" in group and group["link_rate_bps"].notna().any():
            entry["link_rate"] = float(group["link_rate_bps"].iloc[0])
        out.append(entry)
    return pd.DataFrame(out)


def rtt_table(frame: pd.DataFrame, samples: pd.DataFrame) -> pd.DataFrame:
    """RTT statistics per connection over every reply of every repetition (ns → ms)."""
    rows = ok_alone(frame)
    if rows.empty or samples.empty:
        return pd.DataFrame()
    rows = rows[rows["kind"] == "rtt"]
    rtts = samples[samples["metric"] == "rtt_ns"]
    out = []
    for keys, group in rows.groupby(CONNECTION, sort=False):
        values = rtts[rtts["measurement_id"].isin(group["id"])]["value"] / 1e6
        entry = dict(zip(CONNECTION, keys, strict=True)) | describe(values, nonnegative=True)
        sent = group.get("sent_packets", pd.Series(dtype=float)).sum()
        received = group.get("received_packets", pd.Series(dtype=float)).sum()
        entry["loss"] = float(1 - received / sent) if sent else float("nan")
        entry["unreachable"] = float(group.get("unreachable_events", pd.Series([0.0])).fillna(0).sum())
        out.append(entry)
    return pd.DataFrame(out)


def _jain_or_nan(values: np.ndarray) -> float:
    """Jain's index of one repetition's flows; NaN where it is undefined (no, negative or NaN rates)."""
    x = np.asarray(values, dtype=float)
    ok = x.size and np.all(np.isfinite(x)) and np.all(x >= 0)
    return jain_index(x) if ok else float("nan")


@dataclass
class FlowShare:
    src: str
    dst: str
    alone_mean: float
    together_mean: float

    @property
    def ratio(self) -> float:
        return self.together_mean / self.alone_mean if self.alone_mean else float("nan")


NOT_COMPARED = "no flow was measured alone; cannot compare"  # the verdict without a baseline


@dataclass
class Competition:
    """Do simultaneous flows get less than each alone? One per star/fan-in group and measurement."""

    pattern: str
    pattern_kind: str
    measurement: str
    metric: str
    flows: list[FlowShare]
    jain_mean: float
    jain_sd: float
    sum_together: float
    link_rate: float | None
    skew_mean_ns: float
    skew_max_ns: float
    repetitions: int
    verdict: str
    reasons: list[str] = field(default_factory=list)
    model_max: float | None = None  # overhead-model maximum goodput of the shared bottleneck
    jain_per_rep: list[float] = field(default_factory=list)  # each repetition's index, in order
    jain_interval: tuple[float, float] = (float("nan"), float("nan"))  # of the expected index
    confidence: float = CONFIDENCE  # of jain_interval: the spec's analysis.confidence
    duration_s: float = float("nan")  # median run time of the flows together (the tool's process)
    kind: str = ""  # the measurement kind: tcp, udp or rtt
    # per repetition with both: the flows' mean of together / alone within that repetition, in order
    ratio_per_rep: list[float] = field(default_factory=list)


def competition(frame: pd.DataFrame, confidence: float = CONFIDENCE) -> list[Competition]:
    """Every group of simultaneous TCP/UDP/RTT flows against the same flows measured alone; the
    interval of the expected Jain index at `confidence` (the spec's analysis.confidence)."""
    if frame.empty:
        return []
    ok = frame[frame["status"] == "ok"]
    results = []
    together = ok[ok["group_kind"] == "together"]
    for (pattern, measurement), group in together.groupby(["pattern", "measurement"], sort=False):
        kind = group["kind"].iloc[0]
        if kind not in {"tcp", "udp", "rtt"}:
            continue  # a pps sweep's points are compared one by one in the packet-rate section
        metric = "throughput_bps" if kind in {"tcp", "udp"} else "rtt_mean_ns"
        if metric not in group:
            continue
        alone = ok[
            (ok["pattern"] == pattern) & (ok["measurement"] == measurement) & (ok["group_kind"] == "alone")
        ]
        shares = []
        for (src, dst), flows in group.groupby(["src", "dst"], sort=False):
            solo = alone[(alone["src"] == src) & (alone["dst"] == dst)][metric]
            shares.append(
                FlowShare(
                    src, dst, float(solo.mean()) if len(solo) else float("nan"), float(flows[metric].mean())
                )
            )
        per_rep = group.groupby("repetition")[metric]
        jains = per_rep.apply(lambda s: _jain_or_nan(s.to_numpy()))
        sums = per_rep.sum()
        skews = group.groupby("repetition")["start_skew_ns"].first().astype(float)
        link = group["link_rate_bps"].dropna()
        model = group["expected_max_bps"].dropna() if "expected_max_bps" in group else pd.Series(dtype=float)
        comp = Competition(
            pattern=pattern,
            pattern_kind=group["pattern_kind"].iloc[0],
            measurement=measurement,
            metric=metric,
            flows=shares,
            jain_mean=float(jains.mean()),
            jain_sd=float(jains.std(ddof=1)) if jains.count() > 1 else float("nan"),  # one: no SD
            sum_together=float(sums.mean()),
            link_rate=float(link.iloc[0]) if len(link) else None,
            skew_mean_ns=float(skews.mean()),
            skew_max_ns=float(skews.max()),
            repetitions=int(per_rep.ngroups),
            verdict="",
            model_max=float(model.iloc[0]) if len(model) else None,
            jain_per_rep=[float(j) for j in jains],
            kind=kind,
            jain_interval=mean_index_interval(jains.dropna().to_numpy(), len(shares), confidence),
            confidence=confidence,
            duration_s=float(group["duration_ns"].median()) / 1e9 if "duration_ns" in group else float("nan"),
        )
        comp.ratio_per_rep = _ratio_per_rep(group, alone, metric)
        comp.verdict, comp.reasons = _verdict(comp)
        results.append(comp)
    return results


def _ratio_per_rep(together: pd.DataFrame, alone: pd.DataFrame, metric: str) -> list[float]:
    """Each repetition's mean over its flows of together / alone, both from that repetition."""
    if "repetition" not in together or "repetition" not in alone:
        return []
    solo = alone.groupby(["repetition", "src", "dst"])[metric].mean()
    out = []
    for rep, flows in together.groupby("repetition", sort=True):
        ratios = [
            float(value) / float(solo[(rep, src, dst)])
            for src, dst, value in zip(flows["src"], flows["dst"], flows[metric], strict=True)
            if (rep, src, dst) in solo.index and solo[(rep, src, dst)] > 0 and np.isfinite(value)
        ]
        if ratios:
            out.append(float(np.mean(ratios)))
    return out


RTT_CHANGE = 1.1  # together / alone beyond this factor (either way) is a change, not jitter


def _rtt_verdict(ratios: list[float], reps: list[float]) -> tuple[str, list[str]]:
    """Whether RTT changed when measured together: the flows' mean ratio beyond RTT_CHANGE (one
    flow's jitter is not a trend) and the same direction in most repetitions (one repetition's
    high RTTs can carry the mean of a few)."""
    # percentages with one decimal, as the section's table writes each flow's together / alone
    # (it read 'mean RTT together / alone: 0.70, 0.74, 0.79' beside 70.5 %, 73.8 %, 79.0 %)
    reasons = [f"each flow's mean RTT together / alone: {', '.join(f'{100 * r:.1f} %' for r in ratios)}"]
    if reps:
        reasons.append(
            "within each repetition, together / alone (mean over the flows): "
            + ", ".join(f"{100 * r:.1f} %" for r in reps)
        )
    mean_ratio = float(np.mean(ratios)) if ratios else 1.0
    if mean_ratio > RTT_CHANGE:
        grew = sum(r > RTT_CHANGE for r in reps)
        if reps and 2 * grew <= len(reps):
            return (
                f"RTT grew when measured together in only {grew} of {len(reps)} repetitions: no consistent "
                "effect",
                reasons,
            )
        return "RTT grows when measured together", reasons
    shrank = sum(r < 1 / RTT_CHANGE for r in reps)
    if mean_ratio < 1 / RTT_CHANGE and (not reps or 2 * shrank > len(reps)):
        # exogeni-exp4: 0.71-0.79 of alone in every repetition; "unaffected" hid a change
        return (
            f"RTT not slowed by simultaneous probes: lower together than alone "
            f"({100 * mean_ratio:.1f} % of it on average)",
            reasons,
        )
    return "RTT unaffected by simultaneous probes", reasons


def _verdict(comp: Competition) -> tuple[str, list[str]]:
    ratios = [f.ratio for f in comp.flows if np.isfinite(f.ratio)]
    reasons = []
    if comp.metric == "rtt_mean_ns":
        return _rtt_verdict(ratios, comp.ratio_per_rep)
    if not ratios:
        return NOT_COMPARED, reasons
    mean_ratio = float(np.mean(ratios))
    n = len(comp.flows)
    reasons.append(
        f"each flow got {100 * mean_ratio:.1f} % of its alone throughput on average "
        f"(range {100 * min(ratios):.1f}–{100 * max(ratios):.1f} %, as the table's together / alone); "
        f"with {n} flows an equal share is {100 / n:.0f} %"
    )
    low, high = comp.jain_interval
    interval = (
        # four digits with their zeros, as the fairness table's interval (`format_interval`): 0.6571
        # to 0.9982, 1.000 to 1.000 (it read '1 to 1' beside that table's '(1.000 to 1.000)')
        f", {100 * comp.confidence:g} % interval of the expected index "
        + " to ".join(interval_ends(low, high, 4))
        if np.isfinite(low) and np.isfinite(high)
        else ""
    )
    reasons.append(
        f"Jain's fairness index {jain_text(comp)} over {comp.repetitions} "
        f"repetition{'' if comp.repetitions == 1 else 's'}{interval} "
        f"(1 = equal shares, {1 / n:.2f} = one flow takes all)"
    )
    reasons.append(
        f"flows were released within {comp.skew_mean_ns / 1e6:.2f} ms of each other on average "
        f"(worst {comp.skew_max_ns / 1e6:.2f} ms)"
    )
    if mean_ratio < 0.9:
        fair = _fairness(comp)
        if "unfairly" in fair and comp.flows and may_not_have_settled(comp):
            reasons.append(
                f"the flows ran {comp.duration_s:.0f} s: TCP flows' shares settle over tens of seconds on "
                "slow links, so an index below 0.95 from a short run can be congestion control still "
                "converging rather than an unfair network (see Fairness of simultaneous flows)"
            )
        return f"the flows compete: each gets less than alone, and {fair}", reasons
    return "the flows do not compete: each gets about what it gets alone", reasons


def jain_text(comp: Competition) -> str:
    """'0.987 ± 0.00412 (mean ± SD)' over the repetitions, the SD as the fairness table writes it
    (`index_sd_text`): '1.000 (mean; SD < 0.0001)', not '1.000 ± 0.000' beside the table's
    'SD < 0.0001'; '0.987' from one repetition: no SD."""
    sd = index_sd_text(comp.jain_sd)
    if not sd:
        return f"{comp.jain_mean:.3f}"
    if sd.startswith("<"):
        return f"{comp.jain_mean:.3f} (mean; SD {sd})"
    return f"{comp.jain_mean:.3f} ± {sd} (mean ± SD)"


def _fairness(comp: Competition) -> str:
    """What the repetitions showed, one by one: a claim about each measured run, not about the
    expected index (a few runs bound that only loosely; its interval is among the reasons)."""
    indices = [j for j in comp.jain_per_rep if np.isfinite(j)]
    if not indices:
        return "no repetition gives a Jain's index"
    fair = sum(j >= FAIR_INDEX for j in indices)
    shown = (
        ", ".join(f"{j:.3f}" for j in indices)
        if len(indices) <= 5
        else f"{min(indices):.3f}–{max(indices):.3f}"
    )
    if len(indices) == 1:
        return f"they share {'fairly' if fair else 'unfairly'} in the one repetition (Jain's index {shown})"
    if fair == len(indices):
        return f"they share fairly in {_all(indices)} repetitions (Jain's index {shown})"
    if fair == 0:
        below = f"Jain's index {shown}, each below {FAIR_INDEX}"
        return f"they share unfairly in {_all(indices)} repetitions ({below})"
    return (
        f"they share fairly in {fair} of {len(indices)} repetitions and unfairly in the "
        f"{'other' if len(indices) - fair == 1 else f'other {len(indices) - fair}'} "
        f"(Jain's index {shown}; ≥ {FAIR_INDEX} counts as fair)"
    )


def may_not_have_settled(comp: Competition) -> bool:
    """TCP flows together for less than a minute: their shares may still be converging."""
    return comp.metric == "throughput_bps" and comp.kind == "tcp" and comp.duration_s < SETTLED_TCP_S


def _all(items: list[float]) -> str:
    return "both" if len(items) == 2 else f"all {len(items)}"
