"""Processes that open a new store at the same moment (a monitor and a dashboard started together, a
test polling a monitor's store) all open it: creating the tables is not one step, and the second
creator failed with "table campaigns already exists" (seen in CI: a test's poll beside a monitor)."""

from __future__ import annotations

import multiprocessing
from typing import Any

import pytest
from sqlalchemy import func, select

from vnetbench.store import schema as t
from vnetbench.store.db import Store

OPENERS = 8


def _open(url: str, barrier: Any, errors: Any) -> None:
    barrier.wait()
    try:
        Store(url).close()
    except Exception as exc:  # reported to the test, which names it
        errors.put(f"{type(exc).__name__}: {exc}".splitlines()[0])


def test_stores_opened_at_the_same_moment_all_open(store_url: str) -> None:
    ctx = multiprocessing.get_context("fork")
    errors = ctx.Queue()
    for round_ in range(3):  # the race is a matter of timing: three rounds of eight on fresh stores
        url = store_url if round_ == 0 else _fresh(store_url, round_)
        barrier = ctx.Barrier(OPENERS)
        procs = [ctx.Process(target=_open, args=(url, barrier, errors)) for _ in range(OPENERS)]
        for proc in procs:
            proc.start()
        for proc in procs:
            proc.join(120)
        assert [proc.exitcode for proc in procs] == [0] * OPENERS
        found = []
        while not errors.empty():
            found.append(errors.get())
        assert found == []
        store = Store(url)
        with store.engine.connect() as conn:  # one schema_version row, whoever wrote it
            rows = select(func.count()).select_from(t.meta).where(t.meta.c.key == "schema_version")
            assert conn.execute(rows).scalar() == 1
        store.close()


def _fresh(url: str, n: int) -> str:
    """Another new store on the same backend."""
    if "://" not in url:
        return url.replace("store.db", f"store{n}.db")
    import psycopg

    base, name = url.rsplit("/", 1)
    dsn = base.replace("postgresql+psycopg://", "postgresql://") + "/postgres"
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}_{n}"')
    return f"{base}/{name}_{n}"


def test_a_raced_step_is_tried_again_only_for_the_race_and_only_so_often() -> None:
    from vnetbench.store.db import _tried

    calls: list[str] = []

    def fails_twice() -> str:
        calls.append("x")
        if len(calls) < 3:
            raise OSError("database is locked")
        return "done"

    assert _tried(fails_twice, 3, OSError, lambda err: "locked" in str(err)) == "done"
    assert len(calls) == 3  # two lost races, then the step
    calls.clear()
    with pytest.raises(OSError, match="locked"):  # the last try's error is the caller's
        _tried(fails_twice, 2, OSError, lambda err: "locked" in str(err))
    assert len(calls) == 2
    calls.clear()
    with pytest.raises(OSError):  # an error that is not the race: raised at once, not tried again
        _tried(fails_twice, 5, OSError, lambda err: "disk" in str(err))
    assert len(calls) == 1
