"""A real SQLite store with one campaign of a real spec and results written through the store's API, for the
dashboard's tests: known values per pair, so the grid's colours and a pair's series can be asserted."""

from __future__ import annotations

from pathlib import Path

from tests.helpers.stores import campaign_store
from vnetbench.store.db import Store
from vnetbench.store.records import MeasurementRecord, Sample

SPEC = """\
name: dash
topology:
  nodes: [{name: a}, {name: b}, {name: c}]
  switches: [{name: sw}]
  links:
    - {endpoints: [a, sw], rate: 100mbit}
    - {endpoints: [b, sw], rate: 100mbit}
    - {endpoints: [c, sw], rate: 100mbit}
measurements:
  - {name: tcp, kind: tcp, duration: 2s}
  - name: rtt
    kind: rtt
    count: 5
    thresholds: {loss_ratio: {warning: 10%, critical: 30%}}
patterns:
  - {name: pairs, kind: pairs, pairs: [[a, b], [a, c], [b, c]], measurements: [tcp, rtt]}
schedule:
  repetitions: 3
"""
START_NS = 1_700_000_000 * 10**9
EXPECTED_MAX_BPS = 94_900_000.0


def dashboard_store(path: Path, campaign_id: str = "d1", status: str = "running") -> Store:
    return campaign_store(path, campaign_id, status, spec_text=SPEC)


def record(
    campaign_id: str,
    seq: int,
    repetition: int,
    measurement: str,
    src: str,
    dst: str,
    summary: dict[str, float | None],
    samples: list[Sample] | None = None,
    status: str = "ok",
    group_kind: str = "single",
) -> MeasurementRecord:
    return MeasurementRecord(
        campaign_id=campaign_id,
        key=f"{measurement}-{src}-{dst}-r{repetition}",
        step_key=f"s{seq}",
        seq=seq,
        repetition=repetition,
        pattern="pairs",
        pattern_kind="pairs",
        group_kind=group_kind,
        group_size=1,
        measurement=measurement,
        kind=measurement,
        src=src,
        dst=dst,
        placement="same-host",
        status=status,
        expected_max_bps=EXPECTED_MAX_BPS if measurement == "tcp" else None,
        started_utc_ns=START_NS + seq * 10**9,
        duration_ns=2 * 10**9,
        summary=summary,
        samples=samples or [],
    )
