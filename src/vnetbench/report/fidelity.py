"""What the report says about how a campaign's numbers were made: link shaping, path priming, and
how TCP goodput is computed (issue #13). Pure functions of the stored build layout and spec."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import pandas as pd

from vnetbench.analysis.cpu import SATURATED_BUSY, saturated
from vnetbench.analysis.loss import NOISE_PACKETS, QDISC_DROP
from vnetbench.report import format as fmt

SHAPING_MEANING = {
    "network": "the link's queue drops what exceeds the rate; the sender never blocks on it",
    "sender": "the sending interface's own qdisc pushes back on the sender's socket (a physical NIC)",
}


def shaping_items(layout: dict[str, Any] | None) -> list[str]:
    """One sentence per shaping mode used, naming its links (older stores have no 'links': none)."""
    by_mode: dict[str, list[str]] = {}
    for link in (layout or {}).get("links") or []:
        if link.get("shaping"):
            by_mode.setdefault(link["shaping"], []).append(str(link["link"]))
    return [
        f"Link shaping {mode} ({SHAPING_MEANING.get(mode, mode)}): {', '.join(links)}."
        for mode, links in sorted(by_mode.items())
    ]


def sender_shaped_nodes(layout: dict[str, Any] | None) -> set[str]:
    """Nodes with an interface shaped the sender's way: their own qdisc pushes back on their socket,
    so a flow they send above the link's rate goes out at that rate, by design (`shaping: sender`)."""
    namespaces = (layout or {}).get("namespaces") or {}  # namespace -> "node:NAME" (or "host:NAME")
    owners = (
        str(namespaces.get(i.get("ns"), ""))
        for i in (layout or {}).get("interfaces") or []
        if (i.get("shaper") or {}).get("placement") == "sender"
    )
    return {owner.removeprefix("node:") for owner in owners if owner.startswith("node:")}


def method_items(
    spec: dict[str, Any],
    environment: Mapping[str, Any] | None = None,
    provider: str = "",
    frame: pd.DataFrame | None = None,
) -> list[str]:
    """How samples were taken: priming, what a TCP throughput is (with the windows' length, from the
    measurements in `frame`), and which congestion control TCP used where the spec left it to the
    system."""
    schedule = spec.get("schedule") or {}
    kinds = {m.get("kind") for m in spec.get("measurements") or [] if isinstance(m, dict)}
    items = []
    if schedule.get("prime", True):
        items.append(
            "Paths primed: before each step one unmeasured ping per flow resolved the neighbour entries, "
            "so no sample includes path set-up (ARP)."
        )
    else:
        items.append("Paths not primed (schedule.prime: false): first samples may include path set-up (ARP).")
    if "tcp" in kinds:
        items.append(
            "TCP throughput: the receiver's bytes inside the measured window (its full-length intervals, "
            "without the queue's drain at the end and, after a warm-up omit, without the first interval)"
            f"{_tcp_windows(frame)}; iperf3's own figure is kept as iperf3_throughput_bps."
        )
    unset = _tcp_without_congestion(spec)
    if unset:
        default = (environment or {}).get("tcp_congestion_control") if provider == "local" else None
        which = (
            f"this machine's default, {default} (net.ipv4.tcp_congestion_control when the campaign started)"
            if default
            else "the hosts' default (not recorded)"
        )
        items.append(
            f"TCP congestion control: not set (measurement{'s' if len(unset) > 1 else ''} "
            f"{', '.join(unset)}), so TCP used {which}; "
            "results with another algorithm (e.g. cubic, Linux's usual default) can differ, "
            "in how flows share a link most: set `congestion:` to choose."
        )
    return items


def _tcp_windows(frame: pd.DataFrame | None) -> str:
    """' — here 4.00 s of each run (14 TCP measurements)': how long the windows were, so that 'the
    first interval' is not read as the omitted one (quickstart: omit 1 s, duration 5 s, a window of
    4 s, from 2 s to 6 s of the run)."""
    if frame is None or frame.empty or "window_ns" not in frame:
        return ""
    ok = frame[(frame["status"] == "ok") & (frame["kind"] == "tcp")]
    windows = ok["window_ns"].dropna().astype(float) / 1e9
    if windows.empty:
        return ""
    low, high = f"{windows.min():.2f}", f"{windows.max():.2f}"
    shown = low if low == high else f"{low} to {high}"
    return f" — here {shown} s of each run ({fmt.counted(len(windows), 'TCP measurement')})"


