"""Pick a provider by the name stored with the campaign."""

from __future__ import annotations

from vnetbench.providers.base import Provider, ProviderError
from vnetbench.providers.local import LocalProvider
from vnetbench.providers.ssh import provider_for_campaign
from vnetbench.store.db import Store


def make_provider(name: str, campaign_id: str, store: Store) -> Provider:
    """The provider stored with a campaign: `local` (namespaces here) or `ssh` (its inventory's hosts)."""
    if name == "local":
        return LocalProvider(campaign_id, store.location)
    if name == "ssh":
        return provider_for_campaign(campaign_id, store)
    raise ProviderError(f"unknown provider '{name}'; available: local, ssh")
