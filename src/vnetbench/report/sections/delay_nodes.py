"""Report section: what every delay node did, in its own words.

A link whose delay, jitter or loss is realised by a delay node (`vnb-probe delay`) gets that node's
report stored when its build is torn down (event `link_emulator`): frames in and out per
direction, the emulated loss, every other drop by cause, the frames still held at the end, the
release-time error (when a frame left − when it was due) and the node's CPU per frame. A reader can
then tell the configured impairment from the emulator's own shortcomings: drops it made that were
not asked for, or releases late because it lacked CPU.
"""

from __future__ import annotations

import json
from typing import Any

from vnetbench.providers.base import EMULATOR_EVENT
from vnetbench.report import format as fmt
from vnetbench.report.sections import ReportContext
from vnetbench.report.view import Section, TableView

ORDER = 56
# drops the node made beyond the configured (emulated) loss, by the report's field name
UNASKED_DROPS = {
    "queue_drop_frames": "rate queue full",
    "limit_drop_frames": "held-frame limit",
    "oversize_drop_frames": "oversize",
    "tx_error_frames": "send error",
    "kernel_rx_drop_frames": "receive ring/socket full",
}
LATE_P99_NS = 1_000_000  # a release p99 beyond this is worth a sentence


def reports(events: Any) -> list[dict[str, Any]]:
    """The stored delay-node reports, in the order their builds ended."""
    if events is None or events.empty:
        return []
    out = []
    for detail in events[events["kind"] == EMULATOR_EVENT]["detail"]:
        try:
            item = json.loads(detail)
        except (TypeError, ValueError):
            continue
        if isinstance(item, dict) and isinstance(item.get("report"), dict):
            out.append(item)
    return out


def _configured(d: dict[str, Any]) -> str:
    if d.get("delay_cdf"):
        text = "empirical CDF"
    else:
        text = f"{fmt.ms(d.get('delay_ns'))} ms"
        if d.get("jitter_ns"):
            text += f" ± {fmt.ms(d['jitter_ns'])} ({d.get('jitter_dist', 'uniform')})"
    if d.get("delay_hold_ns"):
        text += f", each draw held {fmt.ms(d['delay_hold_ns'])} ms"
    if d.get("loss_ratio"):
        text += f", loss {100 * d['loss_ratio']:g} %"
        if d.get("loss_model") not in (None, "random", "none"):
            text += f" ({d['loss_model']})"
    if d.get("rate_bps"):
        text += f", {d['rate_bps'] / 1e6:g} Mbit/s"
    return text


def unasked_drops(d: dict[str, Any]) -> dict[str, int]:
    """A delay node's drops that no configured loss asked for (full queue, oversized frame …), by cause."""
    return {label: int(d.get(key) or 0) for key, label in UNASKED_DROPS.items() if d.get(key)}


def unaccounted(d: dict[str, Any]) -> int:
    """Frames read but neither sent, dropped (any cause, emulated included) nor still held."""
    kept = (
        int(d.get("tx_frames") or 0)
        + int(d.get("lost_frames") or 0)
        + int(d.get("held_at_exit_frames") or 0)
        + sum(int(d.get(k) or 0) for k in UNASKED_DROPS if k != "kernel_rx_drop_frames")
    )
    return int(d.get("rx_frames") or 0) - kept


def _side(role: str) -> str:
    """ "node:vm0" -> "vm0", "host:pc1" -> "host pc1" (a node's own delay node faces its host)."""
    kind, _, name = role.partition(":")
    return name if kind == "node" else f"{kind} {name}" if name else role


def _direction(d: dict[str, Any], sides: dict[str, str] | None) -> str:
    """Which way the frames went, from what the node's interfaces face (its report's from/to)."""
    src, dst = str(d.get("from", "?")), str(d.get("to", "?"))
    if sides and src in sides and dst in sides:
        return f"{_side(sides[src])} → {_side(sides[dst])}"
    return f"{src} → {dst}"


def _passes_at_once(d: dict[str, Any]) -> bool:
    """A direction the node does not impair (on a link between hosts, the far end's node delays it)."""
    return not (
        d.get("delay_ns")
        or d.get("jitter_ns")
        or d.get("delay_cdf")
        or d.get("loss_ratio")
        or d.get("rate_bps")
    )


def build(ctx: ReportContext) -> list[Section]:
    items_in = reports(ctx.store.events_frame(ctx.campaign_id))
    if not items_in:
        return []
    rows, items = [], []
    for item in items_in:
        rep = item["report"]
        cpu = rep.get("cpu_per_frame_ns")
        sides = rep.get("sides") if isinstance(rep.get("sides"), dict) else None
        for d in rep.get("directions", []):
            if not d.get("rx_frames") and _passes_at_once(d):
                continue  # a direction that passes frames at once and saw none
            err = d.get("release_error") or {}
            drops = unasked_drops(d)
            configured = "passed at once (delayed by the node at the other end)" if _passes_at_once(d) else ""
            rows.append(
                [
                    str(item.get("build_id", "")),
                    str(item.get("link", "")),
                    _direction(d, sides),
                    configured or _configured(d),
                    f"{int(d.get('rx_frames') or 0):,}",
                    f"{int(d.get('tx_frames') or 0):,}",
                    f"{int(d.get('lost_frames') or 0):,}",
                    ", ".join(f"{n:,} {what}" for what, n in drops.items()) or "none",
                    " / ".join(fmt.ms(err.get(k)) for k in ("p50_ns", "p99_ns", "max_ns")),
                    fmt.MISSING if cpu is None else f"{cpu / 1e3:.2f}",
                ]
            )
            where = f"link {item.get('link')} ({_direction(d, sides)}, build {item.get('build_id')})"
            if drops:
                items.append(
                    f"{where}: the node dropped frames that were not asked for — "
                    + ", ".join(f"{n:,} ({what})" for what, n in drops.items())
                    + "; measurements on this link lost them on top of the configured loss."
                )
            missing = unaccounted(d)
            if missing > 0:
                items.append(f"{where}: {missing:,} frames read but not accounted for by any counter.")
            if (err.get("p99_ns") or 0) > LATE_P99_NS:
                items.append(
                    f"{where}: 1 % of frames left more than {fmt.ms(err['p99_ns'])} ms after their release "
                    "time (the node was short of CPU): those frames saw that much more delay than configured."
                )
    table = TableView(
        "Delay nodes: frames, drops and timing error as each node reported them",
        [
            "build",
            "link",
            "direction",
            "configured",
            "frames in",
            "frames out",
            "emulated loss",
            "other drops",
            "release error p50 / p99 / max, ms",
            "node CPU per frame, µs",
        ],
        rows,
        note="release error = when a frame left − when it was due; CPU per frame counts both directions.",
    )
    intro = (
        "These links had their delay, jitter or loss realised by a delay node (vnb-probe delay), a "
        "process between the two halves of the link, because the kernel lacks netem or the link asked "
        "for one. Each node's own account is stored when its build is torn down."
    )
    if not items:
        items.append(
            "No node dropped a frame it was not asked to drop, and 99 % of frames left within "
            f"{fmt.ms(LATE_P99_NS)} ms of their release time."
        )
    return [Section("Delay nodes", "delay-nodes", intro=intro, tables=[table], items=items)]
