"""Start and resume campaigns: the glue between the spec, the plan, the store, a provider and the runner.

The campaign registers the runner's observers: the standard ones (telemetry) and any the caller adds
(a live dashboard, a script's hook).
"""

from __future__ import annotations

import os
import platform
import secrets
import subprocess
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from rich.console import Console

from vnetbench import __version__
from vnetbench.kinds import driver_for
from vnetbench.observers import Observer, RunSummary
from vnetbench.plan import Plan, make_plan
from vnetbench.providers.base import Provider
from vnetbench.run.runner import Runner, standard_observers
from vnetbench.spec.loader import LoadedSpec, parse_spec
from vnetbench.store.db import Store


@dataclass
class Started:
    campaign_id: str
    plan: Plan


def create_campaign(
    spec: LoadedSpec,
    store: Store,
    provider: str = "local",
    seed: int | None = None,
    check: Callable[[Plan], None] | None = None,
) -> Started:
    """Plan the campaign (raises SpecInvalid on a bad spec) and record it; nothing is built yet.
    `check(plan)` runs before anything is stored: what it raises leaves no campaign behind."""
    campaign_id = secrets.token_hex(4)
    seed = seed if seed is not None else spec.campaign.schedule.seed
    seed = seed if seed is not None else secrets.randbits(31)
    plan = make_plan(spec, campaign_id, seed)
    if check is not None:
        check(plan)
    kinds = {s.kind for s in plan.steps}
    # flows that run beside a pattern's steps use their own tool too
    kinds |= {v.measurement(name).kind for v in plan.variants for p in v.patterns for name in p.background}
    store.create_campaign(
        id=campaign_id,
        name=spec.campaign.name,
        status="created",
        provider=provider,
        spec_text=spec.text,
        spec_sha256=spec.sha256,
        spec_source=spec.source,
        seed=seed,
        environment=environment(),
        tool_versions=tool_versions(kinds),
    )
    return Started(campaign_id, plan)


def load_plan(store: Store, campaign_id: str) -> Plan:
    """Rebuild the exact plan of a stored campaign (same spec text, id and seed give the same keys)."""
    row = store.campaign(campaign_id)
    if row is None:
        raise KeyError(campaign_id)
    spec = parse_spec(row["spec_text"], row["spec_source"], stored=True)
    return make_plan(spec, row["id"], row["seed"])


def run_campaign(
    store: Store,
    campaign_id: str,
    provider: Provider,
    console: Console | None = None,
    plan: Plan | None = None,
    observers: Sequence[Observer] = (),
) -> RunSummary:
    """Run (or continue) a stored campaign on a provider; `observers` are told of it beside telemetry."""
    row = store.campaign(campaign_id)
    assert row is not None
    plan = plan or load_plan(store, campaign_id)
    registered = [*standard_observers(provider, store, campaign_id), *observers]
    runner = Runner(store, campaign_id, plan, provider, row["tool_versions"], console, observers=registered)
    return runner.run(row["created_utc_ns"])


def environment() -> dict[str, Any]:
    """This machine as recorded with a campaign (kernel, CPU, Python, vnetbench version)."""
    uname = platform.uname()
    return {
        "kernel": uname.release,
        "kernel_version": uname.version,
        "machine": uname.machine,
        "hostname": uname.node,
        "cpu_count": os.cpu_count(),
        "cpu_model": _cpu_model(),
        "python": platform.python_version(),
        "vnetbench": __version__,
        # New namespaces inherit it: what a TCP measurement without `congestion:` uses locally.
        "tcp_congestion_control": _read_sysctl("/proc/sys/net/ipv4/tcp_congestion_control"),
    }


def _read_sysctl(path: str) -> str | None:
    try:
        with open(path) as f:
            return f.read().strip() or None
    except OSError:
        return None


def tool_versions(kinds: set[str]) -> dict[str, str]:
    """The version of every tool the measurement kinds use, as the tools report it."""
    versions: dict[str, str] = {}
    for kind in sorted(kinds):
        driver = driver_for(kind)
        if driver.tool in versions:
            continue
        try:
            out = subprocess.run(driver.version_command(), capture_output=True, text=True, timeout=10)
            versions[driver.tool] = driver.parse_version(out.stdout + out.stderr)
        except (OSError, subprocess.SubprocessError) as err:
            versions[driver.tool] = f"unavailable ({err})"
    return versions


def _cpu_model() -> str:
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor()
