"""CPU during measurements: host CPU and the tool's own CPU per measurement, loss against CPU, and
the tool-CPU table in the form of the ExoGENI study's Tables 18–19 (sender and receiver, TCP and UDP,
per rate).

The tool's CPU is sampled from /proc/PID/stat (user + system time over the time the process was
seen alive); iperf3's own end-of-test report (cpu_utilization_percent) is shown beside it.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats

from vnetbench.store.db import Store

# ExoGENI Tables 18–19: iperf CPU load in %, (sender, receiver), by rate and protocol.
EXOGENI_TOOL_CPU = {
    10_000_000: {"udp": (4.0, 1.5), "tcp": (0.1, 0.0)},
    100_000_000: {"udp": (17.0, 6.0), "tcp": (0.3, 0.1)},
}


# A host whose CPU was at least this busy over a measurement had no cycle to spare: the machine, not
# the emulated network, may have set the result. (Not the only machine limit: a receive backlog can
# overflow below it; loss localization names that cause.)
HOST_SATURATED = 0.95
SATURATED_BUSY = f"≥ {HOST_SATURATED * 100:.0f} %"  # as the report writes it


def _ratio(num: float | None, den: float | None) -> float | None:
    if num is None or not den:
        return None
    return num / den


def _proc_ratio(scope: dict[str, float] | None) -> float | None:
    if not scope:
        return None
    return _ratio(scope.get("user_ns", 0.0) + scope.get("system_ns", 0.0), scope.get("wall_ns"))


def cpu_frame(store: Store, campaign_id: str, frame: pd.DataFrame | None = None) -> pd.DataFrame:
    """One row per measurement with telemetry: host CPU ratios, tool CPU ratios, loss, rate."""
    frame = store.measurements_frame(campaign_id) if frame is None else frame
    runs = store.telemetry_runs_frame(campaign_id)
    if frame.empty or runs.empty:
        return pd.DataFrame()
    ok = frame[(frame["status"] == "ok") & frame["id"].isin(runs["measurement_id"])]
    totals = store.telemetry_totals([int(i) for i in ok["id"]])
    receiver_host = {int(r["measurement_id"]): (r["path"] or {}).get("dst_ns") for _, r in runs.iterrows()}
    rows: list[dict[str, Any]] = []
    for _, m in ok.iterrows():
        tot = totals.get(int(m["id"]), {})
        # local: the one machine's CPU; remote hosts (SSH): the receiver's host (cpu@HOST)
        cpu = tot.get("cpu") or tot.get(f"cpu@{receiver_host.get(int(m['id']))}", {})
        all_ns = sum(cpu.values()) if cpu else 0.0
        busy = all_ns - cpu.get("idle_ns", 0.0) - cpu.get("iowait_ns", 0.0)
        command = m.get("command") or {}
        reverse = isinstance(command, dict) and "-R" in (command.get("client") or [])
        client, server = _proc_ratio(tot.get("proc:client")), _proc_ratio(tot.get("proc:server"))
        # the link's rate, else the offered rate (a column and a summary metric: merged as _x / _y)
        rates = (m.get(c) for c in ("link_rate_bps", "offered_bps", "offered_bps_x", "offered_bps_y"))
        rate = next((r for r in rates if r is not None and not pd.isna(r)), None)
        rows.append(
            {
                "measurement_id": int(m["id"]),
                "kind": m["kind"],
                "src": m["src"],
                "dst": m["dst"],
                "rate_bps": None if rate is None else float(rate),
                "loss_ratio": _num(m.get("loss_ratio")),
                "host_busy_ratio": _ratio(busy, all_ns),
                "host_softirq_ratio": _ratio(cpu.get("softirq_ns"), all_ns),
                "host_steal_ratio": _ratio(cpu.get("steal_ns"), all_ns),
                "sender_cpu_ratio": server if reverse else client,
                "receiver_cpu_ratio": client if reverse else server,
                "tool_sender_cpu_ratio": _num(m.get("sender_cpu_ratio")),
                "tool_receiver_cpu_ratio": _num(m.get("receiver_cpu_ratio")),
            }
        )
    return pd.DataFrame(rows)


def with_host_busy(rows: pd.DataFrame, cpu: pd.DataFrame) -> pd.DataFrame:
    """`rows` (measurements) with the host's busy share during each (`host_busy_ratio`, NaN when
    no telemetry was read)."""
    out = rows.copy()
    busy = cpu.set_index("measurement_id")["host_busy_ratio"] if not cpu.empty else pd.Series(dtype=float)
    out["host_busy_ratio"] = out["id"].map(busy).astype(float) if "id" in out else np.nan
    return out


def saturated(busy: pd.Series) -> pd.Series:
    """Which measurements ran on a saturated host (a missing reading is not saturation)."""
    return busy.astype(float).fillna(0.0) >= HOST_SATURATED


def _num(v: Any) -> float | None:
    try:
        f = float(v)
    except (TypeError, ValueError):
        return None
    return None if math.isnan(f) else f


# A coefficient of loss against CPU needs this many measurements that lost anything: with one, r only
# says where that one point lies (exogeni-exp1: 1 datagram lost in 66,136 gave r = 0.4 and 0.7).
MIN_LOSSY = 3


def correlation(df: pd.DataFrame, x: str = "host_busy_ratio", y: str = "loss_ratio") -> dict[str, Any]:
    """Pearson's r (and p) of loss against CPU over the UDP / packet-rate measurements; `n_lossy`:
    how many of the `n` lost anything, `skipped`: why there is no r (None when there is one)."""
    d = df[df["kind"].isin(["udp", "pps"])][[x, y]].dropna() if not df.empty else pd.DataFrame()
    n_lossy = int((d[y] != 0).sum()) if len(d) else 0
    out: dict[str, Any] = {"x": x, "y": y, "n": len(d), "n_lossy": n_lossy, "r": None, "p": None}
    if out["n_lossy"] < MIN_LOSSY:
        out["skipped"] = (
            f"{out['n_lossy']} of {out['n']} measurements lost anything; "
            f"a coefficient needs at least {MIN_LOSSY} with loss"
        )
    elif d[x].nunique() < 2 or d[y].nunique() < 2:
        which = "CPU" if d[x].nunique() < 2 else "loss"
        out["skipped"] = f"{which} was the same in all {out['n']} measurements"
    else:
        r, p = stats.pearsonr(d[x], d[y])
        out["r"], out["p"], out["skipped"] = float(r), float(p), None
    return out


def tool_cpu_table(df: pd.DataFrame) -> list[dict[str, Any]]:
    """ExoGENI Tables 18–19: per rate and protocol, the median sender and receiver CPU (%)."""
    if df.empty:
        return []
    d = df[df["kind"].isin(["tcp", "udp"])]
    out = []
    for (rate, kind), g in d.groupby([d["rate_bps"].fillna(0), "kind"], sort=True):
        ref = EXOGENI_TOOL_CPU.get(int(rate), {}).get(str(kind))

        def med(col: str, g: pd.DataFrame = g) -> float | None:
            v = g[col].dropna()
            return float(v.median() * 100) if len(v) else None

        out.append(
            {
                "rate_bps": float(rate) or None,
                "kind": str(kind),
                "n": len(g),
                "sender_cpu_percent": med("sender_cpu_ratio"),
                "receiver_cpu_percent": med("receiver_cpu_ratio"),
                "tool_sender_cpu_percent": med("tool_sender_cpu_ratio"),
                "tool_receiver_cpu_percent": med("tool_receiver_cpu_ratio"),
                "exogeni_sender_cpu_percent": ref[0] if ref else None,
                "exogeni_receiver_cpu_percent": ref[1] if ref else None,
            }
        )
    return out
