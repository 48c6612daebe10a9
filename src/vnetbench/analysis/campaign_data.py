"""A stored campaign as analysis tables: one row per flow, one row per group of simultaneous flows.

Pure functions over the store's frames (no store access here, see `load_campaign_frames`) and over
a campaign's samples, which may be millions: those are reached through a `SampleSource`, either
`StoredSamples` (the store aggregates in SQL and hands out one metric's values in lean chunks:
bounded memory) or `FrameSamples` (the same answers computed from a long-format DataFrame in memory,
for callers that have one, and the reference the bounded-memory path is tested against):

- `flow_table`: every ok measurement with its factor levels as columns, the build's ordinal, and its
  responses recomputed after transient removal (the first `omit_ns` of every flow are dropped from
  its time series before the mean is taken);
- `group_table`: one row per step (the flows started together in one replication of one treatment)
  with the group's responses: mean throughput per flow, total throughput, Jain's fairness index,
  mean loss ratio, mean UDP effective throughput, mean RTT.

A *series* is what one model is fitted to: a pattern and a measurement (for star, fan-in and parallel
patterns every flow count belongs to the same series) plus, for pairs and mesh patterns, the
connection, and for a `pps` sweep its point (payload size and offered rate).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np
import pandas as pd

from vnetbench.analysis.fairness import jain_index
from vnetbench.analysis.transient import drop_transient
from vnetbench.analysis.udp import effective_throughput_bps

SAMPLE_METRICS = ("throughput_bps", "lost_packets", "packets", "rtt_ns")
GROUPED = ("star", "fan-in", "parallel")  # patterns whose flow count may be a factor: one series for all
# The responses a model is fitted to, per measurement kind (in this order).
RESPONSES = {
    "tcp": ("throughput_bps", "jain_index"),
    "udp": ("loss_ratio", "effective_throughput_bps"),
    "rtt": ("rtt_mean_ns",),
}
FLOW_RESPONSES = {
    "tcp": ("throughput_bps",),
    "udp": ("loss_ratio", "throughput_bps"),
    "rtt": ("rtt_mean_ns",),
}


# columns of the flow and group tables that a factor column must not take over
RESERVED = frozenset(
    [
        "id",
        "campaign_id",
        "key",
        "attempt",
        "step_key",
        "seq",
        "build_id",
        "repetition",
        "factors",
        "pattern",
        "pattern_kind",
        "group_kind",
        "group_size",
        "measurement",
        "kind",
        "src",
        "dst",
        "src_host",
        "dst_host",
        "placement",
        "link_rate_bps",
        "path_mtu",
        "expected_max_bps",
        "offered_bps",
        "status",
        "reason",
        "tool",
        "tool_version",
        "command",
        "started_utc_ns",
        "duration_ns",
        "start_skew_ns",
        "start_offset_ns",
        "build",
        "series",
        "n_flows",
        "throughput_bps",
        "total_throughput_bps",
        "jain_index",
        "loss_ratio",
        "effective_throughput_bps",
        "rtt_mean_ns",
        "unreachable_events",
        "replications",
        "mean",
        "sd",
        "min",
        "max",
        "ci_low",
        "ci_high",
    ]
)


class SampleSource(Protocol):
    """What the analysis and the report read of a campaign's samples (sum rows only: stream NaN)."""

    def stats(self, measurement_ids: Sequence[int], metrics: Sequence[str], omit_ns: int) -> pd.DataFrame:
        """Per (measurement_id, metric): count, sum and mean of the values at t ≥ omit_ns, and
        before_omit, the samples before it (store.samples.STATS_COLUMNS)."""
        ...

    def values(self, measurement_ids: Sequence[int], metric: str, since_ns: int) -> pd.DataFrame:
        """One metric's samples at t ≥ since_ns: measurement_id, t_ns, metric, value, stream."""
        ...


