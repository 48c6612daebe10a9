"""A spawn an interrupt stopped waiting for (SIGINT while the SSH provider waited for the remote
pid) leaves the start running on the provider's loop; the process it starts is recorded nowhere, so
teardown must still find and kill it (a campaign interrupted mid-spawn once left one behind, CI
2026-11-27)."""

from __future__ import annotations

import asyncio
from pathlib import Path

from tests.helpers.integration.ssh_provider import ssh_provider
from tests.helpers.integration.sshnet import SshNet, leftovers
from vnetbench.providers.ssh.procs import SshToolProcess


def test_a_process_whose_start_was_still_under_way_is_killed_at_teardown(
    sshnet: SshNet, tmp_path: Path
) -> None:
    a, b = sshnet.hosts[1], sshnet.hosts[2]
    with ssh_provider(sshnet, tmp_path, a, b) as (provider, _):
        host = provider.node_host["a"]
        proc = SshToolProcess(
            provider.loop, provider.pool, host, "a", ["sleep", "600"], provider.hosts[host].sudo
        )
        provider._procs.append(proc)  # as spawn() does before it waits for the start
        # what spawn's wait leaves behind when an interrupt ends it: the start, still running
        started = asyncio.run_coroutine_threadsafe(proc.start(None), provider.loop.loop)
        assert not proc.pid  # teardown begins before the remote pid is known
    assert started.done() and proc.pid > 0 and proc.killed
    assert leftovers(sshnet) == []
