"""Monitors racing to claim one campaign: N real processes each call `monitor.service.prepare` (what
`vnetbench monitor` does before it runs anything) on one store, round after round. A multiprocessing
barrier holds every racer right after it has read the campaign's claim and before it writes its own, so
each one passes the claim check before any has claimed: the window two monitors started at the same
instant fall into. Racing for a campaign not yet made (campaign_id None), the barrier holds each right
after it has read which campaign the name points to, before it creates one."""

from __future__ import annotations

import multiprocessing
import os
import socket
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

ROUND_TIMEOUT_S = 120.0  # interpreters starting on a loaded 2-core machine
THIS_HOST = ""  # a racer's host in a round: "" for this machine's name


@dataclass(frozen=True)
class RaceResult:
    pid: int
    host: str
    claimed: bool
    campaign_id: str  # the campaign it went on with ('' when refused)
    said: str  # the refusal (MonitorError), or the take-over words ('' when there was nothing to take)


def _racer(db: str, spec_text: str, campaign_id: str | None, tasks: Any, window: Any, out: Any) -> None:
    from vnetbench.monitor import service
    from vnetbench.monitor.service import MonitorError, prepare
    from vnetbench.spec.loader import parse_spec
    from vnetbench.store.db import Store
    from vnetbench.store.monitoring import MonitorStore

    # the read the decision judges: the claim's row; with no campaign yet, the search for the name's
    # monitored campaign (or, with --new-campaign, which one the name points to) before creating one
    hold = [""]
    real_host = socket.gethostname

    def held_after(read: Any) -> Any:
        def read_then_wait(self: MonitorStore, key: str) -> Any:
            row = read(self, key)
            if read.__name__ == hold[0]:  # the first such read of a round; later ones go on
                hold[0] = ""
                window.wait(ROUND_TIMEOUT_S)
            return row

        return read_then_wait

    for name in ("monitored", "find", "named"):
        setattr(MonitorStore, name, held_after(getattr(MonitorStore, name)))
    # a monitor is alive when its pid runs a vnetbench command line; a racer's is Python's spawn line
    service._alive_monitor = lambda pid: bool(pid) and pid != os.getpid() and os.path.exists(f"/proc/{pid}")  # type: ignore[attr-defined]
    store = Store(db)
    try:
        while (task := tasks.get()) is not None:
            host, new_campaign = task
            # a monitor on a host of its own sharing the store, or on this one
            socket.gethostname = (lambda h=host: h) if host else real_host  # type: ignore[misc]
            hold[0] = "monitored" if campaign_id else "named" if new_campaign else "find"
            try:
                spec = parse_spec(spec_text, "race.yaml")
                m = prepare(spec, store, new_campaign=new_campaign, campaign_id=campaign_id)
                out.put(RaceResult(os.getpid(), socket.gethostname(), True, m.campaign_id, m.took_over or ""))
            except MonitorError as err:
                out.put(RaceResult(os.getpid(), socket.gethostname(), False, "", str(err)))
    finally:
        store.close()


class Racers:
    """N racer processes; `race(hosts)` runs one round (a host per racer) and returns their results."""

    def __init__(self, ctx: Any, n: int, db: str, spec_text: str, campaign_id: str | None) -> None:
        self.window, self.out = ctx.Barrier(n), ctx.Queue()
        self.tasks = [ctx.Queue() for _ in range(n)]
        self.procs = [
            ctx.Process(target=_racer, args=(db, spec_text, campaign_id, q, self.window, self.out))
            for q in self.tasks
        ]

    def race(self, hosts: list[str], new_campaign: bool = False) -> list[RaceResult]:
        """`new_campaign`: each racer is `vnetbench monitor --new-campaign` (racing with campaign_id None)."""
        for queue, host in zip(self.tasks, hosts, strict=True):
            queue.put((host, new_campaign))
        return [self.out.get(timeout=ROUND_TIMEOUT_S) for _ in hosts]


@contextmanager
def claim_racers(n: int, db: str, spec_text: str, campaign_id: str | None) -> Iterator[Racers]:
    ctx = multiprocessing.get_context("spawn")  # no fork of the test process's engines and threads
    racers = Racers(ctx, n, db, spec_text, campaign_id)
    for proc in racers.procs:
        proc.start()
    try:
        yield racers
    finally:
        for queue in racers.tasks:
            queue.put(None)
        for proc in racers.procs:
            proc.join(ROUND_TIMEOUT_S)
            if proc.is_alive():
                proc.kill()
                proc.join(10)
    assert [p.exitcode for p in racers.procs] == [0] * n