class FrameSamples:
    """A SampleSource over a long-format samples DataFrame held in memory."""

    def __init__(self, samples: pd.DataFrame) -> None:
        self.samples = samples

    def _sum_rows(self, measurement_ids: Sequence[int], metrics: Sequence[str]) -> pd.DataFrame:
        s = self.samples
        if s.empty:
            return pd.DataFrame(columns=["measurement_id", "t_ns", "metric", "value", "stream"])
        mine = s[s["measurement_id"].isin(list(measurement_ids)) & s["metric"].isin(list(metrics))]
        return mine[mine["stream"].isna()] if "stream" in mine else mine.assign(stream=np.nan)

    def stats(self, measurement_ids: Sequence[int], metrics: Sequence[str], omit_ns: int) -> pd.DataFrame:
        mine = self._sum_rows(measurement_ids, metrics)
        filtered = drop_transient(mine, int(omit_ns)) if not mine.empty else None
        if filtered is None:
            return pd.DataFrame(columns=["measurement_id", "metric", "count", "sum", "mean", "before_omit"])
        keys = ["measurement_id", "metric"]
        kept = filtered.kept.groupby(keys)["value"].agg(["count", "sum", "mean"])
        before = filtered.excluded.groupby(keys).size().rename("before_omit")
        out = kept.join(before, how="outer").reset_index()
        out["count"] = out["count"].fillna(0).astype("int64")
        out["before_omit"] = out["before_omit"].fillna(0).astype("int64")
        return out

    def values(self, measurement_ids: Sequence[int], metric: str, since_ns: int) -> pd.DataFrame:
        mine = self._sum_rows(measurement_ids, [metric])
        return mine[mine["t_ns"] >= since_ns] if not mine.empty else mine


class StoredSamples:
    """A SampleSource over one campaign in a `Store`: SQL aggregates, values fetched in chunks."""

    def __init__(self, store: Any, campaign_id: str) -> None:
        self.store = store
        self.campaign_id = campaign_id

    def stats(self, measurement_ids: Sequence[int], metrics: Sequence[str], omit_ns: int) -> pd.DataFrame:
        return self.store.sample_aggregates(self.campaign_id, list(metrics), omit_ns, list(measurement_ids))

    def values(self, measurement_ids: Sequence[int], metric: str, since_ns: int) -> pd.DataFrame:
        return self.store.sample_values(self.campaign_id, metric, measurement_ids, since_ns)


def as_source(samples: pd.DataFrame | SampleSource) -> SampleSource:
    """A DataFrame of samples becomes a FrameSamples; a source stays what it is."""
    return FrameSamples(samples) if isinstance(samples, pd.DataFrame) else samples


@dataclass(frozen=True)
class CampaignFrames:
    campaign: dict[str, Any]
    measurements: pd.DataFrame
    samples: pd.DataFrame | SampleSource  # a DataFrame in tests; StoredSamples from a store
    events: pd.DataFrame
    builds: pd.DataFrame


def load_campaign_frames(store: Any, campaign_id: str) -> CampaignFrames:
    """Everything the analysis reads, from a `Store`; the samples stay in it (StoredSamples)."""
    return CampaignFrames(
        campaign=store.campaign(campaign_id),
        measurements=store.measurements_frame(campaign_id),
        samples=StoredSamples(store, campaign_id),
        events=store.events_frame(campaign_id),
        builds=store.builds_frame(campaign_id),
    )


def factor_columns(factors: Sequence[str]) -> dict[str, str]:
    """Factor name → its column in the flow and group tables: the name itself, unless a column of
    ours already has it (a factor called `src` or `kind` becomes `src_factor`)."""
    return {f: f"{f}_factor" if f in RESERVED else f for f in factors}


def series_label(row: pd.Series | dict[str, Any]) -> str:
    """The series a flow belongs to: pattern · measurement, with the connection unless grouped, and its
    sweep point."""
    if row["pattern_kind"] in GROUPED or row["group_kind"] == "parallel":
        label = f"{row['pattern']} · {row['measurement']}"
    else:
        label = f"{row['pattern']} · {row['measurement']} · {row['src']}→{row['dst']}"
    return label + _sweep_point(row)


def _sweep_point(row: pd.Series | dict[str, Any]) -> str:
    """A `pps` sweep's points are separate series: a fairness index or a model never mixes two rates."""
    if row.get("kind") != "pps":
        return ""
    size, pps = row.get("payload_bytes"), row.get("target_pps")
    if size is None or pps is None or not (np.isfinite(size) and np.isfinite(pps)):
        return ""
    return f" · {int(size)} B at {int(pps)} pps"


