"""The `vnetbench` CLI in a subprocess, for unit tests of commands that refuse to start or answer at once."""

from __future__ import annotations

import subprocess
import sys


def cli_quick(
    *args: str, timeout: float = 120, extra_env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """`python -m vnetbench.cli ARGS` with this interpreter's path, a bare PATH and a wide terminal
    (errors on one line), for commands that refuse to start or answer at once; `extra_env` added."""
    env = {"PATH": "/usr/bin:/bin", "COLUMNS": "200", "PYTHONPATH": ":".join(sys.path), **(extra_env or {})}
    return subprocess.run(
        [sys.executable, "-m", "vnetbench.cli", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=env,
    )