def _tcp_without_congestion(spec: dict[str, Any]) -> list[str]:
    """The TCP measurements whose congestion control neither the measurement nor a factor sets."""
    paths = (str(f.get("path", "")) for f in spec.get("factors") or [] if isinstance(f, dict))
    by_factor = {
        p.split(".")[1] for p in paths if p.startswith("measurements.") and p.endswith(".congestion")
    }  # each factor's path read once
    return [
        str(m.get("name"))
        for m in spec.get("measurements") or []
        if isinstance(m, dict)
        and m.get("kind") == "tcp"
        and not m.get("congestion")
        and m.get("name") not in by_factor
    ]


# Causes of loss that are this machine's, not the emulated network's: a receiving tool that did not
# run in time, a CPU's backlog, a userspace switch that could not read its port.
MACHINE_CAUSES = ("socket buffer full", "backlog full", "not read by userspace OVS")


def _within_rate(frame: pd.DataFrame) -> set[int]:
    """Ids of the constant-rate flows offered at or below their path's rate (the overhead model's
    most goodput)."""
    if not {"id", "offered_bps", "expected_max_bps"} <= set(frame.columns):
        return set()
    ok = frame[(frame["status"] == "ok") & frame["kind"].isin(["udp", "pps"])]
    within = ok["offered_bps"] <= ok["expected_max_bps"] * (1 + 1e-9)  # NaN compares False
    if "path_pps_limit" in ok:  # a packet-rate cap on the path (the model's bits do not see it)
        capped = ok["path_pps_limit"].notna()
        target = ok["target_pps"] if "target_pps" in ok else pd.Series(float("nan"), index=ok.index)
        within &= ~capped | (target <= ok["path_pps_limit"])  # unknown packet rate: not within
    return {int(i) for i in ok.loc[within, "id"]}


def _steps_within_rate(frame: pd.DataFrame) -> dict[str, float]:
    """Steps of two or more constant-rate flows that together offered at or below the rate of every
    link on their paths — their summed offered rate within the smallest of their paths' model
    maxima, so within any link they share — mapped to that sum (bit/s). A packet-rate cap on a path
    leaves its step out: the model's bits do not see it."""
    needed = {"id", "step_key", "offered_bps", "expected_max_bps"}
    if not needed <= set(frame.columns):
        return {}
    ok = frame[(frame["status"] == "ok") & frame["kind"].isin(["udp", "pps"])]
    out = {}
    for step, flows in ok.groupby("step_key", sort=False):
        if len(flows) < 2 or flows[["offered_bps", "expected_max_bps"]].isna().any(axis=None):
            continue
        if "path_pps_limit" in flows and flows["path_pps_limit"].notna().any():
            continue
        total = float(flows["offered_bps"].sum())
        if total <= float(flows["expected_max_bps"].min()) * (1 + 1e-9):
            out[str(step)] = total
    return out


def _flows_by_step(frame: pd.DataFrame) -> tuple[dict[str, float], dict[Any, str]]:
    """_steps_within_rate, and the step of every measurement id (empty when there is no such step)."""
    steps = _steps_within_rate(frame)
    return steps, (dict(zip(frame["id"], frame["step_key"], strict=True)) if steps else {})


def _shared_shaper_drops(loc: Any) -> dict[tuple[Any, Any], float]:
    """The drop counters of the shapers a flow shared with its step's other flows, by counter: each
    counts every flow's datagrams, so a step's flows all carry the same ones."""
    return {
        (e.scope, e.metric, getattr(e, "counter", None)): float(e.packets)
        for stage in getattr(loc, "stages", None) or []
        if stage.shared
        for e in stage.explainers
        if e.cause == QDISC_DROP
    }


def _shared_stall_item(frame: pd.DataFrame | None, localizations: list[Any]) -> list[str]:
    """Steps whose flows together stayed within the rate of a shaper they shared, and lost datagrams
    at it anyway: the shaper stalled, as for one flow at its own shaper (machine_items)."""
    if frame is None or frame.empty:
        return []
    steps, step_of = _flows_by_step(frame)
    counters: dict[str, dict[tuple[Any, Any], float]] = {}
    sent: dict[str, float] = {}
    for loc in localizations:
        step = step_of.get(getattr(loc, "measurement_id", None))
        if step not in steps:
            continue
        counters.setdefault(step, {}).update(_shared_shaper_drops(loc))
        sent[step] = sent.get(step, 0.0) + float(getattr(loc, "sent", 0.0))
    stalled = {step: sum(c.values()) for step, c in counters.items() if sum(c.values()) > NOISE_PACKETS}
    if not stalled:
        return []
    worst = max(stalled, key=lambda step: stalled[step] / sent[step] if sent.get(step) else 0.0)
    rows = frame[frame["step_key"] == worst]
    factors = rows["factors"].iloc[0] if "factors" in rows else None
    where = ", ".join(f"{k}={v}" for k, v in factors.items()) if isinstance(factors, dict) else ""
    if "repetition" in rows:
        where += (", " if where else "") + f"repetition {int(rows['repetition'].iloc[0])}"
    most = f"; at most {fmt.share(stalled[worst], sent[worst])} of a step's datagrams" if sent[worst] else ""
    most += f", {where}" if where and most else ""
    return [
        f"Machine as bottleneck: in {len(stalled)} of {len(steps)} steps whose flows together offered at "
        "or below their paths' rate, a link's shaper they shared dropped datagrams "
        f"({fmt.count(sum(stalled.values()))} datagrams{most}). A network's queue holds such flows; here the "
        "shaper's output stalled (it, or the senders before it, did not get a CPU in time), so that loss "
        "is this machine's, not the link's."
    ]


