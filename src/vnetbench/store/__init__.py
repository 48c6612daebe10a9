"""The store: every sample, raw tool output, telemetry and provenance."""

from vnetbench.store.db import DEFAULT_DB, Event, MeasurementRecord, Sample, Store, now_utc_ns

__all__ = ["DEFAULT_DB", "Event", "MeasurementRecord", "Sample", "Store", "now_utc_ns"]
