"""End-to-end tests: the real `vnetbench` CLI in a subprocess, real namespaces, iperf3 and ping, root.

Each test gives the CLI its own --db in tmp_path and, afterwards, checks that nothing of its
campaigns is left on the machine (namespaces, links, cgroups, runtime directories, processes):
tests/helpers/integration/cli.py.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers.integration.requirements import missing

TOOLS = ("iperf3", "ping")


SKIP = missing(TOOLS)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if SKIP is None:
        return
    here = str(Path(__file__).parent)
    for item in items:
        if str(item.fspath).startswith(here):
            item.add_marker(pytest.mark.skip(reason=SKIP))
