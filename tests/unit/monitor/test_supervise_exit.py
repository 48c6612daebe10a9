"""The exit code of a monitor of several specs is its children's, ranked for the systemd unit
(Restart=on-failure, RestartPreventExitStatus=1 2 4): a child's crash (3, or killed by a signal) must
reach the unit so it restarts the monitor; before, the highest code won and a child taken over (4)
hid another's crash (3), and the unit did not restart it."""

from __future__ import annotations

import signal
import subprocess
import sys

import pytest

from vnetbench.cli.monitor import CRASHED, _supervise


def _child(code: int) -> subprocess.Popen[bytes]:
    """A real process that exits with `code` (negative: killed by that signal)."""
    if code < 0:
        return subprocess.Popen([sys.executable, "-c", f"import os; os.kill(os.getpid(), {-code})"])
    return subprocess.Popen([sys.executable, "-c", f"import sys; sys.exit({code})"])


@pytest.mark.parametrize(
    ("codes", "expected"),
    [
        ([4, 3], CRASHED),  # taken over + crashed: restart (was 4: no restart)
        ([3, 4], CRASHED),
        ([0, -int(signal.SIGKILL)], CRASHED),  # killed: not a clean stop
        ([1, 4], 4),  # alert firing + taken over: neither is restarted
        ([0, 1], 1),
        ([0, 0], 0),
    ],
)
def test_a_crash_outranks_every_other_exit(codes: list[int], expected: int) -> None:
    assert CRASHED == 3
    assert _supervise([_child(c) for c in codes]) == expected
