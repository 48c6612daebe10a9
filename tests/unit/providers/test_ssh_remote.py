"""The fixed remote scripts, run here with a real /bin/sh: argv survives quoting, nothing is evaluated,
the fifo gate holds a tool until it is released, kill touches only the pids it is given."""

from __future__ import annotations

import os
import shlex
import subprocess
import time
from pathlib import Path

import pytest

from tests.helpers.processes import command_lines
from vnetbench.providers.ssh import remote

HOSTILE = [
    "$(touch {m})",
    "`touch {m}`",
    "; touch {m}",
    "' ; touch {m} ; '",
    '" && touch {m} && "',
    "a\nb touch {m}",
    "--",
    "-c",
    "*",
    "$HOME",
    "",
]


def run_remote(command: str, **kwargs: object) -> subprocess.CompletedProcess[str]:
    """What sshd does with a command: hand it to the login shell's -c."""
    return subprocess.run(["sh", "-c", command], capture_output=True, text=True, timeout=10, **kwargs)  # type: ignore[call-overload]


def test_spawn_passes_every_argument_through_unevaluated(tmp_path: Path) -> None:
    marker = tmp_path / "pwned"
    args = [h.format(m=marker) for h in HOSTILE]
    command = remote.spawn_command(["printf", "[%s]\\n", *args], None, sudo=False)
    assert shlex.split(command)[:2] == ["sh", "-c"]
    done = run_remote(command, cwd=tmp_path)
    lines = done.stdout.split("\n")
    assert lines[0].startswith("vnb-pid ") and lines[1].startswith("vnb-start ")
    assert lines[0].split()[2].isdigit()  # the start time that makes the pid unambiguous
    assert done.stdout.split("\n", 2)[2] == "".join(f"[{a}]\n" for a in args)
    assert int(lines[1].split()[1]) > 1_600_000_000 * 10**9  # date +%s%N: UTC ns
    assert not marker.exists()


