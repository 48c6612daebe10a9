"""Real sshd servers in network namespaces (sshnet.py), shared by the SSH provider's tests."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.helpers.integration.sshnet import SshNet, skip_reason

SKIP = skip_reason()
pytestmark = pytest.mark.root


@pytest.fixture(scope="module")
def sshnet(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SshNet]:
    if SKIP:
        pytest.skip(SKIP)
    net = SshNet(Path(tmp_path_factory.mktemp("sshnet")), count=4, jump_hosts=1).start()
    try:
        yield net
    finally:
        net.close()
    assert not net.processes_in_our_namespaces()
