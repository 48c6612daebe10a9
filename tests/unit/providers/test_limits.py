"""Open-descriptor limits for large builds (providers/local/limits.py), in a child process whose
limits the test may lower for good."""

from __future__ import annotations

import json
import subprocess
import sys

CHILD = """
import json, resource, sys
from vnetbench.providers.local import limits
soft, hard = {soft}, {hard}
resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
before = resource.getrlimit(resource.RLIMIT_NOFILE)
raised = limits.raise_descriptor_limit({namespaces})
print(json.dumps({{"problem": limits.descriptor_problem({namespaces}), "raised": raised,
                  "after": resource.getrlimit(resource.RLIMIT_NOFILE), "before": before}}))
"""


def _child(soft: int, hard: int, namespaces: int) -> dict:
    code = CHILD.format(soft=soft, hard=hard, namespaces=namespaces)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return json.loads(out.stdout)


def test_the_soft_limit_is_raised_to_the_hard_one_when_a_build_needs_more() -> None:
    got = _child(1024, 4096, 1011)  # the 1,000-node campaign: ~2,500 descriptors at its peak
    assert got["problem"] is None
    assert got["raised"] == [1024, 4096] and got["after"] == [4096, 4096]


def test_a_small_build_leaves_the_limit_alone() -> None:
    got = _child(1024, 4096, 10)
    assert got["raised"] == [1024, 1024] and got["after"] == [1024, 4096]


def test_a_hard_limit_too_low_is_a_problem_naming_the_fix() -> None:
    got = _child(512, 1024, 1011)
    problem = got["problem"]
    assert "1011 network namespaces need about" in problem and "hard limit of 1024" in problem
    assert "RLIMIT_NOFILE" in problem and "ulimit -Hn" in problem and "LimitNOFILE=" in problem
