"""A stop signal whose exception a library swallows still stops the run at the next step. Seen in CI:
a SIGINT landed while telemetry started a step's sampler thread, the thread's clean-up raised
"cannot join thread before it is started" over the Interrupted, telemetry logged that as its own
error, and the campaign measured all 12 of its steps and exited 0 instead of 130."""

from __future__ import annotations

import contextlib
import os
import signal
from pathlib import Path
from typing import Any

import pytest

from tests.helpers.specs import two_node_spec
from vnetbench.observers import Observer
from vnetbench.providers.registry import make_provider
from vnetbench.run.campaign import create_campaign
from vnetbench.run.runner import Runner
from vnetbench.spec.loader import parse_spec
from vnetbench.store.db import Store

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="builds namespaces: needs root")


class SwallowingObserver(Observer):
    """Sends this process SIGINT as the first step starts, inside a handler that swallows every
    Exception (as telemetry's start does with its own errors)."""

    def __init__(self) -> None:
        self.starts = 0

    def on_step_start(self, running: Any) -> None:
        self.starts += 1
        if self.starts == 1:
            with contextlib.suppress(Exception):
                os.kill(os.getpid(), signal.SIGINT)


def test_a_swallowed_stop_signal_stops_the_run_at_the_next_step(tmp_path: Path) -> None:
    text = two_node_spec(
        "stop", {"rtt": "kind: rtt, count: 2, interval: 0.1s"}, "schedule: {repetitions: 3}\n"
    )
    store = Store(tmp_path / "s.db")
    started = create_campaign(parse_spec(text, "stop.yaml"), store, provider="local")
    provider = make_provider("local", started.campaign_id, store)
    observer = SwallowingObserver()
    summary = Runner(store, started.campaign_id, started.plan, provider, {}, observers=[observer]).run(
        store.campaign(started.campaign_id)["created_utc_ns"]
    )
    assert len(started.plan.steps) == 3
    assert summary.interrupted and observer.starts == 1  # steps 2 and 3 never started
    assert store.campaign(started.campaign_id)["status"] == "interrupted"
    assert store.live_objects(started.campaign_id) == []  # torn down as after any stop
    store.close()
