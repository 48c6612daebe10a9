"""Run campaigns on existing hosts over SSH (see docs/ssh-provider.md)."""

from __future__ import annotations

from vnetbench.kinds import driver_for
from vnetbench.providers.base import ProviderError
from vnetbench.providers.ssh.provider import SshProvider
from vnetbench.spec.loader import parse_spec
from vnetbench.store.db import Store


def provider_for_campaign(campaign_id: str, store: Store) -> SshProvider:
    """The SSH provider for a stored campaign: its inventory is part of the stored spec."""
    row = store.campaign(campaign_id)
    assert row is not None
    spec = parse_spec(row["spec_text"], row["spec_source"], stored=True)
    if spec.campaign.inventory is None:
        raise ProviderError(f"campaign {campaign_id} has no inventory: the SSH provider needs one")
    tools = sorted({driver_for(m.kind).tool for m in spec.campaign.measurements})
    return SshProvider(campaign_id, spec.campaign.inventory, store, tools)


__all__ = ["SshProvider", "provider_for_campaign"]
