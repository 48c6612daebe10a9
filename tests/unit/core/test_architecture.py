"""The architecture's rules that the layers contract (lint-imports) does not see: short functions,
test modules that import only helpers, and the measurement kinds and observers as interfaces."""

from __future__ import annotations

import ast
import typing
from pathlib import Path

from vnetbench.kinds import KINDS
from vnetbench.observers import Observer
from vnetbench.spec.models import Measurement
from vnetbench.telemetry.observer import TelemetryObserver

ROOT = Path(__file__).resolve().parents[3]
MAX_FUNCTION_LINES = 80


def _modules(where: Path) -> list[tuple[Path, ast.Module]]:
    return [(p, ast.parse(p.read_text(), str(p))) for p in sorted(where.rglob("*.py"))]


def _imported(tree: ast.Module) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            names |= {base} if node.level == 0 else {"." * node.level + base}
    return names


def test_no_function_in_src_is_longer_than_80_lines() -> None:
    long = [
        f"{path.relative_to(ROOT)}:{node.lineno} {node.name} ({node.end_lineno - node.lineno + 1} lines)"
        for path, tree in _modules(ROOT / "src")
        for node in ast.walk(tree)
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
        and node.end_lineno is not None
        and node.end_lineno - node.lineno + 1 > MAX_FUNCTION_LINES
    ]
    assert long == [], "split these into named steps:\n" + "\n".join(long)


def test_test_modules_import_helpers_not_other_tests() -> None:
    wrong = []
    for path, tree in _modules(ROOT / "tests"):
        rel = path.relative_to(ROOT)
        for name in _imported(tree):
            if name.startswith(".") or (name.startswith("tests.") and not name.startswith("tests.helpers")):
                wrong.append(f"{rel}: {name}")
            elif rel.parts[1] == "unit" and name.startswith("tests.helpers.integration"):
                wrong.append(f"{rel}: {name} (an integration helper in a unit test)")
    assert wrong == [], "import shared code from tests/helpers/ instead:\n" + "\n".join(wrong)


def test_every_measurement_kind_of_the_spec_has_a_kind_module() -> None:
    members = typing.get_args(typing.get_args(Measurement)[0])
    spec_kinds = {typing.get_args(m.model_fields["kind"].annotation)[0] for m in members}
    assert spec_kinds == set(KINDS)
    for name, kind in KINDS.items():
        assert kind.name == name and kind.spec in members and kind.driver.tool


def test_telemetry_is_an_observer_of_the_runner() -> None:
    assert issubclass(TelemetryObserver, Observer)
