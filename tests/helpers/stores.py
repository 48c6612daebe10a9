"""A real store (a SQLite file, or a PostgreSQL URL from the `store_url` fixture) holding one campaign row,
for tests that write measurements or objects into it."""

from __future__ import annotations

from pathlib import Path

from vnetbench.store.db import Store


def campaign_store(
    path: Path | str, campaign_id: str = "c1", status: str = "running", spec_text: str = ""
) -> Store:
    store = Store(path)
    store.create_campaign(
        id=campaign_id,
        name="t",
        status=status,
        provider="local",
        spec_text=spec_text,
        spec_sha256="-",
        spec_source="tests",
        seed=0,
        environment={},
        tool_versions={},
    )
    return store
