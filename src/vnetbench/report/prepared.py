"""What the built-in report sections (RTT, TCP, UDP, simultaneous flows) read.

The campaign's ok measurements, each labelled with its treatment (its factor levels), after the
spec's transient removal (`analysis.omit`) and outlier policy (`analysis.outliers`), and of the
campaign's samples only those the sections show one by one: the replies of RTT measurements and the
throughput intervals of flows measured together. The rest (millions, in a large campaign) stay in
the store, which aggregates them (`campaign_data.StoredSamples`). Both steps are
the analysis modules' own (`campaign_data.flow_table`, `transient.drop_transient`, `OutlierPolicy`),
the ones `vnetbench analyze` uses, so the report's tables and the analysis agree.

Outliers are judged among comparable values: one connection's repetitions under one treatment
(throughput of flows measured alone), one connection's replies under one treatment (RTT), one flow's
repetitions together under one treatment (simultaneous flows; a group with an outlier flow is
excluded whole, since its sum and Jain's index need every flow).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from vnetbench.analysis import campaign_data as cd
from vnetbench.analysis.campaign_analysis import settings_from_spec
from vnetbench.analysis.descriptive import ALONE, CONFIDENCE, describe
from vnetbench.analysis.outliers import MIN_GROUP, OutlierPolicy
from vnetbench.analysis.transient import NS
from vnetbench.layout.build import NETWORK_BURST_MS
from vnetbench.report import format as fmt
from vnetbench.spec.errors import SpecInvalid
from vnetbench.spec.loader import spec_of

TREATMENT = "treatment_label"  # the column holding a row's treatment ("" without factors)
CONNECTION = ("measurement", "src", "dst", "placement")


@dataclass
class Prepared:
    frame: pd.DataFrame  # ok measurements: responses after transient removal, outliers dropped
    # sum-row samples at t ≥ omit of RTT flows (rtt_ns) and of flows together (throughput_bps);
    # RTT replies judged outliers dropped
    samples: pd.DataFrame
    treatments: list[str]  # labels in the design's standard order; empty without factors
    notes: dict[str, list[str]] = field(default_factory=dict)  # per section (tcp, udp, rtt, together)
    confidence: float = CONFIDENCE  # the spec's analysis.confidence: of every connection's interval

    @property
    def factorial(self) -> bool:
        return bool(self.treatments)

    def split(self, frame: pd.DataFrame) -> Iterator[tuple[str | None, pd.DataFrame]]:
        """(treatment, its rows) in the design's order; (None, frame) without factors."""
        if not self.factorial or frame.empty:
            yield None, frame
            return
        for label in self.treatments:
            rows = frame[frame[TREATMENT] == label]
            if len(rows):
                yield label, rows

    def per_treatment(
        self, frame: pd.DataFrame, table: Callable[[pd.DataFrame], pd.DataFrame]
    ) -> pd.DataFrame:
        """`table` of each treatment's rows, stacked, with a `treatment` column (none without factors)."""
        parts = []
        for label, rows in self.split(frame):
            part = table(rows)
            if not part.empty:
                parts.append(part if label is None else part.assign(treatment=label))
        return pd.concat(parts, ignore_index=True) if parts else pd.DataFrame()

    def intro(self, section: str) -> str:
        """Sentences on what was removed before this section's statistics ('' when nothing applies)."""
        return " ".join(self.notes.get(section, []))


def treatment_label(levels: Any, names: list[str]) -> str:
    """A treatment's factor levels as 'name=level, …' in the factors' order ('' without factors)."""
    if not isinstance(levels, dict):
        return ""
    return ", ".join(f"{n}={levels.get(n)}" for n in names)


