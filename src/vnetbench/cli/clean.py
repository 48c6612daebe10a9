"""`vnetbench clean`: remove what a killed run left behind — only objects recorded as ours."""

from __future__ import annotations

from typing import Annotated

import typer

from vnetbench.cli.common import err, fail, find_campaign, open_store, out, sqlite_path


def clean(
    db: Annotated[
        str | None, typer.Option("--db", envvar="VNETBENCH_DB", help="store to read ownership records from")
    ] = None,
    campaign: Annotated[str | None, typer.Option(help="only this campaign's objects")] = None,
) -> None:
    """Remove what a killed run left behind (namespaces, processes, cgroups, OVS daemons) — only objects
    recorded as ours, never anything matched by name."""
    # the providers (pyroute2, asyncssh): imported when the command runs, for start-up time
    from vnetbench.providers.cleanup import active_campaigns
    from vnetbench.providers.cleanup import clean as clean_leftovers

    if db and (path := sqlite_path(db)) is not None and not path.exists():
        # said "nothing of ours was left behind" when a mistyped --db had nothing to say
        raise fail(
            f"no store at '{db}': it holds the records of what a run created, so nothing can be cleaned "
            "from it; check --db (or VNETBENCH_DB); without either, clean finds the live builds this machine "
            "registered"
        )
    locations = [db] if db else sorted({loc for _, loc in active_campaigns()} | {"vnetbench.db"})
    total = 0
    for location in locations:
        path = sqlite_path(location)
        if path is not None and not path.exists():
            continue
        store = open_store(location)
        cid = find_campaign(store, campaign)["id"] if campaign else None
        result = clean_leftovers(store, cid)
        for line in result.removed:
            out.print(f"removed {line}", highlight=False)
        for line in result.problems:
            err.print(f"[yellow]could not remove[/yellow] {line}", highlight=False)
        total += len(result.removed)
    out.print(f"{total} objects removed" if total else "nothing of ours was left behind")
