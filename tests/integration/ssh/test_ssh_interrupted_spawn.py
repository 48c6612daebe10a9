"""A spawn an interrupt stopped waiting for (SIGINT while the SSH provider waited for the remote
pid) leaves the start running on the provider's loop; the process it starts is recorded nowhere, so
teardown must still find and kill it (a campaign interrupted mid-spawn once left one behind, CI
2026-11-27)."""

from __future__ import annotations

import asyncio
import threading
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
        # what spawn's wait leaves behind when an interrupt ends it: the start, still running. The
        # provider's loop is held until the pid is checked: on a loaded machine the start could
        # otherwise finish first (a CI run found the pid already there), and the test would not
        # test a start under way.
        hold = threading.Event()
        provider.loop.loop.call_soon_threadsafe(hold.wait, 30)
        started = asyncio.run_coroutine_threadsafe(proc.start(None), provider.loop.loop)
        assert not proc.pid  # teardown begins before the remote pid is known
        hold.set()
    assert started.done() and proc.pid > 0 and proc.killed
    assert leftovers(sshnet) == []


def test_a_gate_released_after_its_tool_was_killed_leaves_nothing_behind(
    sshnet: SshNet, tmp_path: Path
) -> None:
    """An interrupt between a step's spawns and its start barrier: teardown kills a gated tool while
    the gate's release is on its way. The release's writer then has no reader: it must give up, not
    stay blocked for ever on the host (a CI run found such a process left after an interrupted and
    resumed SSH campaign, 2026-11-27)."""
    a, b = sshnet.hosts[1], sshnet.hosts[2]
    with ssh_provider(sshnet, tmp_path, a, b) as (provider, _):
        gate = provider.gate()
        proc = provider.spawn("a", ["sleep", "600"], gate)
        proc.kill()  # teardown's kill won the race: the tool never reads its fifo
        assert proc.poll() is not None
        gate.release()  # returns: the writer gave up
    assert leftovers(sshnet) == []