def prepare(
    campaign: dict[str, Any],
    frame: pd.DataFrame,
    samples: pd.DataFrame | cd.SampleSource,
    builds: pd.DataFrame,
) -> Prepared:
    """The ok measurements with their treatments, after the spec's transient removal and outlier policy."""
    names, levels, omit_ns, method, confidence = _settings(campaign)
    source = cd.as_source(samples)
    flows, _ = cd.flow_table(frame, source, builds, names, omit_ns)
    treatments = _treatment_order(levels, names)
    if not flows.empty:
        flows[TREATMENT] = [treatment_label(f, names) for f in flows["factors"]] if names else ""
        seen = [t for t in dict.fromkeys(flows[TREATMENT]) if t not in treatments]
        treatments += seen if names else []
    shown = _shown_samples(source, flows, omit_ns)
    prep = Prepared(flows, shown, treatments, {k: [] for k in ("tcp", "udp", "rtt", "together")}, confidence)
    if flows.empty:
        return prep
    if omit_ns > 0:
        _omit(prep, source, omit_ns)
    if method != "none":
        _outliers(prep, OutlierPolicy(method))
    for kind in ("tcp", "udp"):
        prep.notes[kind] += _above_model_note(
            prep.frame, kind, builds, omit_ns, intervals=not prep.factorial, confidence=confidence
        )
    return prep


def _above_model_note(
    frame: pd.DataFrame,
    kind: str,
    builds: pd.DataFrame,
    omit_ns: int,
    intervals: bool = True,
    confidence: float = CONFIDENCE,
) -> list[str]:
    """Why a connection's mean can exceed the overhead model's maximum (exogeni-exp5: 100.3 % over
    2 s): a token bucket passes at most rate × T + its burst in any window of T s (its arrival curve),
    the burst whenever the link was idle before the window, e.g. as the flow starts, or as a TCP
    sender backs off inside a run (BBR's ProbeRTT, cubic after a loss) — so after a warm-up omit too.
    The window is what the values are over: TCP's stored window (the receiver's full-length intervals,
    after the warm-up omit and its first interval; quickstart: 4.00 s of a 6.02 s run), else the run,
    less the analysis omit. And why the 95 % interval of a mean can
    reach above the model while the mean does not (quickstart efd6a61d: 9.560 Mbit/s (9.485 to
    9.634) at 100.0 %, the upper end 100.7 %): it is the mean's uncertainty, not a measured rate, and
    it is not cut at the model, which is no hard bound as 0 is (docs/statistics.md). `intervals`: the
    report shows the connections' intervals (the Findings and the placement tables of a campaign
    without factors); an upper end that rounds to 100.0 % needs no word. `confidence`: the intervals'
    level, the spec's analysis.confidence."""
    needed = {"kind", "group_kind", "throughput_bps", "expected_max_bps", "duration_ns"}
    if frame.empty or not needed <= set(frame.columns):
        return []
    rows = frame[(frame["kind"] == kind) & frame["group_kind"].isin(ALONE) & frame["expected_max_bps"].gt(0)]
    keys = [c for c in (*CONNECTION, TREATMENT) if c in rows.columns]
    if rows.empty or not keys:
        return []
    by_connection = rows.groupby(keys, dropna=False)
    model = by_connection["expected_max_bps"].first()
    ratio = by_connection["throughput_bps"].mean() / model
    upper = by_connection["throughput_bps"].apply(lambda s: describe(s, True, confidence)["ci_high"]) / model
    above = ratio[ratio > 1]
    reaching = upper[upper >= 1.0005] if intervals else upper.iloc[0:0]  # shown above 100.0 %
    if above.empty and reaching.empty:
        return []
    layout = builds.iloc[-1]["layout"] if not builds.empty else None
    links = (layout or {}).get("links") or []
    network = any(link.get("shaping") == "network" for link in links) or not links  # the default
    burst_ms = NETWORK_BURST_MS if network else 1
    window_s = _window_s(rows, omit_ns)
    bound = 1 + burst_ms / 1000 / window_s
    notes = (
        []
        if above.empty
        else [_mean_above(float(above.max()), len(above), burst_ms, network, window_s, bound)]
    )
    if not reaching.empty:
        notes.append(
            f"The {100 * confidence:g} % interval of a mean reaches above the model for "
            f"{fmt.counted(len(reaching), 'connection')} (up to {fmt.ratio_pct(float(reaching.max()))}): "
            "it is the mean's uncertainty from its repetitions' spread (few make it wide), not a "
            "measured rate, and is not cut at the model, which, unlike 0, is no hard bound."
        )
    return notes


