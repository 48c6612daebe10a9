"""The test harness itself: two SshNets on one machine (two test sessions) must not break each other."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from tests.helpers.integration import sshnet as sshnet_module
from tests.helpers.integration.sshnet import PORT, SshNet, skip_reason

pytestmark = pytest.mark.root


def ssh_true(net: SshNet) -> subprocess.CompletedProcess[str]:
    host = net.hosts[0]
    argv = ["ssh", "-i", str(net.user_key), "-p", str(PORT), "-o", f"UserKnownHostsFile={net.known_hosts}"]
    argv += ["-o", "BatchMode=yes", "-o", "ConnectTimeout=5", f"root@{host.ssh_address}", "echo", "ok"]
    return subprocess.run(argv, capture_output=True, text=True, timeout=20)


def test_closing_one_net_leaves_the_other_sshd_working(tmp_path: Path) -> None:
    """The first net may be the one that made /run/sshd (sshd chroots there for every connection);
    closing it must not take it from the second net's sshd."""
    if reason := skip_reason():
        pytest.skip(reason)
    first = SshNet(tmp_path / "first", count=1, jump_hosts=0).start()
    try:
        second = SshNet(tmp_path / "second", count=1, jump_hosts=0).start()
    except BaseException:
        first.close()
        raise
    try:
        assert ssh_true(second).stdout.strip() == "ok"
        first.close()
        assert os.path.isdir(sshnet_module.PRIVSEP_DIR)
        done = ssh_true(second)
        assert done.stdout.strip() == "ok", done.stderr + (Path(second.root) / "h0_sshd.log").read_text()
    finally:
        first.close()
        second.close()
    assert not first.processes_in_our_namespaces() and not second.processes_in_our_namespaces()
    assert not first.namespaces and not second.namespaces and not second.root_links


def test_close_keeps_a_privsep_dir_it_made(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Whichever net made the directory, it stays: another session's sshd cannot be seen from here."""
    if reason := skip_reason():
        pytest.skip(reason)
    privsep = tmp_path / "privsep"
    monkeypatch.setattr(sshnet_module, "PRIVSEP_DIR", str(privsep))
    net = SshNet(tmp_path / "net", count=1, jump_hosts=0)
    net._network()
    net._keys()
    net.start_sshd(net.hosts[0])  # this sshd exits (its real directory is compiled in): no matter
    net.close()
    assert privsep.is_dir()
