"""The machine's processes as /proc shows them, for tests that check nothing of theirs is left."""

from __future__ import annotations

import os


def command_line(pid: int) -> str | None:
    """A process's argv joined by spaces, or None once it has gone."""
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return f.read().replace(b"\0", b" ").decode(errors="replace").strip()
    except OSError:
        return None


def command_lines() -> dict[int, str]:
    """Every process's command line by pid (kernel threads: empty)."""
    lines = {}
    for entry in filter(str.isdigit, os.listdir("/proc")):
        if (line := command_line(int(entry))) is not None:
            lines[int(entry)] = line
    return lines