def _window_s(rows: pd.DataFrame, omit_ns: int) -> float:
    """The shortest window the rows' values are over, in s: TCP's stored window_ns where every row has
    one (and no analysis omit recomputed the value from the intervals), else the run less the omit."""
    if omit_ns == 0 and "window_ns" in rows and rows["window_ns"].notna().all():
        seconds = rows["window_ns"].astype(float) / NS
    else:
        seconds = (rows["duration_ns"].astype(float) - omit_ns) / NS
    return max(float(seconds.min()), 1e-3)


def _mean_above(top: float, n: int, burst_ms: int, network: bool, window_s: float, bound: float) -> str:
    """The note on means above the model: what the bucket explains, and whether it explains them."""
    mode = "network" if network else "sender"
    return (
        f"'of model max' above 100 % ({fmt.counted(n, 'connection')}, at most {fmt.ratio_pct(top)}): a "
        f"shaper's token bucket passes up to its burst ({burst_ms} ms at the link's rate with {mode} "
        "shaping) beyond the rate in any window — all of it when the link was idle before, as a flow "
        "starts or after a sender backed off — so a measured window of "
        f"{fmt.sig(window_s)} s can carry up to {fmt.ratio_pct(bound)} of the model"
        + ("." if top <= bound + 1e-9 else "; this is more than the bucket explains.")
    )


def _shown_samples(source: cd.SampleSource, flows: pd.DataFrame, omit_ns: int) -> pd.DataFrame:
    """RTT flows' replies and together flows' throughput intervals at t ≥ omit (sum rows)."""
    if flows.empty:
        return pd.DataFrame(columns=["measurement_id", "t_ns", "metric", "value", "stream"])
    rtt = flows[flows["kind"] == "rtt"]["id"]
    together = flows[~flows["group_kind"].isin(ALONE) & flows["kind"].isin(["tcp", "udp"])]["id"]
    parts = [
        source.values([int(i) for i in ids], metric, omit_ns)
        for ids, metric in ((rtt, "rtt_ns"), (together, "throughput_bps"))
        if len(ids)
    ]
    parts = [p for p in parts if not p.empty]
    if not parts:
        return pd.DataFrame(columns=["measurement_id", "t_ns", "metric", "value", "stream"])
    return pd.concat(parts, ignore_index=True) if len(parts) > 1 else parts[0].reset_index(drop=True)


def _settings(campaign: dict[str, Any]) -> tuple[list[str], list[list[Any]], int, str, float]:
    """Factor names and levels, omit (ns), outlier method and confidence of the stored spec (none,
    95 % if unreadable)."""
    try:
        spec = spec_of(campaign)
    except (SpecInvalid, TypeError, AttributeError):  # a hand-made campaign row without a spec
        return [], [], 0, "none", CONFIDENCE
    s = settings_from_spec(spec)
    names, levels = [f.name for f in spec.factors], [list(f.levels) for f in spec.factors]
    return names, levels, s.omit_ns, s.outliers, s.confidence


def _treatment_order(levels: list[list[Any]], names: list[str]) -> list[str]:
    if not names:
        return []
    return [treatment_label(dict(zip(names, c, strict=True)), names) for c in itertools.product(*levels)]


