"""Report section: the packet captures taken during the measurements (telemetry.capture in the spec)."""

from __future__ import annotations

from vnetbench.report.format import MISSING
from vnetbench.report.sections import ReportContext
from vnetbench.report.view import Section, TableView

ORDER = 68
MAX_ROWS = 100


def build(ctx: ReportContext) -> list[Section]:
    caps = ctx.store.table_frame("captures", ctx.campaign_id)
    if caps.empty:
        return []
    names = ctx.frame.set_index("id")["measurement"].to_dict() if not ctx.frame.empty else {}
    rows = [
        [
            str(c["measurement_id"]),
            str(names.get(c["measurement_id"], "")),
            f"{c['node']}:{c['interface']}",
            str(c["file"]),
            MISSING if c["size_bytes"] is None else f"{int(c['size_bytes']):,}",
            f"{int(c['snaplen_bytes'])} B, ≤ {int(c['packet_cap']):,} packets",
        ]
        for c in caps.head(MAX_ROWS).to_dict("records")
    ]
    note = (
        ""
        if len(caps) <= MAX_ROWS
        else f"First {MAX_ROWS} of {len(caps)}; all in the store's captures table."
    )
    return [
        Section(
            "Packet captures",
            "captures",
            intro="tcpdump ran inside the node on these interfaces during the measurement; open the files "
            "with Wireshark or tcpdump -r.",
            tables=[
                TableView(
                    "Captures", ["id", "measurement", "interface", "file", "bytes", "limits"], rows, note
                )
            ],
        )
    ]
