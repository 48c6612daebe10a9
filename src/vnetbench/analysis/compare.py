"""Compare two campaigns (or a campaign with its own past): per (pair, measurement, treatment) and
metric, the difference with its interval, the relative change, a Holm-corrected test and a verdict
against a tolerance. `vnetbench compare A B` prints it (its table: report/comparison_tables.py) and
exits 1 when anything is worse.

What is compared, and how:

- throughput_bps (TCP, UDP; higher is better), loss_ratio and jitter_mean_ns (UDP; lower is better):
  one value per flow and replication (its mean over the run, after `analysis.omit`: recomputed from
  the samples at t ≥ omit, jitter as the mean of its `jitter_ns` samples); Welch's t and interval of
  the difference of means;
- rtt_ns (RTT; lower is better): one value per flow and replication, its median reply; Mann–Whitney
  U and the Hodges–Lehmann shift with its distribution-free interval.

The replication is the unit for every metric. Throughput, loss and jitter are means over a run, and
Welch's t allows the two campaigns different spreads (iperf3's per-second jitter values within a run
are not independent, so pooling them made noise look significant). RTT is latency-like: skewed, with
a long tail, so each run gives its median and the shift of those medians (the median of all
differences b − a, Hodges–Lehmann) is compared. Replies within a run are not independent either:
pooling every reply made a 60 µs drift of a loaded machine between two campaigns "significant"
(p ≈ 0 over 30 v 30 replies). The price is power: with m and n runs the smallest two-sided
Mann–Whitney p is 2 / C(m + n, m) (0.1 at 3 v 3), and a note says so when RTT rows cannot reach
significance.

Verdict: "worse" (or "better") when the change is significant after Holm's correction over every row
of the comparison AND the difference is beyond the tolerance band in the bad (good) direction; else
"same". The band is ±max(tolerance·|A|, an absolute floor per metric): near zero a ratio explodes
(loss from 0.006 % to 0.06 % is +900 % and does not matter), so loss has a floor of 0.1 percentage
point and RTT/jitter of 50 µs, as in the reproducibility check (campaign_parts.ABS_TOLERANCE).
`within_tolerance` says whether the whole interval lies inside the band: "same" measured precisely
enough to say so, not merely "no significant difference".

The interval relative to A (`relative_ci`) is cut at −100 % where it reaches below: every compared
metric cannot be negative, so B − A ≥ −A (`relative_ci_cut`); the test and the verdict use the uncut
interval. Where A's mean is 0 there is no relative change (`relative_note` says so) and the
difference's own interval is cut at 0 instead (`ci_cut`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats
from statsmodels.stats.multitest import multipletests

from vnetbench.analysis import campaign_data as cd
from vnetbench.analysis.campaign_parts import ABS_TOLERANCE
from vnetbench.analysis.contrasts import mann_whitney
from vnetbench.analysis.inputs import DataError, check_confidence
from vnetbench.analysis.jsonable import jsonable
from vnetbench.spec.loader import spec_of
from vnetbench.spec.units import cannot_be_negative, metric_name, signed

KEY = ["pattern", "measurement", "kind", "pair", "treatment", "metric"]
HIGHER_IS_BETTER = {"throughput_bps": True, "loss_ratio": False, "jitter_mean_ns": False, "rtt_ns": False}
LATENCY_LIKE = ("rtt_ns",)
FLOOR = {"loss_ratio": ABS_TOLERANCE["loss_ratio"], "rtt_ns": ABS_TOLERANCE["rtt_mean_ns"]} | {
    "jitter_mean_ns": ABS_TOLERANCE["rtt_mean_ns"]
}
MAX_PAIRS = 4_000_000  # Hodges–Lehmann uses every pairwise difference: thin larger samples
EXACT_U_MAX = 50  # runs per side up to which the interval's critical value comes from U's exact law
SEED = 0


@dataclass(frozen=True)
class Row:
    key: dict[str, str]
    test: str  # "welch" | "mann-whitney" | "exact" (no spread on either side) | "too few"
    n_a: int
    n_b: int
    center_a: float  # mean (Welch) or median (Mann–Whitney)
    center_b: float
    difference: float  # B − A: difference of means, or the Hodges–Lehmann shift
    ci_low: float
    ci_high: float
    p_value: float
    p_holm: float = math.nan
    band: float = math.nan  # the tolerance band's half-width, in the metric's unit
    verdict: str = "same"

    @property
    def relative_change(self) -> float:
        return self.difference / abs(self.center_a) if self.center_a else math.nan

    @property
    def ci_cut(self) -> bool:
        """Whether the interval of B − A reaches below −A for a metric that cannot be negative
        (throughput, loss, jitter, RTT): B ≥ 0, so B − A ≥ −A, and the displayed interval is cut there
        — at −100 % of A, or at 0 where A is 0 (no loss before: B − A is B, never negative). Welch's
        interval is symmetric about the difference; with few runs or a wide spread it reached −1369 %
        of a loss. The test, and so the verdict, uses the uncut interval (`ci_low`, `ci_high`)."""
        return bool(cannot_be_negative(self.key.get("metric", "")) and self.ci_low < -abs(self.center_a))

    @property
    def relative_ci_cut(self) -> bool:
        """`ci_cut` for the interval relative to A (`relative_ci`); false where A is 0, which has no
        relative interval (`relative_note`)."""
        return bool(self.center_a) and self.ci_cut

    @property
    def relative_note(self) -> str | None:
        """Why there is no relative change: A's mean (median) is 0, and a change relative to 0 has no
        meaning (it used to leave `relative_change` null without a word); None where A is not 0."""
        if self.center_a:
            return None
        return (
            f"undefined: A's {'median' if self.test == 'mann-whitney' else 'mean'} is 0, so a change "
            "relative to it has no meaning; the change is `difference` (B − A) in the metric's unit"
        )

    @property
    def relative_ci(self) -> tuple[float, float]:
        """The interval of B − A relative to |A|, its lower end cut at −1 (−100 %) where
        `relative_ci_cut`; NaN without A (A is 0) or without an interval."""
        scale = abs(self.center_a) if self.center_a else math.nan
        low, high = self.ci_low / scale, self.ci_high / scale
        return (-1.0, max(high, -1.0)) if self.relative_ci_cut else (low, high)

    @property
    def within_tolerance(self) -> bool:
        return bool(-self.band <= self.ci_low and self.ci_high <= self.band)

    def to_dict(self) -> dict[str, Any]:
        return jsonable(
            self.key
            | {
                "better": "higher" if HIGHER_IS_BETTER[self.key["metric"]] else "lower",
                "test": self.test,
                "n_a": self.n_a,
                "n_b": self.n_b,
                "center": "median" if self.test == "mann-whitney" else "mean",
                "a": self.center_a,
                "b": self.center_b,
                "difference": self.difference,
                "ci": [self.ci_low, self.ci_high],
                "relative_change": self.relative_change,
                "relative_ci": list(self.relative_ci),
                "relative_ci_cut": self.relative_ci_cut,
                "relative_note": self.relative_note,
                "ci_cut": self.ci_cut,
                "p_value": self.p_value,
                "p_holm": self.p_holm,
                "band": self.band,
                "within_tolerance": self.within_tolerance,
                "verdict": self.verdict,
            }
        )


UNIT = KEY[:-1]  # what a measurement is of: a row without its metric


@dataclass(frozen=True)
class Missing:
    """A row that one campaign has and the other has not, and why (`explain_missing`)."""

    key: dict[str, str]
    side: str  # "A" | "B": the campaign that has the row
    reason: str  # "failed in B", "not in B's plan", "not run in B", "no value in B" (A for a B row)
    failure: str | None = None  # the failed measurement's stored reason (its latest attempt's)

    @property
    def regression(self) -> bool:
        """Ok in the baseline (A), failed in the candidate (B): as much a regression as a worse row."""
        return self.side == "A" and self.reason == "failed in B"

    def to_dict(self) -> dict[str, Any]:
        return self.key | {"in": self.side, "reason": self.reason, "failure": self.failure,
                           "regression": self.regression}  # fmt: skip


@dataclass(frozen=True)
class Units:
    """What a campaign planned and stored, per UNIT (a row without its metric)."""

    planned: frozenset[tuple[str, ...]] | None  # None: its spec gives no plan
    stored: frozenset[tuple[str, ...]]
    failed: dict[tuple[str, ...], str]  # stored, and no attempt of it ok: its failure
    omit_ns: int = 0  # its spec's analysis.omit: samples before it are not read
    # stored with some runs ok and some failed (latest attempts): (failed, all) runs
    partly_failed: dict[tuple[str, ...], tuple[int, int]] = field(default_factory=dict)
    runs: dict[tuple[str, ...], int] = field(default_factory=dict)  # stored runs (latest attempts)

    def failed_share(self, unit: tuple[str, ...]) -> tuple[int, int]:
        """(failed, all) runs of a unit with some ok: (0, n) when all n were ok."""
        return self.partly_failed.get(unit, (0, self.runs.get(unit, 0)))


@dataclass(frozen=True)
class Comparison:
    a: str
    b: str
    tolerance: float
    confidence: float
    rows: tuple[Row, ...]
    only_in_a: tuple[dict[str, str], ...] = ()
    only_in_b: tuple[dict[str, str], ...] = ()
    notes: tuple[str, ...] = field(default=())
    missing: tuple[Missing, ...] = ()  # only_in_a and only_in_b with why (explain_missing)
    # compared units with a larger share of failed runs in B than in A: regressions too
    more_failed_runs: tuple[dict[str, Any], ...] = ()

    @property
    def worse(self) -> list[Row]:
        return [r for r in self.rows if r.verdict == "worse"]

    @property
    def regressions(self) -> list[Missing]:
        """Rows ok in A that failed in B."""
        return [m for m in self.missing if m.regression]

    def to_dict(self) -> dict[str, Any]:
        return jsonable(
            {
                "a": self.a,
                "b": self.b,
                "tolerance": self.tolerance,
                "confidence": self.confidence,
                "floors": FLOOR,
                "counts": counts(self),
                "rows": [r.to_dict() for r in self.rows],
                "only_in_a": list(self.only_in_a),
                "only_in_b": list(self.only_in_b),
                "missing": [m.to_dict() for m in self.missing],
                "regressions": len(self.regressions),
                "more_failed_runs": list(self.more_failed_runs),
                "notes": list(self.notes),
            }
        )


def observations(frames: cd.CampaignFrames, factors: Sequence[str], omit_ns: int = 0) -> pd.DataFrame:
    """One row per observed value: KEY columns and `value` (see the module's table)."""
    flows, _ = cd.flow_table(frames.measurements, frames.samples, frames.builds, factors, omit_ns)
    columns = [*KEY, "value"]
    if flows.empty:
        return pd.DataFrame(columns=columns)
    flows = flows.assign(
        pair=flows["src"].astype(str) + "→" + flows["dst"].astype(str),
        treatment=[treatment_label(f) for f in flows["factors"]],
    )
    if omit_ns > 0 and "jitter_mean_ns" in flows:
        flows = _jitter_after_omit(flows, frames.samples, omit_ns)
    parts = []
    per_flow = (("throughput_bps", ("tcp", "udp")), ("loss_ratio", ("udp",)), ("jitter_mean_ns", ("udp",)))
    for metric, kinds in per_flow:
        if metric not in flows:
            continue
        sel = flows[flows["kind"].isin(kinds) & flows[metric].notna()]
        parts.append(sel.assign(metric=metric, value=sel[metric].astype(float))[columns])
    rtt_flows = flows[flows["kind"] == "rtt"]
    if not rtt_flows.empty:  # each run's median reply after omit (read from the store in bounded memory)
        replies = cd.as_source(frames.samples).values([int(i) for i in rtt_flows["id"]], "rtt_ns", omit_ns)
        medians = replies.dropna(subset=["value"]).groupby("measurement_id", as_index=False)["value"].median()
        joined = medians.merge(rtt_flows, left_on="measurement_id", right_on="id")
        parts.append(joined.assign(metric="rtt_ns", value=joined["value"].astype(float))[columns])
    # every part empty (a ping-only campaign whose replies all came before analysis.omit): pandas
    # raised "No objects to concatenate" and compare printed a traceback
    kept = [p for p in parts if not p.empty]
    out = pd.concat(kept, ignore_index=True) if kept else pd.DataFrame()
    return out if not out.empty else pd.DataFrame(columns=columns)


def _jitter_after_omit(
    flows: pd.DataFrame, samples: pd.DataFrame | cd.SampleSource, omit_ns: int
) -> pd.DataFrame:
    """UDP flows' jitter_mean_ns after `omit`: the mean of their jitter_ns samples at t ≥ omit.
    flow_table recomputes throughput and loss but not jitter, so the stored whole-run mean, its
    warm-up interval included, was compared (a campaign with `analysis.omit: 1s`: 1.01 ms where its
    samples after 1 s give 0.325 ms). A flow with no jitter sample after omit keeps its stored value,
    as throughput and loss do."""
    udp = flows["kind"] == "udp"
    if not udp.any():
        return flows
    stats = cd.as_source(samples).stats([int(i) for i in flows.loc[udp, "id"]], ["jitter_ns"], omit_ns)
    kept = stats[stats["count"] > 0]
    after = dict(zip(kept["measurement_id"].astype(int), kept["mean"].astype(float), strict=True))
    jitter = [
        after.get(int(i), j) if is_udp else j
        for i, j, is_udp in zip(flows["id"], flows["jitter_mean_ns"], udp, strict=True)
    ]
    return flows.assign(jitter_mean_ns=jitter)


def campaign_observations(store: Any, row: dict[str, Any]) -> pd.DataFrame:
    """`observations` of a stored campaign (its factors and `analysis.omit` from its spec)."""
    spec = spec_of(row)
    frames = cd.load_campaign_frames(store, row["id"])
    return observations(frames, [f.name for f in spec.factors], int(spec.analysis.omit))


def campaign_units(store: Any, row: dict[str, Any]) -> Units:
    """What a stored campaign planned (its spec's plan) and stored, failed or ok, per UNIT."""
    from vnetbench.plan import make_plan  # the planner: only to explain rows one side lacks
    from vnetbench.spec.errors import SpecInvalid
    from vnetbench.spec.loader import parse_spec

    omit_ns = 0
    try:
        parsed = parse_spec(row["spec_text"], row["spec_source"], stored=True)
        omit_ns = int(parsed.campaign.analysis.omit)
        plan = make_plan(parsed, row["id"], row["seed"])
        planned: frozenset[tuple[str, ...]] | None = frozenset(
            (s.pattern, s.measurement, s.kind, f"{f.src}→{f.dst}", treatment_label(dict(s.factors)))
            for s in plan.steps
            for f in s.flows
        )
    except SpecInvalid:
        planned = None
    frame = store.measurements_frame(row["id"])
    stored: set[tuple[str, ...]] = set()
    ok: set[tuple[str, ...]] = set()
    failed: dict[tuple[str, ...], str] = {}
    runs: dict[tuple[str, ...], list[int]] = {}  # unit -> [failed, all]
    for m in frame.itertuples() if not frame.empty else ():
        unit = (m.pattern, m.measurement, m.kind, f"{m.src}→{m.dst}", treatment_label(m.factors))
        stored.add(unit)
        count = runs.setdefault(unit, [0, 0])
        count[1] += 1
        if m.status == "ok":
            ok.add(unit)
        else:
            count[0] += 1
            failed.setdefault(unit, str(getattr(m, "reason", None) or m.status))
    partly = {u: (n[0], n[1]) for u, n in runs.items() if u in ok and n[0]}
    return Units(
        planned,
        frozenset(stored),
        {u: why for u, why in failed.items() if u not in ok},
        omit_ns,
        partly,
        {u: n[1] for u, n in runs.items()},
    )


def explain_missing(result: Comparison, units_a: Units, units_b: Units) -> Comparison:
    """The comparison with each row only one side has explained (`missing`): failed in the other
    campaign, not in its plan, not run (yet) in it, or stored there without a value of the metric
    (where its spec drops a warm-up, that no sample is after it: a 0.5 s ping run under a 1 s
    `analysis.omit` said only "no value in B")."""

    def why(key: dict[str, str], side: str, other: Units) -> Missing:
        unit, name = tuple(key[k] for k in UNIT), "B" if side == "A" else "A"
        if unit in other.failed:
            return Missing(key, side, f"failed in {name}", other.failed[unit])
        if other.planned is not None and unit not in other.planned:
            return Missing(key, side, f"not in {name}'s plan")
        if unit not in other.stored:
            return Missing(key, side, f"not run in {name}")
        if other.omit_ns > 0:  # ran, and every sample of it is before the warm-up it drops
            omit = f"{other.omit_ns / 1e9:g} s"
            return Missing(key, side, f"no value in {name} (no sample at or after its analysis.omit, {omit})")
        return Missing(key, side, f"no value in {name}")

    missing = [why(k, "A", units_b) for k in result.only_in_a] + [
        why(k, "B", units_a) for k in result.only_in_b
    ]
    more = _more_failed_runs(result, units_a, units_b)
    return replace(
        result,
        missing=tuple(missing),
        notes=(*result.notes, *_partly_failed(result, units_a, units_b, more)),
        more_failed_runs=tuple(more),
    )


def _more_failed_runs(result: Comparison, units_a: Units, units_b: Units) -> list[dict[str, Any]]:
    """Compared units a larger share of whose runs failed in B than in A: as a unit failed in B and ok
    in A is a regression, so is one that failed in 1 of 3 runs of B and none of A's (it was a note
    only, and exit 0). Each: the unit's key fields and both sides' (failed, runs)."""
    compared = sorted({tuple(r.key[k] for k in UNIT) for r in result.rows})
    more = []
    for unit in compared:
        (bad_a, runs_a), (bad_b, runs_b) = units_a.failed_share(unit), units_b.failed_share(unit)
        if runs_b and bad_b / runs_b > (bad_a / runs_a if runs_a else 0.0):
            more.append(dict(zip(UNIT, unit, strict=True)) | {
                "failed_a": bad_a, "runs_a": runs_a, "failed_b": bad_b, "runs_b": runs_b})  # fmt: skip
    return more


def _partly_failed(
    result: Comparison, units_a: Units, units_b: Units, more: list[dict[str, Any]]
) -> list[str]:
    """A note per compared unit some of whose runs failed in A or B: its rows compare the ok runs
    only, which neither the table nor the verdict said (a B with 2 of 3 runs ok read like 3). Where
    B failed a larger share than A (`more`), the note says it is a regression."""
    compared = {tuple(r.key[k] for k in UNIT) for r in result.rows}
    regressed = {tuple(m[k] for k in UNIT): m for m in more}
    notes = []
    for side, units in (("A", units_a), ("B", units_b)):
        for unit, (bad, runs) in sorted(units.partly_failed.items()):
            if unit in compared:
                _, measurement, _, pair, treatment = unit
                what = f"{pair} · {measurement}" + (f" · {treatment}" if treatment != "—" else "")
                worse = regressed.get(unit) if side == "B" else None
                than = f" ({worse['failed_a']} of {worse['runs_a']} in A: a regression)" if worse else ""
                notes.append(
                    f"{bad} of {runs} runs of {what} failed in {side}{than}: its rows compare the "
                    f"{runs - bad} ok one{'' if runs - bad == 1 else 's'}"
                )
    return notes


def treatment_label(levels: Any) -> str:
    """A treatment's factor levels as one label, `—` without factors."""
    if not isinstance(levels, dict) or not levels:
        return "—"
    return ", ".join(f"{k}={levels[k]}" for k in sorted(levels))


def compare(
    a: pd.DataFrame,
    b: pd.DataFrame,
    tolerance: float = 0.05,
    confidence: float = 0.95,
    labels: tuple[str, str] = ("A", "B"),
) -> Comparison:
    """Every KEY present in both observation tables, compared (B − A)."""
    check_confidence(confidence)
    if not 0 <= tolerance < 1:
        raise DataError("--tolerance", f"{tolerance} is not a share", "give e.g. 5% or 0.05")
    groups_a = dict(iter(a.groupby(KEY, sort=True))) if not a.empty else {}
    groups_b = dict(iter(b.groupby(KEY, sort=True))) if not b.empty else {}
    rows = []
    for key in sorted(set(groups_a) & set(groups_b)):
        metric = key[-1]
        x, y = groups_a[key]["value"].to_numpy(float), groups_b[key]["value"].to_numpy(float)
        row = _hodges_lehmann(x, y, confidence) if metric in LATENCY_LIKE else _welch(x, y, confidence)
        rows.append((dict(zip(KEY, key, strict=True)), row))
    p = np.array([r[1].p_value for r in rows], dtype=float)
    holm = np.full(p.size, np.nan)
    ok = np.isfinite(p)
    if ok.any():
        holm[ok] = multipletests(p[ok], method="holm")[1]
    alpha = 1 - confidence
    out = []
    for (key, row), p_holm in zip(rows, holm, strict=True):
        metric = key["metric"]
        band = max(tolerance * abs(row.center_a), FLOOR.get(metric, 0.0))
        significant = (
            bool(p_holm < alpha) if np.isfinite(p_holm) else row.test == "exact" and row.difference != 0
        )
        verdict = "same"
        if significant and abs(row.difference) > band:
            up = row.difference > 0
            verdict = "better" if up == HIGHER_IS_BETTER[metric] else "worse"
        out.append(_with(row, key, p_holm, band, verdict))
    return Comparison(
        labels[0],
        labels[1],
        tolerance,
        confidence,
        tuple(out),
        tuple(dict(zip(KEY, k, strict=True)) for k in sorted(set(groups_a) - set(groups_b))),
        tuple(dict(zip(KEY, k, strict=True)) for k in sorted(set(groups_b) - set(groups_a))),
        _power_notes(out, alpha),
    )


def smallest_rank_p(m: int, n: int) -> float:
    """The smallest two-sided p an exact Mann–Whitney test can give with m and n values: every value
    of one side below every value of the other, 2 / C(m + n, m)."""
    return min(1.0, 2 / math.comb(m + n, m))


def _power_notes(rows: Sequence[Row], alpha: float) -> tuple[str, ...]:
    """A note when latency rows (one median per run) have too few runs to ever be significant, and
    one when a change beyond the tolerance was not significant: "same" there means "not shown to
    differ" (a real 50 % drop between two campaigns of 3 runs with a stalled sender in one run is
    "same" after Holm's correction), not "shown equal"."""
    notes = []
    weak = [r for r in rows if r.test == "mann-whitney" and smallest_rank_p(r.n_a, r.n_b) >= alpha]
    if weak:
        runs = sorted({(r.n_a, r.n_b) for r in weak})
        sizes = ", ".join(f"{m} v {n}" for m, n in runs)
        verb = "compares" if len(weak) == 1 else "compare"
        notes.append(
            f"{_rows(len(weak), 'RTT row')} {verb} {sizes} run medians: too few runs for any RTT change "
            f"to be significant at {alpha:g} (smallest possible p {smallest_rank_p(*runs[0]):.2g}) "
            f"or for a {100 * (1 - alpha):g} % interval of the shift; "
            "give the campaigns more repetitions to test RTT."
        )
    unshown = [r for r in rows if r.verdict == "same" and abs(r.difference) > r.band]
    if unshown:
        largest = max(
            unshown, key=lambda r: abs(r.relative_change) if math.isfinite(r.relative_change) else 0
        )
        change = (
            f"{signed(100 * largest.relative_change, '.1f')} %"  # '−37.5 %': the report's minus sign
            if math.isfinite(largest.relative_change)
            else "a change from 0"  # A is 0: no relative change (Row.relative_note)
        )
        notes.append(
            f"{_rows(len(unshown), 'row')} changed by more than the tolerance but not significantly after "
            f"Holm's correction over {_rows(len(rows), 'row')} (largest: {change} in "
            f"{metric_name(largest.key['metric'])} of {largest.key['pair']}, "
            f"{largest.n_a} v {largest.n_b} runs): "
            'their "same" means not shown to differ, not shown equal; '
            "more repetitions (or fewer rows) would tell."
        )
    return tuple(notes)


def _rows(n: int, noun: str) -> str:
    """'1 row', '6 rows'."""
    return f"{n} {noun}{'' if n == 1 else 's'}"


def _with(row: Row, key: dict[str, str], p_holm: float, band: float, verdict: str) -> Row:
    return Row(
        key, row.test, row.n_a, row.n_b, row.center_a, row.center_b, row.difference, row.ci_low,
        row.ci_high, row.p_value, float(p_holm), band, verdict,
    )  # fmt: skip


def _welch(x: np.ndarray, y: np.ndarray, confidence: float) -> Row:
    """Difference of means with Welch's interval (Welch–Satterthwaite DF), on values centred on A's
    first one so gigabit means keep their digits."""
    anchor = x[0]
    xc, yc = x - anchor, y - anchor
    d = float(yc.mean() - xc.mean())
    ma, mb = anchor + float(xc.mean()), anchor + float(yc.mean())
    if x.size < 2 or y.size < 2:
        return Row({}, "too few", x.size, y.size, ma, mb, d, math.nan, math.nan, math.nan)
    va, vb = xc.var(ddof=1) / x.size, yc.var(ddof=1) / y.size
    if va + vb == 0:
        return Row({}, "exact", x.size, y.size, ma, mb, d, d, d, math.nan)
    se = math.sqrt(va + vb)
    dof = (va + vb) ** 2 / (va**2 / (x.size - 1) + vb**2 / (y.size - 1))
    t = float(stats.t.ppf((1 + confidence) / 2, dof))
    p = float(2 * stats.t.sf(abs(d) / se, dof))
    return Row({}, "welch", x.size, y.size, ma, mb, d, d - t * se, d + t * se, p)


def _hodges_lehmann(x: np.ndarray, y: np.ndarray, confidence: float) -> Row:
    """Shift of B against A: the median of all differences y_j − x_i, its interval from the order
    statistics of those differences, (D_(C), D_(mn+1−C)), and the Mann–Whitney U test (Hollander &
    Wolfe §4.3). C is the largest c with P(U ≤ c − 1) ≤ α/2 under U's exact null distribution up to
    EXACT_U_MAX runs a side (the normal approximation beyond): with 3 v 3 runs no c reaches 95 %
    (P(U ≤ 0) = 1/20 > 0.025), so the interval is undefined (NaN) rather than the range of the
    differences, whose confidence is only 1 − 2/20 = 90 %."""
    med_a, med_b = float(np.median(x)), float(np.median(y))
    if x.size < 2 or y.size < 2:
        return Row({}, "too few", x.size, y.size, med_a, med_b, med_b - med_a, math.nan, math.nan, math.nan)
    p = float(mann_whitney(y, x).pvalue)
    xs, ys = _thin(x), _thin(y)
    diffs = np.sort((ys[None, :] - xs[:, None]).ravel())
    c = _critical_c(xs.size, ys.size, confidence)
    shift = float(np.median(diffs))
    if not np.isfinite(p):  # every value equal on both sides
        p = 1.0
    if c < 1:  # too few runs for an interval at this confidence
        return Row({}, "mann-whitney", x.size, y.size, med_a, med_b, shift, math.nan, math.nan, p)
    low, high = float(diffs[c - 1]), float(diffs[diffs.size - c])
    return Row({}, "mann-whitney", x.size, y.size, med_a, med_b, shift, low, high, p)


def _critical_c(m: int, n: int, confidence: float) -> int:
    """C of the Hodges–Lehmann interval: the largest c with P(U ≤ c − 1) ≤ α/2, 0 when even
    P(U = 0) = 1/C(m + n, m) exceeds α/2."""
    alpha = 1 - confidence
    if max(m, n) > EXACT_U_MAX:
        # C = mn/2 − z·√(mn(m+n+1)/12), to the nearest integer
        z = float(stats.norm.ppf(1 - alpha / 2))
        c = round(m * n / 2 - z * math.sqrt(m * n * (m + n + 1) / 12))
        return min(max(c, 0), (m * n + 1) // 2)
    cdf = np.cumsum(u_null_counts(m, n)) / math.comb(m + n, m)
    return int(np.count_nonzero(cdf <= alpha / 2 * (1 + 1e-12)))


def u_null_counts(m: int, n: int) -> np.ndarray:
    """How many of the C(m + n, m) equally likely arrangements (no ties) give U = 0, 1, …, mn:
    N(i, j, u) = N(i − 1, j, u − j) + N(i, j − 1, u) (Mann & Whitney 1947)."""
    counts = [[np.ones(1)] * (n + 1)] + [[np.ones(1)] + [np.empty(0)] * n for _ in range(m)]
    for i in range(1, m + 1):
        for j in range(1, n + 1):
            cell = np.zeros(i * j + 1)
            cell[j:] += counts[i - 1][j]  # the largest value is from the first sample: it beats all j
            cell[: (i * (j - 1)) + 1] += counts[i][j - 1]
            counts[i][j] = cell
    return counts[m][n]


def _thin(v: np.ndarray) -> np.ndarray:
    """At most √MAX_PAIRS values (a fixed-seed sample), so the pairwise differences fit in memory."""
    most = int(math.sqrt(MAX_PAIRS))
    if v.size <= most:
        return v
    return np.random.default_rng(SEED).choice(v, size=most, replace=False)


def counts(result: Comparison) -> dict[str, int]:
    """How many rows are same, better and worse."""
    return {v: sum(r.verdict == v for r in result.rows) for v in ("same", "better", "worse")}
