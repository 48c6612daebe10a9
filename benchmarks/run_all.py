#!/usr/bin/env python3
"""Run every benchmark in benchmarks/ (each folder with a run.py or run.sh), or only those named.

Each benchmark compares its methods side by side in one run and rewrites its own results and
figure in its folder; this script only runs them in turn and says which failed.

Usage (root):  .venv/bin/python benchmarks/run_all.py [NAME ...]     e.g. build_teardown
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent


def main(names: list[str]) -> int:
    scripts = {p.parent.name: p for p in [*HERE.glob("*/run.sh"), *HERE.glob("*/run.py")]}
    found = sorted(scripts)
    unknown = [n for n in names if n not in found]
    if unknown:
        print(f"error: no benchmark {', '.join(unknown)}; known: {', '.join(found)}", file=sys.stderr)
        return 2
    failed = []
    for name in names or found:
        print(f"== {name}", flush=True)
        script = scripts[name]
        argv = [sys.executable, str(script)] if script.suffix == ".py" else ["bash", str(script)]
        if subprocess.run(argv).returncode != 0:
            failed.append(name)
    if failed:
        print(f"failed: {', '.join(failed)}", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