def machine_loss_ids(frame: pd.DataFrame | None, localizations: list[Any]) -> set[int]:
    """Ids of the measurements whose loss, as the localizer's verdict places it, the lines of
    machine_items call this machine's: a machine cause (a socket buffer full...), a drop at the
    flow's own shaper while offered within its rate, or at a shaper its step's flows shared while
    together within its rate."""
    if frame is None or frame.empty:
        return set()
    steady = _within_rate(frame)
    steps, step_of = _flows_by_step(frame)
    out = set()
    for loc in localizations:
        mid = getattr(loc, "measurement_id", None)
        cause = str(getattr(loc, "cause", "") or "")
        if mid is not None and (
            any(c in cause for c in MACHINE_CAUSES)
            or (cause == QDISC_DROP and mid in steady)
            or (cause.startswith(QDISC_DROP + " at ") and step_of.get(mid) in steps)
        ):
            out.add(int(mid))
    return out


def capacity_caveat(
    factor: str, frame: pd.DataFrame | None, losses: list[Any], machine: set[int] | None = None
) -> str:
    """The factor's levels where the machine_items lines call some of the loss this machine's (a
    socket buffer full, a shaper that stalled while the flows offered within its rate), with the
    datagrams lost there (each flow's loss at its verdict's hop): a capacity recommendation counts
    that loss as the network's. '' when there is none. `machine`: machine_loss_ids, if known."""
    machine = machine_loss_ids(frame, losses) if machine is None else machine
    if frame is None or frame.empty or not machine or not {"id", "factors"} <= set(frame.columns):
        return ""
    level_of = {
        int(i): f[factor]
        for i, f in zip(frame["id"], frame["factors"], strict=True)
        if isinstance(f, dict) and factor in f
    }
    lost: dict[Any, float] = {}
    for loc in losses:
        mid = getattr(loc, "measurement_id", None)
        if mid is not None and int(mid) in machine and int(mid) in level_of:
            level = level_of[int(mid)]
            lost[level] = lost.get(level, 0.0) + float(getattr(loc, "hop_lost", 0.0))
    if not lost:
        return ""
    shown = ", ".join(f"{level} ({fmt.count(lost[level])})" for level in sorted(lost, key=fmt.sort_key))
    return (
        f"this machine, not the emulated network, lost datagrams at {factor} = {shown} (see Machine as "
        "bottleneck); the recommendation counts them as the network's"
    )


def _which(frame: pd.DataFrame | None, loc: Any) -> str:
    """' (src→dst, repetition N)': which flow a line's worst case was, for the reader to find it."""
    src, dst = getattr(loc, "src", None), getattr(loc, "dst", None)
    if not src or not dst:
        return ""
    rep = ""
    if frame is not None and {"id", "repetition"} <= set(frame.columns):
        found = frame.loc[frame["id"] == getattr(loc, "measurement_id", None), "repetition"]
        rep = f", repetition {int(found.iloc[0])}" if len(found) else ""
    return f" ({src}→{dst}{rep})"


def _own_shaper_drops(loc: Any) -> float:
    """Datagrams a flow lost at shapers no other flow of its step crossed: the verdict's hop when the
    localizer named one (a shared shaper's cause names the sharing), plus the shaper counters of its
    other unshared points — a flow whose largest loss was elsewhere (its socket) can have lost some at
    its own shaper too, and one whose verdict is a shaper can have lost more at a second one (a stalled
    sender's tbf and the switch port's behind it: 490 + 196 of 12,398, where only the 490 were told)."""
    at_shaper = str(getattr(loc, "cause", "") or "") == QDISC_DROP
    hop = getattr(loc, "hop_key", None) if at_shaper else None
    if at_shaper and hop is None:  # no stage named as the hop: it alone is known
        return float(getattr(loc, "hop_lost", 0.0))
    others = sum(
        e.packets
        for stage in getattr(loc, "stages", None) or []
        if not stage.shared and (hop is None or getattr(stage, "key", None) != hop)
        for e in stage.explainers
        if e.cause == QDISC_DROP
    )
    return float(others) + (float(getattr(loc, "hop_lost", 0.0)) if at_shaper else 0.0)


