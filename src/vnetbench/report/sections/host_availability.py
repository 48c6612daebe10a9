"""Host availability over a campaign run over SSH (cf. ExoGENI's Table 2: which sites could be used when).

The SSH provider stores every change of a host's state (up / down with the reason) as a
`host_state` event. This section turns them into: each host's share of the campaign it was
reachable, its down periods and the last reason; a host × repetition grid (up / down / partly);
and a timeline figure.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from vnetbench.palette import BLUE, VERMILLION
from vnetbench.report.figures import plt, save
from vnetbench.report.format import MISSING
from vnetbench.report.sections import ReportContext
from vnetbench.report.view import Figure, Section, TableView

ORDER = 85
EVENT_KIND = "host_state"


@dataclass
class HostTimeline:
    host: str
    changes: list[tuple[int, bool, str]] = field(default_factory=list)  # (t_ns, up, reason), in order

    def up_at(self, t_ns: int) -> bool | None:
        state = None
        for when, up, _ in self.changes:
            if when > t_ns:
                break
            state = up
        return state

    def intervals(self, end_ns: int) -> list[tuple[int, int, bool]]:
        """(start, end, up) from the first known state to end_ns."""
        out = []
        for i, (when, up, _) in enumerate(self.changes):
            nxt = self.changes[i + 1][0] if i + 1 < len(self.changes) else max(end_ns, when)
            out.append((when, nxt, up))
        return out

    def availability(self, end_ns: int) -> float | None:
        spans = self.intervals(end_ns)
        total = sum(b - a for a, b, _ in spans)
        if total <= 0:
            return None if not spans else float(spans[-1][2])
        return sum(b - a for a, b, up in spans if up) / total

    def state_between(self, start_ns: int, end_ns: int) -> str:
        """'up', 'down' or 'partly' over [start, end]; '' when nothing was known then."""
        states = {self.up_at(start_ns)} | {up for when, up, _ in self.changes if start_ns < when <= end_ns}
        states.discard(None)
        if not states:
            return ""
        return "partly" if len(states) > 1 else ("up" if states.pop() else "down")


def timelines(events: pd.DataFrame) -> dict[str, HostTimeline]:
    """Each remote host's up/down changes from the campaign's host-availability events."""
    out: dict[str, HostTimeline] = {}
    if events.empty:
        return out
    for detail in events[events["kind"] == EVENT_KIND]["detail"]:
        try:
            item = json.loads(detail)
        except (TypeError, ValueError):
            continue
        line = out.setdefault(str(item["host"]), HostTimeline(str(item["host"])))
        line.changes.append((int(item["t_ns"]), bool(item["up"]), str(item.get("reason", ""))))
    for line in out.values():
        line.changes.sort(key=lambda c: c[0])
    return out


def _end_ns(frame: pd.DataFrame, lines: dict[str, HostTimeline]) -> int:
    ends = [c[0] for line in lines.values() for c in line.changes]
    if not frame.empty and "started_utc_ns" in frame:
        done = frame["started_utc_ns"].fillna(0) + frame.get("duration_ns", 0).fillna(0)
        ends.append(int(done.max()))
    return max(ends)


def build(ctx: ReportContext) -> list[Section]:
    lines = timelines(ctx.store.events_frame(ctx.campaign_id))
    if not lines:
        return []
    frame = ctx.frame
    end = _end_ns(frame, lines)
    rows = []
    for name in sorted(lines):
        line = lines[name]
        share = line.availability(end)
        downs = [c for i, c in enumerate(line.changes) if not c[1] and (i == 0 or line.changes[i - 1][1])]
        last_down = next((c for c in reversed(line.changes) if not c[1]), None)
        failed = 0
        if not frame.empty and "reason" in frame:
            failed = int(
                frame["reason"].fillna("").str.contains(f"host {name} unreachable", regex=False).sum()
            )
        rows.append(
            [
                name,
                "?" if share is None else f"{100 * share:.1f} %",
                str(len(downs)),
                str(failed),
                last_down[2] if last_down else "",
            ]
        )
    tables = [
        TableView(
            "Availability of each host",
            [
                "host",
                "reachable (share of the run)",
                "times lost",
                "measurements failed by it",
                "last reason",
            ],
            rows,
            note="From the SSH provider's connection state: up from a successful connect, down from a "
            "refused connect or a dropped connection, until the next change.",
        )
    ]
    grid = _repetition_grid(frame, lines)
    if grid is not None:
        tables.append(grid)
    figures = [_timeline_figure(lines, end, ctx.fig_dir / "host_availability")]
    return [
        Section(
            "Host availability",
            "host-availability",
            intro="Which hosts could be used during the campaign, and when (as ExoGENI's Table 2 lists "
            "which sites could be used on which day).",
            tables=tables,
            figures=figures,
        )
    ]


def _repetition_grid(frame: pd.DataFrame, lines: dict[str, HostTimeline]) -> TableView | None:
    if frame.empty or "repetition" not in frame or "started_utc_ns" not in frame:
        return None
    started = frame.dropna(subset=["started_utc_ns"])
    if started.empty:
        return None
    ends = started["started_utc_ns"] + started["duration_ns"].fillna(0)
    spans = (
        pd.DataFrame({"rep": started["repetition"], "a": started["started_utc_ns"], "b": ends})
        .groupby("rep")
        .agg(a=("a", "min"), b=("b", "max"))
    )
    mark = {"up": "✓ up", "down": "✗ down", "partly": "◐ partly", "": MISSING}
    rows = [
        [name, *(mark[lines[name].state_between(int(s.a), int(s.b))] for s in spans.itertuples())]
        for name in sorted(lines)
    ]
    return TableView(
        "Hosts usable in each repetition",
        ["host", *(f"rep {int(r)}" for r in spans.index)],
        rows,
        note="partly: the host was lost or came back during that repetition.",
    )


def _timeline_figure(lines: dict[str, HostTimeline], end_ns: int, path: Path) -> Figure:
    start = min(c[0] for line in lines.values() for c in line.changes)
    names = sorted(lines)
    fig, ax = plt.subplots(figsize=(7, 0.6 + 0.35 * len(names)))
    for y, name in enumerate(names):
        for a, b, up in lines[name].intervals(end_ns):
            width = max((b - a) / 1e9, 0.05)
            ax.broken_barh([((a - start) / 1e9, width)], (y - 0.35, 0.7), color=BLUE if up else VERMILLION)
    ax.set_yticks(range(len(names)), [n.replace("$", r"\$") for n in names])  # no mathtext
    ax.set_xlabel("seconds since the first connection (blue: reachable, orange-red: down)")
    ax.invert_yaxis()
    return Figure("Host availability over time", save(fig, path), "one bar per inventory host")
