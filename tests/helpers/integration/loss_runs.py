"""A whole campaign run through the runner on real namespaces, checked to leave nothing behind."""

from __future__ import annotations

import os
from multiprocessing import resource_tracker
from pathlib import Path

from vnetbench.providers.local import LocalProvider
from vnetbench.providers.local.netns import NETNS_DIR
from vnetbench.run.campaign import create_campaign, run_campaign
from vnetbench.spec.loader import parse_spec
from vnetbench.store.db import Store


def _children() -> list[str]:
    # multiprocessing's resource tracker (started by a test's "spawn" context, e.g. the monitor claim
    # race) is Python's own helper and lives until this test process exits: not left behind by a run
    tracker = resource_tracker._resource_tracker._pid
    me, found = str(os.getpid()), []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/stat") as f:
                stat = f.read()
        except OSError:
            continue
        fields = stat[stat.rindex(")") + 2 :].split()
        if fields[1] == me and fields[0] != "Z" and int(pid) != tracker:
            found.append(stat[: stat.rindex(")") + 1])
    return found


def run_spec(tmp_path: Path, text: str) -> tuple[Store, str]:
    store = Store(tmp_path / "t.db")
    started = create_campaign(parse_spec(text, "test.yaml"), store)
    cid = started.campaign_id
    summary = run_campaign(
        store, cid, LocalProvider(cid, store.location, tools=("iperf3", "tcpdump")), plan=started.plan
    )
    left = [n for n in os.listdir(NETNS_DIR) if n.startswith(f"vnb{cid}")] if os.path.isdir(NETNS_DIR) else []
    assert not left, f"namespaces left behind: {left}"
    assert not _children(), f"processes left behind: {_children()}"
    assert summary.flows_failed == 0, summary.failures
    return store, cid
