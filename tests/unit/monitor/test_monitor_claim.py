"""Monitors started at the same instant on one store (one host, or several hosts sharing a PostgreSQL
store) each passed the claim check before any had recorded itself, so every one of them ran the
campaign. The claim is one compare-and-set now: exactly one wins, the others are refused naming it and
write nothing. Real processes (tests/helpers/claim_race.py), real SQLite and PostgreSQL stores."""

from __future__ import annotations

import re
import socket

import pytest

from tests.helpers.claim_race import THIS_HOST, RaceResult, Racers, claim_racers
from tests.helpers.monitor_procs import WAITING_SPEC, claim_as
from vnetbench.monitor.service import HEARTBEAT_STALE_S
from vnetbench.run.campaign import create_campaign
from vnetbench.spec.loader import parse_spec
from vnetbench.store.db import Store
from vnetbench.store.monitoring import MonitorStore

pytestmark = pytest.mark.slow(seconds=60)  # four racing interpreters per backend

RACERS = 4
OTHER_HOST, OTHER_PID = "vnb-test-elsewhere", 4242  # a host that is gone: its claim is stale


def _one_winner(results: list[RaceResult], db: str, cid: str) -> RaceResult:
    """Exactly one racer claimed; the store names it, and nothing a loser did shows there."""
    winners = [r for r in results if r.claimed]
    assert len(winners) == 1, results
    winner = winners[0]
    store = Store(db)
    try:
        row = MonitorStore(store).monitored(cid)
        assert len(MonitorStore(store).all_monitored()) == 1 and len(store.campaigns()) == 1
    finally:
        store.close()
    assert row is not None and (row["pid"], row["hostname"], row["state"]) == (
        winner.pid,
        winner.host,
        "waiting",
    )
    return winner


def _race_on_this_host(racers: Racers, db: str, cid: str) -> RaceResult:
    results = racers.race([THIS_HOST] * RACERS)
    winner = _one_winner(results, db, cid)
    _losers_refused_naming(winner, results, cid)
    return winner


def _losers_refused_naming(winner: RaceResult, results: list[RaceResult], cid: str) -> None:
    for loser in (r for r in results if not r.claimed):
        assert loser.said == (
            f"campaign 'waits' ({cid}) is already monitored by process {winner.pid} on {winner.host}; "
            f"stop it first (kill {winner.pid})"
        ), results


def test_of_monitors_racing_for_a_campaign_exactly_one_claims_it(store_url: str) -> None:
    store = Store(store_url)
    try:
        cid = create_campaign(parse_spec(WAITING_SPEC, "race.yaml"), store).campaign_id
    finally:
        store.close()
    with claim_racers(RACERS, store_url, WAITING_SPEC, cid) as racers:
        # the first claim of all: no row yet, so every racer inserts one
        winners = [_race_on_this_host(racers, store_url, cid)]
        for _ in range(3):  # after a monitor that stopped (its pid cleared): every racer updates the row
            store = Store(store_url)
            MonitorStore(store).set_state(cid, state="stopped", pid=None)
            store.close()
            winners.append(_race_on_this_host(racers, store_url, cid))
        # several hosts sharing the store find a host's stale claim: one takes it over, the others are
        # refused naming the winner, whose heartbeat is fresh
        claim_as(store_url, cid, OTHER_HOST, OTHER_PID, heartbeat_age_s=HEARTBEAT_STALE_S + 10)
        hosts = [f"vnb-test-racer-{i}" for i in range(RACERS)]
        results = racers.race(hosts)
    _stale_claim_taken_over_once(results, store_url, cid, hosts)


def _stale_claim_taken_over_once(results: list[RaceResult], db: str, cid: str, hosts: list[str]) -> None:
    winner = _one_winner(results, db, cid)
    assert winner.host in hosts and winner.host != socket.gethostname()
    assert winner.said.startswith(
        f"taking over campaign 'waits' ({cid}) from process {OTHER_PID} on {OTHER_HOST}"
    )
    for loser in (r for r in results if not r.claimed):
        said = " ".join(loser.said.split())
        found = re.fullmatch(
            rf"campaign 'waits' \({cid}\) is already monitored by process {winner.pid} on {winner.host}, "
            r"whose heartbeat is (\d+) s old .* to take the campaign over",
            said,
        )
        assert found and int(found.group(1)) <= 5, said  # written a moment ago, by the winner


def test_of_monitors_racing_on_a_store_without_the_campaign_one_creates_it(store_url: str) -> None:
    """Started at once on a store without their campaign, each monitor found none and created its own:
    two campaigns of one name, both monitored. Now the name's compare-and-set keeps one: every racer
    goes on with it, one claims it, the others are refused naming that monitor and leave nothing."""
    Store(store_url).close()
    with claim_racers(RACERS, store_url, WAITING_SPEC, None) as racers:
        results = racers.race([THIS_HOST] * RACERS)
        first = _the_only_new_campaign(results, store_url, known=set())
        # --new-campaign, racing: one new campaign of the name, the first one kept and still monitored
        results = racers.race([THIS_HOST] * RACERS, new_campaign=True)
        second = _the_only_new_campaign(results, store_url, known={first})
    store = Store(store_url)
    try:
        assert {c["id"] for c in store.campaigns()} == {first, second}
        assert MonitorStore(store).named("waits") == second
        assert {r["campaign_id"] for r in MonitorStore(store).all_monitored()} == {first, second}
    finally:
        store.close()


def _the_only_new_campaign(results: list[RaceResult], db: str, known: set[str]) -> str:
    """The one campaign the racers made: it is the name's, one racer claimed it, the others were refused
    naming that racer; the store holds no other new campaign."""
    store = Store(db)
    try:
        made = {c["id"] for c in store.campaigns()} - known
        assert len(made) == 1, (made, results)
        (cid,) = made
        assert MonitorStore(store).named("waits") == cid
        row = MonitorStore(store).monitored(cid)
    finally:
        store.close()
    winners = [r for r in results if r.claimed]
    assert len(winners) == 1 and winners[0].campaign_id == cid, results
    assert row is not None and (row["pid"], row["hostname"]) == (winners[0].pid, winners[0].host)
    _losers_refused_naming(winners[0], results, cid)
    return cid
