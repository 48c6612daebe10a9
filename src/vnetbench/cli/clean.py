"""`vnetbench clean`: remove what a killed run left behind — only objects recorded as ours."""

from __future__ import annotations

from typing import Annotated

import typer

from vnetbench.cli.common import ambiguous_prefix, err, fail, find_campaign, open_store, out, sqlite_path


def clean(
    db: Annotated[
        str | None,
        typer.Option(
            "--db",
            envvar="VNETBENCH_DB",
            help="store to read ownership records from (default: the stores of the builds this machine "
            "registered as live, and ./vnetbench.db)",
        ),
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
    locations = _locations(db, campaign, active_campaigns())
    total, holding, left_alone = 0, 0, []
    for location in locations:
        path = sqlite_path(location)
        if path is not None and not path.exists():
            continue
        store = open_store(location)
        cid = None
        if campaign:
            if db is None and (ambiguous_prefix(store, campaign) or store.campaign(campaign) is None):
                continue  # searching the registered stores: another one may hold it
            cid = find_campaign(store, campaign)["id"]
            holding += 1
        result = clean_leftovers(store, cid)
        for line in result.removed:
            out.print(f"removed {line}", highlight=False)
        for line in result.problems:
            err.print(f"[yellow]could not remove[/yellow] {line}", highlight=False, soft_wrap=True)
        total += len(result.removed)
        left_alone += result.skipped
    if campaign and not holding:
        # was: the first registered store's "no campaign" error, though a later one held it
        raise fail(
            f"no campaign '{campaign}' in any store this machine knows of ({', '.join(locations)}); "
            "give its store with --db"
        )
    if left_alone:  # said "nothing of ours was left behind" of a campaign it did not look at
        removed = f"{total} objects removed" if total else "nothing removed"
        out.print(
            f"{removed}; left alone (said above why): campaign {', '.join(left_alone)}",
            highlight=False,
            soft_wrap=True,
        )
        return
    out.print(f"{total} objects removed" if total else "nothing of ours was left behind")


def _locations(db: str | None, campaign: str | None, registered: list[tuple[str, str]]) -> list[str]:
    """The stores to clean from: --db; else the one(s) a live build of the campaign registered; else
    every registered store and ./vnetbench.db."""
    if db:
        return [db]
    if campaign and (mine := sorted({loc for cid, loc in registered if cid.startswith(campaign)})):
        return mine
    return sorted({loc for _, loc in registered} | {"vnetbench.db"})
