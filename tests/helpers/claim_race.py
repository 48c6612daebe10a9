"""Monitors racing to claim one campaign: N real processes each call `monitor.service.prepare` (what
`vnetbench monitor` does before it runs anything) on one store, round after round. A multiprocessing
barrier holds every racer right after it has read the campaign's claim and before it writes its own, so
each one passes the claim check before any has claimed: the window two monitors started at the same
instant fall into."""

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
    said: str  # the refusal (MonitorError), or the take-over words ('' when there was nothing to take)


def _racer(db: str, spec_text: str, campaign_id: str, tasks: Any, window: Any, out: Any) -> None:
    from vnetbench.monitor.service import MonitorError, prepare
    from vnetbench.spec.loader import parse_spec
    from vnetbench.store.db import Store
    from vnetbench.store.monitoring import MonitorStore

    real_host, read, held = socket.gethostname, MonitorStore.monitored, [False]

    def read_then_wait(self: MonitorStore, cid: str) -> dict[str, Any] | None:
        row = read(self, cid)
        if not held[0]:  # the first read of a round is the one the claim check judges
            held[0] = True
            window.wait(ROUND_TIMEOUT_S)
        return row

    MonitorStore.monitored = read_then_wait  # type: ignore[method-assign]
    store = Store(db)
    try:
        while (host := tasks.get()) is not None:
            # a monitor on a host of its own sharing the store, or on this one
            socket.gethostname = (lambda h=host: h) if host else real_host  # type: ignore[misc]
            held[0] = False
            try:
                m = prepare(parse_spec(spec_text, "race.yaml"), store, campaign_id=campaign_id)
                out.put(RaceResult(os.getpid(), socket.gethostname(), True, m.took_over or ""))
            except MonitorError as err:
                out.put(RaceResult(os.getpid(), socket.gethostname(), False, str(err)))
    finally:
        store.close()


class Racers:
    """N racer processes; `race(hosts)` runs one round (a host per racer) and returns their results."""

    def __init__(self, ctx: Any, n: int, db: str, spec_text: str, campaign_id: str) -> None:
        self.window, self.out = ctx.Barrier(n), ctx.Queue()
        self.tasks = [ctx.Queue() for _ in range(n)]
        self.procs = [
            ctx.Process(target=_racer, args=(db, spec_text, campaign_id, q, self.window, self.out))
            for q in self.tasks
        ]

    def race(self, hosts: list[str]) -> list[RaceResult]:
        for queue, host in zip(self.tasks, hosts, strict=True):
            queue.put(host)
        return [self.out.get(timeout=ROUND_TIMEOUT_S) for _ in hosts]


@contextmanager
def claim_racers(n: int, db: str, spec_text: str, campaign_id: str) -> Iterator[Racers]:
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
