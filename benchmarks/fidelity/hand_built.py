"""A topology built by the real provider for a benchmark that then works on it by hand (tc, ethtool,
sysfs, its own tool runs), torn down when the benchmark is done, whatever happens.

The store is a throwaway SQLite file: the provider records every object it creates there before
creating it, as in a campaign, so `vnetbench clean --db` could find them after a crash.
"""

from __future__ import annotations

import secrets
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from vnetbench.layout import Layout, build_layout
from vnetbench.providers.local import LocalProvider
from vnetbench.spec import parse_spec
from vnetbench.store.db import Store


@contextmanager
def hand_built(spec_text: str, name: str, prefix: str) -> Iterator[tuple[Layout, LocalProvider]]:
    """(layout, provider) of spec_text built under a campaign id `prefix` + 6 hex digits."""
    campaign_id = f"{prefix}{secrets.token_hex(3)}"
    store = Store(Path(tempfile.mkdtemp()) / "store.db")
    layout = build_layout(parse_spec(spec_text).campaign, campaign_id)
    store.create_campaign(
        id=campaign_id, name=name, status="running", provider="local", spec_text=spec_text,
        spec_sha256="-", spec_source=__file__, seed=0, environment={}, tool_versions={},
    )  # fmt: skip
    provider = LocalProvider(campaign_id, store.location)
    build_id = store.start_build(campaign_id, prefix, {})
    provider.build(layout, build_id, lambda items: store.record_objects(campaign_id, build_id, items))
    try:
        yield layout, provider
    finally:
        store.mark_removed(provider.teardown())