def _omit(prep: Prepared, source: cd.SampleSource, omit_ns: int) -> None:
    """flow_table already recomputed each flow's responses from the samples at t ≥ omit, and only
    those are in prep.samples. Count what the transient removal left out, per section."""
    flows = prep.frame.set_index("id")
    gone = source.stats([int(i) for i in flows.index], ["throughput_bps", "rtt_ns"], omit_ns)
    kinds = gone["measurement_id"].map(flows["kind"])
    together = gone["measurement_id"].map(~flows["group_kind"].isin(ALONE)).fillna(False).astype(bool)
    seconds = f"{omit_ns / NS:g} s"
    tput, rtt = gone["metric"] == "throughput_bps", gone["metric"] == "rtt_ns"
    for section, mask, what in (
        ("tcp", tput & (kinds == "tcp") & ~together, "throughput intervals"),
        ("udp", tput & (kinds == "udp") & ~together, "throughput intervals"),
        ("rtt", rtt & (kinds == "rtt") & ~together, "replies"),
        ("together", tput & together, "throughput intervals"),
    ):
        n = int(gone.loc[mask.fillna(False).astype(bool), "before_omit"].sum())
        if n == 0:  # no such flows here (a section of flows alone when all ran together): nothing to say
            continue
        recomputed = "each value is recomputed from the rest" if section != "rtt" else "they are left out"
        prep.notes[section].append(
            f"Transient removal (analysis.omit): the first {seconds} of every flow is dropped, "
            f"{n} {what} in all; {recomputed}."
        )


def _outliers(prep: Prepared, policy: OutlierPolicy) -> None:
    flows = prep.frame
    alone = flows["group_kind"].isin(ALONE)
    drop: set[int] = set()
    for kind in ("tcp", "udp"):
        rows = flows[alone & (flows["kind"] == kind)].dropna(subset=["throughput_bps"])
        if rows.empty:
            continue
        judged = _judge(policy, rows, (*CONNECTION, TREATMENT), "throughput_bps")
        drop |= set(judged.excluded["id"].astype(int))
        prep.notes[kind].append(_say(judged, len(rows), "measurements", "connection and treatment"))
    together = flows[~alone & flows["kind"].isin(["tcp", "udp"])].dropna(subset=["throughput_bps"])
    if not together.empty:
        judged = _judge(policy, together, ("pattern", *CONNECTION, TREATMENT), "throughput_bps")
        steps = set(judged.excluded["step_key"])
        drop |= set(together[together["step_key"].isin(steps)]["id"].astype(int))
        note = _say(judged, len(together), "flows", "flow and treatment")
        prep.notes["together"].append(f"{note} {len(steps)} group(s) with such a flow are left out whole.")
    _rtt_outliers(prep, policy, alone)
    prep.frame = flows[~flows["id"].isin(drop)].reset_index(drop=True)


def _rtt_outliers(prep: Prepared, policy: OutlierPolicy, alone: pd.Series) -> None:
    flows = prep.frame
    rows = flows[alone & (flows["kind"] == "rtt")]
    samples = prep.samples
    if rows.empty or samples.empty:
        return
    keys = [*CONNECTION, TREATMENT]
    rtt = samples[(samples["metric"] == "rtt_ns") & samples["measurement_id"].isin(rows["id"])]
    replies = rtt.join(rows.set_index("id")[keys], on="measurement_id")  # keeps the samples' index
    if replies.empty:
        return
    judged = _judge(policy, replies, tuple(keys), "value")
    prep.samples = samples.drop(index=judged.excluded.index)
    prep.notes["rtt"].append(_say(judged, len(replies), "replies", "connection and treatment"))


def _judge(policy: OutlierPolicy, rows: pd.DataFrame, by: tuple[str, ...], value: str) -> Any:
    return OutlierPolicy(policy.method, policy.k, by=by, value=value).apply(rows)


def _say(judged: Any, total: int, what: str, among: str) -> str:
    rule = judged.policy.split(" per ")[0]
    small = sum("fewer than" in note for note in judged.notes)
    unjudged = f"; {small} such group(s) of fewer than {MIN_GROUP} values were not judged" if small else ""
    return (
        f"Outlier policy (analysis.outliers) {rule.removeprefix('outliers: ')}, judged per {among}: "
        f"{len(judged.excluded)} of {total} {what} excluded{unjudged}."
    )
