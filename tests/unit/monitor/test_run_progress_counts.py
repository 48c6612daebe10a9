"""A monitored run's live progress counts measurements, not attempts: a measurement re-run after a
failure (schedule.retries, or a tool's setup failure) counts once, by whether any attempt was ok."""

from __future__ import annotations

from pathlib import Path

from tests.helpers.dashboard_stores import dashboard_store, record
from vnetbench.store.monitoring import MonitorStore


def test_a_rerun_measurement_counts_once(tmp_path: Path) -> None:
    store = dashboard_store(tmp_path / "m.db")
    attempts = [  # (dst, attempt, status): b failed then ok; c failed twice; d setup failed then ok
        ("b", 1, "failed"), ("b", 2, "ok"),
        ("c", 1, "failed"), ("c", 2, "failed"),
        ("d", 1, "setup_failed"), ("d", 2, "ok"),
        ("e", 1, "ok"),
    ]  # fmt: skip
    for seq, (dst, attempt, status) in enumerate(attempts):
        rec = record("d1", seq, 1, "tcp", "a", dst, {}, status=status)
        rec.attempt = attempt
        store.save_measurements([rec])
    stored, ok, failed = MonitorStore(store).stored_flows("d1", 1)
    store.close()
    assert sorted(stored) == ["tcp-a-b-r1", "tcp-a-c-r1", "tcp-a-d-r1", "tcp-a-e-r1"]
    assert sorted(ok) == ["tcp-a-b-r1", "tcp-a-d-r1", "tcp-a-e-r1"]
    assert failed == 1  # c only; it counted 4 (every attempt that was not ok)
