"""A stop signal that lands inside a database call (a monitor's or a campaign's SIGTERM while a query
waits on PostgreSQL) comes out of the store as the signal's own exception, and the store stays
usable: psycopg leaves that connection mid-statement, its clean-up fails with "another command is
already in progress", and before store.db handled it that error came out instead, so a monitor took
the stop for an outage and left its run "running" (a make test-stress run of test_monitor, 2026-11-26)."""

from __future__ import annotations

import signal
from collections.abc import Iterator
from typing import Any

import pytest
from sqlalchemy import text

from tests.helpers.postgres import PostgresServer
from vnetbench.observers import Interrupted
from vnetbench.store.db import Store


def _raise_interrupted(signum: int, _frame: Any) -> None:
    raise Interrupted(signal.Signals(signum).name)


@pytest.fixture
def alarm_raises_interrupted() -> Iterator[None]:
    old = signal.signal(signal.SIGALRM, _raise_interrupted)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


@pytest.mark.parametrize("in_transaction", [False, True])
def test_a_signal_inside_a_query_comes_out_as_itself(
    postgres: PostgresServer, alarm_raises_interrupted: None, in_transaction: bool
) -> None:
    store = Store(postgres.create_database())
    try:
        with store.engine.connect() as conn:  # connected before the alarm: it lands in the query
            assert conn.execute(text("select 1")).scalar() == 1
        signal.setitimer(signal.ITIMER_REAL, 0.3)
        query = store.engine.begin() if in_transaction else store.engine.connect()
        with pytest.raises(Interrupted, match="SIGALRM"), query as conn:
            conn.execute(text("select pg_sleep(20)"))
        # the connection it left mid-statement was replaced: the next use works, first time
        with store.engine.begin() as conn:
            assert conn.execute(text("select 2")).scalar() == 2
    finally:
        store.engine.dispose()
