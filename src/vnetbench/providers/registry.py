"""Pick a provider by the name stored with the campaign."""

from __future__ import annotations

from collections.abc import Sequence

from vnetbench.layout import Layout
from vnetbench.providers.base import Provider, ProviderError
from vnetbench.providers.local import LocalProvider
from vnetbench.providers.ssh import provider_for_campaign
from vnetbench.store.db import Store

PROVISIONAL_ID = "00000000"  # namespaces' names need a campaign id; none is made before it is stored


def make_provider(name: str, campaign_id: str, store: Store) -> Provider:
    """The provider stored with a campaign: `local` (namespaces here) or `ssh` (its inventory's hosts)."""
    if name == "local":
        return LocalProvider(campaign_id, store.location)
    if name == "ssh":
        return provider_for_campaign(campaign_id, store)
    raise ProviderError(f"unknown provider '{name}'; available: local, ssh")


def local_build_problems(layouts: Sequence[Layout]) -> list[str]:
    """What would stop the local provider building any of these topologies (a plan's) on this machine
    (missing root, kernel features, tools), each with its fix: found before a campaign is stored or
    anything is built, so `validate` can say it and `run` refuses without leaving a failed campaign."""
    provider = LocalProvider(PROVISIONAL_ID)
    out: list[str] = []
    for layout in layouts:
        for problem in provider.preflight(layout):
            if problem not in out:
                out.append(problem)
    return out
