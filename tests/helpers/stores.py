"""A real store (a SQLite file, or a PostgreSQL URL from the `store_url` fixture) holding one campaign row,
for tests that write measurements or objects into it."""

from __future__ import annotations

from pathlib import Path

from vnetbench.store.db import Store
from vnetbench.store.records import MeasurementRecord, TelemetryRun


def campaign_store(
    path: Path | str, campaign_id: str = "c1", status: str = "running", spec_text: str = ""
) -> Store:
    store = Store(path)
    add_campaign(store, campaign_id, "t", spec_text, status=status, spec_source="tests", seed=0)
    return store


def add_campaign(
    store: Store, campaign_id: str, name: str, spec_text: str, status: str = "finished", **fields: object
) -> None:
    """One campaign row of the local provider (no environment or tool versions unless `fields` give
    them), for tests that write its measurements themselves."""
    values: dict[str, object] = {
        "provider": "local", "spec_sha256": "-", "spec_source": "test", "seed": 1,
        "environment": {}, "tool_versions": {},
    }  # fmt: skip
    values.update(fields)
    store.create_campaign(id=campaign_id, name=name, status=status, spec_text=spec_text, **values)  # type: ignore[arg-type]


def pair_record(
    campaign_id: str, key: str, kind: str, src: str, dst: str, **fields: object
) -> MeasurementRecord:
    """One measurement of a `pairs` pattern `p` between two nodes on one host (repetition 1, seq 0,
    status ok unless `fields` say otherwise); its measurement is named after its kind."""
    values: dict[str, object] = {
        "step_key": key, "seq": 0, "repetition": 1, "pattern": "p", "pattern_kind": "pairs",
        "group_kind": "single", "group_size": 1, "measurement": kind, "placement": "same-host",
    }  # fmt: skip
    values.update(fields)
    return MeasurementRecord(campaign_id=campaign_id, key=key, kind=kind, src=src, dst=dst, **values)  # type: ignore[arg-type]


def host_cpu(busy_ms: int, idle_ms: int) -> TelemetryRun:
    """Telemetry of one measurement: one reading of the host's CPU, busy_ms of user time and idle_ms
    idle (its busy share: busy / (busy + idle))."""
    rows = [{"t_ns": 10**9, "scope": "cpu", "metric": m, "value": float(v * 10**6)}
            for m, v in (("user_ns", busy_ms), ("idle_ns", idle_ms))]  # fmt: skip
    return TelemetryRun(0, 10**9, 10**9, 1, 0, {}, None, rows=rows)
