"""Delay-node processes of the local provider: find the binary, wait for READY, stop with a report.

Each delay node is `vnb-probe delay` running in its own namespace (see layout/link_emulation.py); it is
spawned like every other process of ours (recorded with pid + start time before anything else can
happen), so teardown and `vnetbench clean` remove it like the rest.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import sys
import time
from typing import Any

from vnetbench.providers.base import ProviderError
from vnetbench.providers.local.procs import LocalToolProcess

READY_TIMEOUT_S = 5.0
STOP_TIMEOUT_S = 2.0


def binary() -> str | None:
    """vnb-probe next to this Python (the package ships it), else on PATH."""
    here = os.path.join(os.path.dirname(sys.executable), "vnb-probe")
    if os.path.isfile(here) and os.access(here, os.X_OK):
        return here
    return shutil.which("vnb-probe")


def wait_ready(proc: LocalToolProcess, link: str) -> None:
    """Return once the node has bound its sockets (READY on stderr); raise if it died."""
    deadline = time.monotonic() + READY_TIMEOUT_S
    while time.monotonic() < deadline:
        if "READY" in proc.output()[1]:
            return
        if proc.poll() is not None:
            break
        time.sleep(0.005)
    err = proc.output()[1].strip().splitlines()
    raise ProviderError(f"delay node of link {link} did not start: {err[-1] if err else 'no output'}")


def terminate(proc: LocalToolProcess) -> None:
    """Ask the node to stop and print its report (SIGTERM); `report` collects it."""
    if proc.poll() is None:
        with contextlib.suppress(ProcessLookupError):
            os.kill(proc.pid, signal.SIGTERM)


def report(proc: LocalToolProcess, deadline: float) -> dict[str, Any] | None:
    """Wait until `deadline` (time.monotonic) for the node to exit; its JSON report, or None."""
    while proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.005)
    out = proc.output()[0].strip().splitlines()
    try:
        return json.loads(out[-1]) if out else None
    except json.JSONDecodeError:
        return None