def flow_table(
    measurements: pd.DataFrame,
    samples: pd.DataFrame | SampleSource,
    builds: pd.DataFrame,
    factors: Sequence[str],
    omit_ns: int = 0,
) -> tuple[pd.DataFrame, dict[str, Any]]:
    """Ok flows with factor columns, `build` (ordinal), `series` and transient-free responses.

    Returns the table and a record of the transient removal (samples dropped, flows recomputed)."""
    ok = measurements[measurements["status"] == "ok"].copy() if not measurements.empty else measurements
    record: dict[str, Any] = {"omit_ns": int(omit_ns), "samples_dropped": 0, "flows_recomputed": 0}
    if ok.empty:
        return ok, record
    for f, col in factor_columns(factors).items():
        ok[col] = [levels.get(f) if isinstance(levels, dict) else None for levels in ok["factors"]]
    ordinal = dict(zip(builds["id"], builds["ordinal"], strict=True)) if not builds.empty else {}
    ok["build"] = ok["build_id"].map(ordinal)
    ok["series"] = [series_label(r) for r in ok.to_dict("records")]
    for col in ("throughput_bps", "loss_ratio", "rtt_mean_ns", "offered_bps", "unreachable_events"):
        if col not in ok:
            ok[col] = np.nan
    if omit_ns > 0:
        _recompute_after_omit(ok, as_source(samples), int(omit_ns), record)
    udp = ok["kind"] == "udp"
    ok["effective_throughput_bps"] = np.nan
    valid = udp & ok["loss_ratio"].between(0, 1) & ok["offered_bps"].notna()
    if valid.any():
        ok.loc[valid, "effective_throughput_bps"] = effective_throughput_bps(
            ok.loc[valid, "offered_bps"].astype(float), ok.loc[valid, "loss_ratio"].astype(float)
        )
    return ok.reset_index(drop=True), record


def _recompute_after_omit(
    ok: pd.DataFrame, samples: SampleSource, omit_ns: int, record: dict[str, Any]
) -> None:
    """Responses from the samples at t ≥ omit: mean interval throughput, Σlost/(Σlost+Σreceived), mean
    RTT. Only the sum rows (stream NaN) of multi-stream tools are used."""
    stats = samples.stats([int(i) for i in ok["id"]], SAMPLE_METRICS, omit_ns)
    record["samples_dropped"] = int(stats["before_omit"].sum())
    wide = stats.set_index(["measurement_id", "metric"])
    recomputed = set()

    def metric(mid: int, name: str, how: str) -> float | None:
        key = (mid, name)
        return float(wide.loc[key, how]) if key in wide.index and wide.loc[key, "count"] > 0 else None

    for idx, row in ok.iterrows():
        mid = int(row["id"])
        if row["kind"] in ("tcp", "udp"):
            tput = metric(mid, "throughput_bps", "mean")
            if tput is not None:
                ok.at[idx, "throughput_bps"] = tput
                recomputed.add(mid)
        if row["kind"] == "udp":
            lost, got = metric(mid, "lost_packets", "sum"), metric(mid, "packets", "sum")
            if lost is not None and got is not None and lost + got > 0:
                ok.at[idx, "loss_ratio"] = lost / (lost + got)
        if row["kind"] == "rtt":
            rtt = metric(mid, "rtt_ns", "mean")
            if rtt is not None:
                ok.at[idx, "rtt_mean_ns"] = rtt
                recomputed.add(mid)
    record["flows_recomputed"] = len(recomputed)


def group_table(flows: pd.DataFrame, factors: Sequence[str]) -> pd.DataFrame:
    """One row per group of flows started together (alone-steps of star/fan-in patterns excluded: they
    are the baseline of the competition verdict, not a treatment)."""
    if flows.empty:
        return pd.DataFrame()
    rows = []
    used = flows[flows["group_kind"] != "alone"]
    for step_key, g in used.groupby("step_key", sort=False):
        first = g.iloc[0]
        tput = g["throughput_bps"].dropna().to_numpy(dtype=float)
        row: dict[str, Any] = {
            "step_key": step_key,
            "series": first["series"],
            "pattern": first["pattern"],
            "measurement": first["measurement"],
            "kind": first["kind"],
            "repetition": int(first["repetition"]),
            "build": first["build"],
            "started_utc_ns": g["started_utc_ns"].min(),
            "n_flows": len(g),
            "throughput_bps": float(tput.mean()) if tput.size else np.nan,
            "total_throughput_bps": float(tput.sum()) if tput.size else np.nan,
            "jain_index": jain_index(tput) if tput.size and (tput >= 0).all() and tput.sum() > 0 else np.nan,
            "loss_ratio": _mean(g["loss_ratio"]),
            "effective_throughput_bps": _mean(g["effective_throughput_bps"]),
            "rtt_mean_ns": _mean(g["rtt_mean_ns"]),
        }
        row |= {col: first[col] for col in factor_columns(factors).values()}
        rows.append(row)
    return pd.DataFrame(rows)


def _mean(values: pd.Series) -> float:
    v = values.dropna()
    return float(v.mean()) if len(v) else np.nan
