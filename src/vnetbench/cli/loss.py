"""`vnetbench loss CAMPAIGN [--json]`: where the packets of every UDP / packet-rate measurement went
(analysis/loss.py)."""

from __future__ import annotations

import json
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

from vnetbench.cli.common import DbOption, find_campaign, open_store


def loss_command(
    campaign: Annotated[
        str | None, typer.Argument(help="campaign id, id prefix or name (default: the newest in the store)")
    ] = None,
    db: DbOption = "vnetbench.db",
    json_output: Annotated[
        bool, typer.Option("--json", help="print one JSON object instead of a table")
    ] = False,
) -> None:
    """Where the packets went: the hop where each UDP measurement lost them, and the counter that says why."""
    from vnetbench.analysis.loss import loss_analysis  # the statistics stack: start-up time

    store = open_store(db)
    row = find_campaign(store, campaign)
    data = loss_analysis(store, row["id"])
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
