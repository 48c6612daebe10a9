"""`vnetbench loss CAMPAIGN [--json]`: where the packets of every UDP, packet-rate, trace and background
flow went (analysis/loss.py), and which packet flows it cannot account for, and why."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Annotated, Any

import typer

from vnetbench.cli.common import (
    CAMPAIGN_HELP,
    DbOption,
    JsonOption,
    find_campaign,
    open_store,
    out,
    unfinished_note,
)
from vnetbench.cli.output import print_json, print_table


def loss_command(
    campaign: Annotated[str | None, typer.Argument(help=CAMPAIGN_HELP)] = None,
    db: DbOption = "vnetbench.db",
    json_output: JsonOption = False,
) -> None:
    """Where the packets went: the hop where each UDP or vnb-probe flow lost them, and the counter that
    says why; flows it cannot follow hop by hop are listed with the reason."""
    # the statistics stack: imported when the command runs, for start-up time
    from vnetbench.analysis.loss import loss_analysis
    from vnetbench.report.fidelity import machine_items, sender_shaped_nodes
    from vnetbench.report.sections.loss import not_accounted_table, summary_table

    store = open_store(db)
    row = find_campaign(store, campaign)
    unfinished_note(store, row)
    data = loss_analysis(store, row["id"])
    located, skipped = data["loss_localization"], data["not_accounted"]
    frame = store.measurements_frame(row["id"])
    # the report's "Machine as bottleneck" lines: losses that are this machine's, not the network's
    steal = {int(c["measurement_id"]): c["host_steal_ratio"] for c in data["cpu_per_measurement"]}
    flows = [as_attributes(loc) for loc in located]
    builds = store.builds_frame(row["id"])
    pushed_back = sender_shaped_nodes(builds.iloc[-1]["layout"] if not builds.empty else None)
    data["machine_as_bottleneck"] = machine_items(frame, flows, steal, pushed_back)
    if json_output:
        print_json(data)
        return
    if located:
        print_table(out, summary_table(located, frame))
    if skipped:
        print_table(out, not_accounted_table(skipped))
    for item in data["machine_as_bottleneck"]:
        out.print(item, highlight=False)
    if frame.empty:  # said "has no UDP … measurements" of a spec full of them
        out.print(f"campaign {row['id']} has no measurement stored: nothing to account for", highlight=False)
    elif not located and not skipped:
        out.print(
            f"campaign {row['id']} has no UDP, packet-rate, trace, background or RTT measurements: "
            "nothing to account for (TCP retransmits what it loses)",
            highlight=False,
        )


def as_attributes(loc: dict[str, Any]) -> SimpleNamespace:
    """A localization's JSON read by attribute, its stages and explainers too, as machine_items reads
    the localizer's own objects in the report."""

    def wrap(value: Any) -> Any:
        if isinstance(value, dict):
            return SimpleNamespace(**{k: wrap(v) for k, v in value.items()})
        return [wrap(v) for v in value] if isinstance(value, list) else value

    return wrap(loc)
