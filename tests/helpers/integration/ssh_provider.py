"""An SSH provider built on sshnet hosts for one two-node campaign (nodes a and b), torn down after."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path

import yaml

from tests.helpers.integration.sshnet import SshHost, SshNet
from vnetbench.layout import Layout, build_layout
from vnetbench.providers.registry import make_provider
from vnetbench.providers.ssh.provider import SshProvider
from vnetbench.run.campaign import create_campaign
from vnetbench.spec.loader import parse_spec
from vnetbench.store.db import Store


@contextlib.contextmanager
def ssh_provider(
    sshnet: SshNet, tmp_path: Path, a: SshHost, b: SshHost
) -> Iterator[tuple[SshProvider, Layout]]:
    spec = {
        "name": "sshudp",
        "topology": {"nodes": [{"name": "a"}, {"name": "b"}], "links": [{"endpoints": ["a", "b"]}]},
        "measurements": [{"name": "u", "kind": "udp", "duration": "2s", "rate": "10mbit"}],
        "patterns": [{"kind": "pairs", "pairs": [["a", "b"]], "measurements": ["u"]}],
        "inventory": {**sshnet.inventory(), "nodes": {"a": a.name, "b": b.name}},
    }
    loaded = parse_spec(yaml.safe_dump(spec), "sshudp.yaml")
    store = Store(str(tmp_path / "s.db"))
    cid = create_campaign(loaded, store, provider="ssh").campaign_id
    provider = make_provider("ssh", cid, store)
    assert isinstance(provider, SshProvider)
    build_id = store.start_build(cid, "t", {})
    try:
        layout = build_layout(loaded.campaign, cid)
        provider.build(layout, build_id, lambda items: store.record_objects(cid, build_id, items))
        yield provider, layout
    finally:
        store.mark_removed(provider.teardown())
        provider.close()
    assert store.live_objects(cid) == []
