"""`vnetbench clean` for what a killed SSH campaign left on remote hosts: its recorded tool processes
(pid + start time: a recycled pid is left alone) and its run directories (/tmp/vnb-CAMPAIGN-BUILD).

The hosts come from the campaign's stored inventory. An unreachable host keeps its rows live,
so a later `clean` can finish the job.
"""

from __future__ import annotations

import asyncio
import re
from collections import defaultdict
from typing import Any

from vnetbench.providers.base import ProviderError
from vnetbench.providers.ssh import remote
from vnetbench.providers.ssh.connect import Pool
from vnetbench.providers.ssh.loop import LoopThread
from vnetbench.spec.loader import parse_spec
from vnetbench.store.db import Store

KINDS = ("ssh-process", "ssh-rundir")


def _safe_rundir(campaign_id: str, path: str) -> bool:
    return re.fullmatch(rf"/tmp/vnb-{re.escape(campaign_id)}-\d+", path or "") is not None


def clean_remote(store: Store, rows: list[dict[str, Any]]) -> tuple[list[str], list[str], list[int]]:
    """Returns (what was removed, problems, ids done)."""
    removed: list[str] = []
    problems: list[str] = []
    done: list[int] = []
    by_campaign: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for row in rows:
        by_campaign[row["campaign_id"]].append(row)
    loop = LoopThread("vnb-clean")
    try:
        for cid, items in by_campaign.items():
            campaign = store.campaign(cid)
            inventory = parse_spec(
                campaign["spec_text"], campaign["spec_source"], stored=True
            ).campaign.inventory
            if inventory is None:
                problems.append(f"campaign {cid}: remote objects but no inventory; left alone")
                continue
            loop.run(_clean_campaign(Pool(inventory), cid, items, removed, problems, done), 300)
    finally:
        loop.stop()
    return removed, problems, done


async def _clean_campaign(
    pool: Pool,
    cid: str,
    rows: list[dict[str, Any]],
    removed: list[str],
    problems: list[str],
    done: list[int],
) -> None:
    by_host: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for row in rows:
        host = row["details"].get("host")
        if host not in pool.hosts:
            problems.append(f"{row['kind']} row {row['id']}: host {host!r} not in the inventory; left alone")
            continue
        by_host[host].append(row)

    async def one(host: str, host_rows: list[dict[str, Any]]) -> None:
        sudo = pool.hosts[host].sudo
        procs = [r for r in host_rows if r["kind"] == "ssh-process"]
        dirs = [r for r in host_rows if r["kind"] == "ssh-rundir"]
        try:
            if procs:
                pairs = [(int(r["details"]["pid"]), r["details"].get("starttime")) for r in procs]
                await pool.run(host, remote.kill_command(pairs, "KILL", sudo), 30)
                removed.extend(f"process {r['details']['pid']} on {host} ({r['name']})" for r in procs)
                done.extend(r["id"] for r in procs)
            for row in dirs:
                path = row["details"].get("path", "")
                if not _safe_rundir(cid, path):
                    problems.append(f"ssh-rundir row {row['id']} ({path!r}): not a path of ours, left alone")
                    continue
                result = await pool.run(host, remote.sh(remote.RMRUNDIR, path, sudo=sudo), 30)
                if result.exit_status == 0:
                    removed.append(f"run directory {path} on {host}")
                    done.append(row["id"])
                else:
                    problems.append(f"run directory {path} on {host}: {str(result.stderr).strip()}")
        except ProviderError as err:
            problems.append(f"{len(host_rows)} objects on {host} left: {err}")

    try:
        await asyncio.gather(*(one(h, r) for h, r in by_host.items()))
    finally:
        await pool.close()
