"""The dashboard's answer cache: one computation per version, the previous answer while a new one is made,
and a wait only when there is nothing to show yet. Threads and events, no sleeps."""

from __future__ import annotations

import threading

from vnetbench.dashboard.app import _Cache

DEADLINE_S = 30  # generous: only a hang would reach it


def test_same_version_computes_once() -> None:
    cache, calls = _Cache(), []
    assert cache.get(("k",), 1, lambda: calls.append(1) or "a") == "a"
    assert cache.get(("k",), 1, lambda: calls.append(1) or "b") == "a"
    assert cache.get(("k",), 2, lambda: calls.append(1) or "c") == "c"
    assert len(calls) == 2


def test_while_a_new_version_is_made_others_get_the_previous_answer() -> None:
    cache = _Cache()
    cache.get(("k",), 1, lambda: "old")
    started, release = threading.Event(), threading.Event()
    answers: list[str] = []

    def slow() -> str:
        started.set()
        assert release.wait(DEADLINE_S)
        return "new"

    maker = threading.Thread(target=lambda: answers.append(cache.get(("k",), 2, slow)))
    maker.start()
    assert started.wait(DEADLINE_S)
    # a concurrent request for version 2 does not queue: it gets version 1's answer, and computes nothing
    assert cache.get(("k",), 2, lambda: "computed twice") == "old"
    release.set()
    maker.join(DEADLINE_S)
    assert answers == ["new"]
    assert cache.get(("k",), 2, lambda: "computed twice") == "new"


def test_with_nothing_to_show_yet_concurrent_requests_wait_for_the_one_computation() -> None:
    cache = _Cache()
    started, release = threading.Event(), threading.Event()
    calls: list[int] = []
    answers: list[str] = []

    def slow() -> str:
        calls.append(1)
        started.set()
        assert release.wait(DEADLINE_S)
        return "first"

    threads = [threading.Thread(target=lambda: answers.append(cache.get(("k",), 1, slow))) for _ in range(5)]
    threads[0].start()
    assert started.wait(DEADLINE_S)
    for t in threads[1:]:
        t.start()
    release.set()
    for t in threads:
        t.join(DEADLINE_S)
    assert answers == ["first"] * 5 and len(calls) == 1


def test_disabled_cache_computes_every_time() -> None:
    cache = _Cache()
    cache.enabled = False
    assert [cache.get(("k",), 1, lambda i=i: i) for i in range(3)] == [0, 1, 2]
