"""Fixtures for the local provider's integration tests: real namespaces, real tools, root.

The session check at the end asserts that nothing of this session's test campaigns, and no child
process or namespace fd of ours, is left (tests/helpers/integration/topology.py).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.helpers.integration.requirements import missing
from tests.helpers.integration.topology import Built, built_topology, leftovers, need

SKIP = missing()
pytestmark = pytest.mark.root


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if SKIP is None:
        return
    here = str(Path(__file__).parent)
    for item in items:
        if str(item.fspath).startswith(here):
            item.add_marker(pytest.mark.skip(reason=SKIP))


@pytest.fixture(scope="module")
def every_link(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Built]:
    need("ovs-vswitchd", "ovsdb-server", "ovs-vsctl", "ovsdb-tool", "iperf3", "ping")
    with built_topology(tmp_path_factory.mktemp("every"), "every_link.yaml", ("iperf3", "ping")) as built:
        yield built


@pytest.fixture(scope="session", autouse=True)
def nothing_left_behind() -> Iterator[None]:
    yield
    if SKIP is None:
        left = leftovers()
        assert not left, f"the integration tests left these behind: {left}"