def machine_items(
    frame: pd.DataFrame | None,
    localizations: list[Any],
    steal: Mapping[int, float] | None = None,
    pushed_back: set[str] | frozenset[str] = frozenset(),
) -> list[str]:
    """Where this machine, not the emulated network, limited a measurement (issue #13). `steal`:
    measurement id -> the share of the CPUs the hypervisor took during it (analysis.cpu's
    host_steal_ratio), where telemetry read it. `pushed_back`: nodes whose own link is shaped the
    sender's way (`sender_shaped_nodes`): one of them sending at its path's rate is its link's doing."""
    items = []
    if frame is not None and not frame.empty and "offered_bps" in frame:
        ok = frame[frame["status"] == "ok"]
        # iperf3's sender_throughput_bps, vnb-probe's achieved_bps: whichever the row has
        columns = [ok[c] for c in ("sender_throughput_bps", "achieved_bps") if c in ok]
        sent = columns[0].fillna(columns[1]) if len(columns) == 2 else (columns[0] if columns else None)
        if sent is not None:
            udp = ok[ok["kind"].isin(["udp", "pps", "trace"]) & ok["offered_bps"].notna()]
            short = udp[(sent[udp.index] < 0.95 * udp["offered_bps"])]
            if len(short) and pushed_back and "expected_max_bps" in short:
                at_link_rate = short["src"].isin(pushed_back) & (
                    sent[short.index] >= 0.95 * short["expected_max_bps"]
                )  # NaN model: not excused
                short = short[~at_link_rate]
            if len(short):
                items.append(
                    f"Machine as bottleneck: in {len(short)} of {len(udp)} constant-rate measurements the "
                    "sender sent less than 95 % of the offered rate (it did not get the CPU in time; a "
                    "sender held to its path's rate by its own link's sender shaping is not counted); "
                    "their loss is measured against what was sent."
                )
    by_cause: dict[str, list[tuple[float, float]]] = {}  # (lost at the verdict's hop, lost in all)
    steal = steal or {}
    steady = _within_rate(frame) if frame is not None else set()
    stalled: list[tuple[float, float, Any]] = []  # (datagrams the shaper dropped, of how many sent, loc)
    stolen: list[float] = []  # steal ratio during each of them, where known
    for loc in localizations:
        cause = str(getattr(loc, "cause", "") or "")
        if any(c in cause for c in MACHINE_CAUSES):
            lost_all = float(getattr(loc, "app_lost", 0.0))
            by_cause.setdefault(cause, []).append((float(getattr(loc, "hop_lost", lost_all)), lost_all))
        if getattr(loc, "measurement_id", None) in steady:
            dropped = _own_shaper_drops(loc)
            if dropped > NOISE_PACKETS:  # fewer: within what the counters cannot separate
                stalled.append((dropped, float(getattr(loc, "sent", 0.0)), loc))
                ratio = steal.get(int(loc.measurement_id))
                if ratio is not None and not math.isnan(ratio):
                    stolen.append(float(ratio))
    if stalled:
        # A network's queue holds a steady flow at or below its rate: what it dropped of one is the
        # time the shaper here sent nothing (issue #13: 60 ms in one second under hypervisor steal).
        dropped, sent, worst = max(stalled, key=lambda x: x[0] / x[1] if x[1] else 0.0)
        most = f", at most {fmt.share(dropped, sent)} of one flow's{_which(frame, worst)}" if sent else ""
        why = "On a virtual machine, hypervisor steal time is a usual cause."
        if stolen:
            low, high = fmt.share(min(stolen), 1), fmt.share(max(stolen), 1)
            shown = low if low == high else f"{low.removesuffix(' %')}–{high}"
            why = f"Hypervisor steal time during them: {shown} of the CPUs."
        items.append(
            f"Machine as bottleneck: {len(stalled)} of {len(steady)} constant-rate flows offered at or below "
            "their path's rate lost datagrams at a link's shaper that no other flow crossed "
            f"({fmt.count(sum(d for d, _, _ in stalled))} datagrams{most}). A network's queue holds such a "
            "flow; here the shaper's output stalled (it, or the sender before it, did not get a CPU in "
            f"time), so that loss is this machine's, not the link's. {why}"
        )
    items += _shared_stall_item(frame, localizations)
    for cause, lost in sorted(by_cause.items()):
        # the datagrams lost to that cause, not all they lost: the rest (a shaper's drops) can be
        # another line's
        there, total = sum(h for h, _ in lost), sum(a for _, a in lost)
        of = f" of the {fmt.count(total)} they lost" if fmt.count(total) != fmt.count(there) else ""
        items.append(
            f"Machine as bottleneck: {fmt.counted(len(lost), 'measurement')} lost datagrams mostly to "
            f"'{cause}' ({fmt.count(there)} datagrams{of}): this machine, not the emulated network "
            "(see Where the packets went)."
        )
    return items


