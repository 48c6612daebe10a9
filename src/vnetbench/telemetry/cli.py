"""`vnetbench loss CAMPAIGN [--json]`: where the packets of every UDP / packet-rate measurement went.

Registered in cli.py as `app.command("loss")(loss_command)`. `analysis(store, campaign_id)` returns
the same data for other commands (e.g. `vnetbench analyze --json`).
"""

from __future__ import annotations

import json
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.table import Table

from vnetbench.store.db import Store


def analysis(store: Store, campaign_id: str) -> dict[str, Any]:
    """Loss localization, loss-vs-CPU correlation and the tool-CPU table of a campaign, JSON-able."""
    from vnetbench.telemetry.cpu import correlation, cpu_frame, tool_cpu_table
    from vnetbench.telemetry.loss import campaign_losses

    frame = store.measurements_frame(campaign_id)
    cpu = cpu_frame(store, campaign_id, frame)
    return {
        "campaign": campaign_id,
        "loss_localization": [loc.to_json() for loc in campaign_losses(store, campaign_id, frame)],
        "loss_vs_cpu": {
            "host_busy": correlation(cpu, "host_busy_ratio"),
            "host_softirq": correlation(cpu, "host_softirq_ratio"),
            "receiver_tool": correlation(cpu, "receiver_cpu_ratio"),
        },
        "tool_cpu": tool_cpu_table(cpu),
        "cpu_per_measurement": [] if cpu.empty else json.loads(cpu.to_json(orient="records")),
    }


def loss_command(
    campaign: Annotated[
        str | None, typer.Argument(help="campaign id, id prefix or name (default: the newest in the store)")
    ] = None,
    db: Annotated[str, typer.Option("--db", envvar="VNETBENCH_DB", help="store: SQLite path or URL")] = (
        "vnetbench.db"
    ),
    json_output: Annotated[
        bool, typer.Option("--json", help="print one JSON object instead of a table")
    ] = False,
) -> None:
    """Where the packets went: the hop where each UDP measurement lost them, and the counter that says why."""
    err = Console(stderr=True)
    try:
        store = Store(db)
    except Exception as exc:
        err.print(f"[red]error:[/red] cannot open the store '{db}': {exc}", highlight=False)
        raise typer.Exit(2) from None
    row = store.campaign(campaign)
    if row is None:
        err.print(f"[red]error:[/red] no campaign '{campaign or ''}' in {store.location}", highlight=False)
        raise typer.Exit(2)
    data = analysis(store, row["id"])
    if json_output:
        print(json.dumps(data, indent=1, ensure_ascii=True, allow_nan=False, default=str))
        return
    table = Table("id", "flow", "sent", "lost", "where", "why (counter)")
    for loc in data["loss_localization"]:
        why = loc["cause"] or ""
        if loc["counter"]:
            why += f" ({loc['counter']}: {loc['counter_packets']:.0f})"
        table.add_row(
            str(loc["measurement_id"]),
            f"{loc['src']}→{loc['dst']}",
            f"{loc['sent']:.0f}",
            f"{loc['app_lost']:.0f} ({loc['app_lost'] / loc['sent']:.2%})" if loc["sent"] else "-",
            loc["hop"] or "no loss",
            why,
        )
    Console(emoji=False).print(table)  # node:b is not an emoji
