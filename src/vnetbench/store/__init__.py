"""The store: every sample, raw tool output, telemetry and provenance — and every SQL statement.

- `records`  the plain data of one measurement (MeasurementRecord, Sample, Event, TelemetryRun)
- `schema`   the tables (SQLAlchemy Core)
- `db`       `Store`: open by path or URL, write a step in one transaction, read frames for analysis
- `export`   a campaign's tables to CSV or Parquet

Import the module you need; this package imports nothing itself, so `records` stays cheap to load.
"""