def saturated_cpu(frame: pd.DataFrame | None, busy: Mapping[int, float]) -> tuple[int, int, str] | None:
    """(ok measurements during which the host's CPU was saturated, ok measurements with a CPU
    reading, 'repetition 2: 13 of 13' for each repetition with any), from analysis.cpu's
    host_busy_ratio per measurement id (`busy`); None when none was. The busy share is the whole
    machine's (every process, not only the campaign's tools): in quickstart d1453f96 other work kept
    both cores busy through 11 of the 13 measurements of repetition 2, and only the star's together
    step said so, while the tables averaged those flows (a TCP 92.95 Mbit/s beside 95.61 in
    repetition 1)."""
    if frame is None or frame.empty or not busy:
        return None
    ok = frame[frame["status"] == "ok"]
    ratios = ok["id"].map(lambda i: busy.get(int(i), math.nan)).astype(float)
    read = ok[ratios.notna()]
    hot = saturated(ratios[ratios.notna()])
    if read.empty or not hot.any():
        return None
    per_rep = [
        f"repetition {int(rep)}: {int(h.sum())} of {len(h)}"
        for rep, h in hot.groupby(read["repetition"])
        if h.any()
    ]
    return int(hot.sum()), len(read), "; ".join(per_rep)


def saturated_cpu_items(frame: pd.DataFrame | None, busy: Mapping[int, float]) -> list[str]:
    """The Machine as bottleneck line for measurements on a saturated host (saturated_cpu)."""
    found = saturated_cpu(frame, busy)
    if found is None:
        return []
    hot, read, per_rep = found
    return [
        f"Machine as bottleneck: the host's CPU was {SATURATED_BUSY} busy (all its cores, counting every "
        f"process on this machine, not only the campaign's tools) during {hot} of "
        f"{fmt.counted(read, 'measurement')} with a CPU reading ({per_rep}). A value measured then can "
        "be this machine's, not the emulated network's: the per-repetition figures set it beside the "
        "other repetitions."
    ]


def rtt_loss_items(frame: pd.DataFrame | None, node_reports: list[dict[str, Any]]) -> list[str]:
    """Account for ping requests that got no reply: a drop counter, or the reason none can say."""
    if frame is None or frame.empty or "received_packets" not in frame:
        return []
    rtt = frame[(frame["kind"] == "rtt") & (frame["status"] == "ok")]
    lost = float((rtt["sent_packets"] - rtt["received_packets"]).clip(lower=0).sum()) if len(rtt) else 0.0
    if lost <= 0:
        return []
    dropped = 0
    tails = []
    for item in node_reports:
        for d in item.get("report", {}).get("directions", []):
            dropped += int(d.get("lost_frames") or 0) + sum(
                int(d.get(k) or 0)
                for k in ("queue_drop_frames", "limit_drop_frames", "oversize_drop_frames", "tx_error_frames")
            )
            dropped += int(d.get("kernel_rx_drop_frames") or 0)
            if d.get("delay_cdf") or d.get("jitter_ns"):
                tails.append(str(item.get("link")))
    text = f"{fmt.counted(lost, 'ping request')} got no reply. "
    if dropped:
        text += (
            f"The delay nodes dropped {fmt.count(dropped)} frames of all traffic in these builds "
            "(table below). "
        )
    else:
        text += "No delay node dropped a frame (their table below), so no drop counter explains them. "
    if tails:
        text += (
            f"Links {', '.join(sorted(set(tails)))} delay frames by a random amount with a tail: a reply "
            "drawn from the tail can arrive after ping stops waiting (max(2 × the largest RTT seen, the "
            "interval) after its last request), which ping reports as lost; a longer interval between "
            "requests than the largest round trip avoids it."
        )
    return [text.strip()]
