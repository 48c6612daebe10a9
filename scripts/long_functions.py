#!/usr/bin/env python3
"""List the functions in src/ longer than a limit (default 80 lines): `python scripts/long_functions.py [N]`.

Exits 1 when there is one, so `make lint` can run it. A function's length is from its `def` line
(decorators excluded) to its last line, nested functions included.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1] / "src"


def long_functions(limit: int) -> list[tuple[int, str]]:
    found = []
    for path in sorted(ROOT.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                length = (node.end_lineno or node.lineno) - node.lineno + 1
                if length > limit:
                    found.append((length, f"{path.relative_to(ROOT.parent)}:{node.lineno} {node.name}"))
    return sorted(found, reverse=True)


def main() -> int:
    limit = int(sys.argv[1]) if len(sys.argv) > 1 else 80
    found = long_functions(limit)
    for length, where in found:
        print(f"{length:4d} lines  {where}")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