@pytest.mark.parametrize("held_polls", [0.2, 3.5])
def test_the_fifo_gate_holds_the_tool_until_release(tmp_path: Path, held_polls: float) -> None:
    """Held a fraction of a poll or several: 'vnb-wait' lines (skipped by the provider) come only
    before 'vnb-start', then the tool's own output, exactly once."""
    fifo = tmp_path / "gate-1"
    proc = subprocess.Popen(
        ["sh", "-c", remote.spawn_command(["echo", "ran"], str(fifo), sudo=False)],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        assert proc.stdout.readline().startswith("vnb-pid ")
        time.sleep(held_polls * remote.GATE_POLL_S)
        assert proc.poll() is None  # waiting at the gate
        released = time.time_ns()
        assert run_remote(remote.sh(remote.RELEASE, str(fifo))).returncode == 0
        rest = proc.communicate(timeout=10)[0].splitlines()
        start = next(i for i, line in enumerate(rest) if line.startswith("vnb-start "))
        assert set(rest[:start]) <= {"vnb-wait"} and len(rest[:start]) >= int(held_polls) - 1
        assert rest[start + 1 :] == ["ran"]
        assert abs(int(rest[start].split()[1]) - released) < 2 * 10**9
        assert not fifo.exists()  # the wrapper removes its fifo
    finally:
        proc.kill()
        proc.wait()


def test_kill_signals_only_the_given_pids() -> None:
    victim = subprocess.Popen(["sleep", "30"])
    bystander = subprocess.Popen(["sleep", "30"])
    try:
        stat = open(f"/proc/{bystander.pid}/stat").read()  # noqa: SIM115
        start = int(stat.rsplit(")", 1)[1].split()[19])
        # a recorded start time that does not match: the pid was recycled, leave it alone
        assert run_remote(remote.kill_command([(bystander.pid, start + 1)])).returncode == 0
        assert run_remote(remote.kill_command([(victim.pid, None)])).returncode == 0
        assert victim.wait(5) == -9
        time.sleep(0.1)
        assert bystander.poll() is None
        assert run_remote(remote.kill_command([(bystander.pid, start)])).returncode == 0
        assert bystander.wait(5) == -9
    finally:
        for p in (victim, bystander):
            p.kill()
            p.wait()


def test_kill_refuses_anything_but_integers() -> None:
    with pytest.raises(ValueError):
        remote.kill_command([("1; reboot", None)])  # type: ignore[list-item]


def test_rmrundir_removes_only_a_vnb_directory(tmp_path: Path) -> None:
    ours, other = tmp_path / "vnb-abc-1", tmp_path / "data"
    ours.mkdir()
    other.mkdir()
    assert run_remote(remote.sh(remote.RMRUNDIR, str(ours))).returncode == 0
    assert run_remote(remote.sh(remote.RMRUNDIR, str(other))).returncode == 64
    assert not ours.exists() and other.exists()


def test_sudo_wraps_the_same_quoted_argv() -> None:
    argv = shlex.split(remote.spawn_command(["iperf3", "-c", "10.0.0.1"], None, sudo=True))
    assert argv[:5] == ["sudo", "-n", "--", "sh", "-c"]
    assert argv[-3:] == ["iperf3", "-c", "10.0.0.1"]


def test_the_ssh_provider_refuses_what_it_cannot_emulate() -> None:
    import yaml

    from vnetbench.layout import build_layout
    from vnetbench.providers.ssh.provider import SshProvider
    from vnetbench.spec.loader import parse_spec

    spec = {
        "name": "c",
        "topology": {
            "nodes": [{"name": "a", "cpu": 0.5}, {"name": "b"}, {"name": "z"}],
            "links": [
                {"endpoints": ["a", "b"], "delay": "5ms"},
                {"endpoints": ["b", "z"], "rate": "1gbit"},
                {"endpoints": ["a", "z"], "delay_cdf": [[0, "1ms"], [1, "2ms"]]},
            ],
        },
        "measurements": [{"name": "rtt", "kind": "rtt"}],
        "patterns": [{"kind": "pairs", "pairs": [["a", "b"]], "measurements": ["rtt"]}],
        "inventory": {
            "hosts": [{"name": "a", "address": "192.0.2.1"}, {"name": "b", "address": "192.0.2.2"}]
        },
    }
    campaign = parse_spec(yaml.safe_dump(spec)).campaign
    assert campaign.inventory is not None
    provider = SshProvider("t", campaign.inventory)
    try:
        problems = provider.preflight(build_layout(campaign, "t"))
    finally:
        provider.loop.stop()
    assert any("node 'z' has no inventory host" in p for p in problems)
    assert any("link a-b: delay cannot be emulated" in p for p in problems)
    # an empirical delay distribution is emulated as much as `delay` is: refused too, never ignored
    assert any("link a-z: delay_cdf cannot be emulated" in p for p in problems)
    assert any("CPU quotas" in p for p in problems)
    assert not any("b-z" in p for p in problems)  # a rate is kept as the nominal capacity


def test_the_hosts_run_their_own_copy_of_a_tool_not_this_machines_path() -> None:
    """vnb-probe's driver names the binary in this virtualenv; a host runs its inventory `tools`
    path, else the name on its login PATH (what `build` checked is what runs)."""
    from vnetbench.providers.ssh.provider import SshProvider
    from vnetbench.spec.inventory import parse_inventory_data

    inventory = parse_inventory_data(
        {
            "hosts": [
                {"name": "a", "address": "192.0.2.1", "tools": {"vnb-probe": "/opt/vnb/vnb-probe"}},
                {"name": "b", "address": "192.0.2.2"},
            ]
        }
    )
    provider = SshProvider("t", inventory, tools=("ping", "vnb-probe"))
    try:
        a, b = provider.hosts["a"], provider.hosts["b"]
        local = "/home/me/vnetbench/.venv/bin/vnb-probe"
        assert provider._host_binary(a, local) == "/opt/vnb/vnb-probe"
        assert provider._host_binary(b, local) == "vnb-probe"
        assert provider._host_binary(b, "ping") == "ping"
        assert provider._host_binary(b, "/usr/sbin/other") == "/usr/sbin/other"  # not a campaign tool
    finally:
        provider.loop.stop()


def test_releasing_a_gate_whose_tool_is_gone_leaves_no_writer(tmp_path: Path) -> None:
    """A tool killed at its gate never opens its fifo for reading; the release's writer must give up
    rather than block in open() for ever (an orphan on the host: a CI run's leftover check found
    one after an interrupted SSH campaign, 2026-11-27)."""
    fifo = tmp_path / "gate-1"
    os.mkfifo(fifo, 0o600)
    done = run_remote(remote.sh(remote.RELEASE, str(fifo)))  # within run_remote's 10 s
    assert done.returncode == 0  # `wait` returned: every writer has ended
    assert [f"{pid}: {line}" for pid, line in command_lines().items() if str(fifo) in line] == []


def test_a_gated_wrapper_whose_session_has_gone_exits_and_removes_its_fifo(tmp_path: Path) -> None:
    """An interrupt can cut a spawn off before its pid reaches the controller: no kill then reaches
    the wrapper. When the session's end of its output closes (here: the pipe's reader exits after
    the pid line), the wrapper's next 'vnb-wait' fails and it ends, instead of waiting at the gate
    for ever (a CI run under load found one left, ppid 1, 2026-11-29)."""
    fifo = tmp_path / "gate-1"
    command = remote.spawn_command(["echo", "never"], str(fifo), sudo=False)
    proc = subprocess.Popen(["sh", "-c", command], stdout=subprocess.PIPE)
    try:
        assert proc.stdout is not None
        assert proc.stdout.readline().startswith(b"vnb-pid ")
        proc.stdout.close()  # the session has gone
        assert proc.wait(timeout=10 * remote.GATE_POLL_S) == 125
    finally:
        proc.kill()
        proc.wait()
    assert not fifo.exists()
    assert [f"{pid}: {line}" for pid, line in command_lines().items() if str(fifo) in line] == []
