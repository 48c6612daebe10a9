"""Export a campaign's tables to CSV or Parquet (one file per table)."""

from __future__ import annotations

import json
from pathlib import Path

from vnetbench.store.db import Store

TABLES = ("samples", "events", "builds", "objects", "raw_outputs", "telemetry_runs", "telemetry", "captures")


def export_campaign(store: Store, campaign_id: str, out_dir: Path, fmt: str = "csv") -> list[Path]:
    """Write every table of a campaign as CSV or Parquet into out_dir; returns the files."""
    out_dir.mkdir(parents=True, exist_ok=True)
    frames = {"measurements": store.measurements_frame(campaign_id, latest_only=False)}
    frames.update({name: store.table_frame(name, campaign_id) for name in TABLES})
    frames["campaign"] = store.table_frame("campaigns", campaign_id)
    paths = []
    for name, frame in frames.items():
        for column in frame.columns:  # JSON columns (factors, command, details) as text
            if frame[column].map(lambda v: isinstance(v, dict | list)).any():
                frame[column] = frame[column].map(lambda v: None if v is None else json.dumps(v))
        path = out_dir / f"{campaign_id}-{name}.{fmt}"
        if fmt == "csv":
            frame.to_csv(path, index=False)
        else:
            frame.to_parquet(path, index=False)
        paths.append(path)
    return paths
