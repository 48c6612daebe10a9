"""Pick a provider by the name stored with the campaign."""

from __future__ import annotations

from typing import Any

from vnetbench.providers.base import Provider, ProviderError


def make_provider(name: str, campaign_id: str, store: Any) -> Provider:
    if name == "local":
        from vnetbench.providers.local import LocalProvider

        return LocalProvider(campaign_id, store.location)
    if name == "ssh":
        from vnetbench.providers.ssh import provider_for_campaign

        return provider_for_campaign(campaign_id, store)
    raise ProviderError(f"unknown provider '{name}'; available: local, ssh")
