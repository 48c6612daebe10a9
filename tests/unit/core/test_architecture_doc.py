"""docs/architecture.md's statements that are rules of the code, kept true: its layer list is
pyproject.toml's contract, its package table and interfaces name what the code has, only the store
speaks SQL, the runner, plan and telemetry ask kinds instead of naming them, stored names carry their
unit, every measurement keeps its provenance, and the CLI starts without the run machinery."""

from __future__ import annotations

import ast
import inspect
import re
import subprocess
import sys
import tomllib
from pathlib import Path

from sqlalchemy import BigInteger

from vnetbench.drivers.base import Driver
from vnetbench.kinds import KINDS
from vnetbench.kinds.base import Kind
from vnetbench.observers import Observer
from vnetbench.providers.base import Provider
from vnetbench.store import schema
from vnetbench.store.db import Store

ROOT = Path(__file__).resolve().parents[3]
SRC = ROOT / "src" / "vnetbench"
DOC = (ROOT / "docs" / "architecture.md").read_text()


def _section(heading: str) -> str:
    """The text under a markdown heading, up to the next heading of any level."""
    match = re.search(rf"^#+ {re.escape(heading)}\n(.*?)(?=^#+ |\Z)", DOC, re.M | re.S)
    assert match, f"docs/architecture.md: no heading '{heading}'"
    return match.group(1)


def _code_names(text: str) -> set[str]:
    """Every identifier at the start of an inline code span: `spawn(node, argv)` -> spawn."""
    return {m.group(1) for m in re.finditer(r"`(?:\w+\.)*(\w+)", text)}


def _public(cls: type) -> set[str]:
    """Attributes the class (not a base, not object) defines or annotates, without _private ones."""
    names = set(vars(cls)) | set(getattr(cls, "__annotations__", {}))
    return {n for n in names if not n.startswith("_")}


def test_the_doc_s_layers_are_the_import_linter_contract() -> None:
    block = re.search(r"```\n(cli\n.*?)```", _section("The layers contract"), re.S)
    assert block, "docs/architecture.md: the layers block (```, cli …) is gone"
    shown = [[p.strip() for p in line.split("|")] for line in block.group(1).splitlines()]
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())
    layers = next(c for c in config["tool"]["importlinter"]["contracts"] if c["type"] == "layers")["layers"]
    contract = [[p.strip().removeprefix("vnetbench.") for p in layer.split("|")] for layer in layers]
    assert shown == contract


def test_the_package_table_names_every_package_and_key_names_that_exist() -> None:
    rows = re.findall(r"^\| `(\w+/|\w+\.py)` \| (.*) \| (.*) \|$", _section("What each package owns"), re.M)
    packages = {f"{p.name}/" for p in SRC.iterdir() if (p / "__init__.py").exists()}
    modules = {p.name for p in SRC.glob("*.py") if p.name not in ("__init__.py", "__main__.py")}
    assert {r[0] for r in rows} == packages | modules
    missing = []
    for where, _owns, keys in rows:
        path = SRC / where.rstrip("/")
        files = [path] if path.suffix == ".py" else sorted(path.rglob("*.py"))
        defined = {
            getattr(node, "name", None) or getattr(node, "id", None)
            for f in files
            for node in ast.walk(ast.parse(f.read_text()))
            if isinstance(node, ast.FunctionDef | ast.ClassDef)
            or (isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store))
        }
        for key in re.findall(r"`([^`]+)`", keys):
            name = re.split(r"[(:]", key)[-1 if ":" in key else 0].split(".")[-1]
            if name not in defined:
                missing.append(f"{where}: {key}")
    assert missing == [], "key names the package does not define:\n" + "\n".join(missing)


def test_the_kind_and_observer_interfaces_are_the_code_s() -> None:
    """The code blocks list every method and class attribute of `Kind` and `Observer`, and no other."""
    kinds = _section("Measurement kinds (`kinds/base.py`)")
    shown = set(re.findall(r"^    (?:def )?(\w+)[:(]", kinds.split("```python")[1], re.M))
    assert shown == _public(Kind)
    observers = _section("Observers (`observers/`)").split("```python")[1].split("@dataclass")[0]
    assert set(re.findall(r"def (\w+)\(", observers)) == _public(Observer)


def test_the_provider_driver_and_store_paragraphs_name_every_public_method() -> None:
    for heading, cls in (
        ("Providers (`providers/base.py`)", Provider),
        ("Drivers (`drivers/base.py`)", Driver),
        ("The store (`store/`)", Store),
    ):
        # a Store's annotations are its instance's (engine, location), not its interface
        public = {n for n, v in vars(cls).items() if inspect.isfunction(v)} if cls is Store else _public(cls)
        missing = {n for n in public if not n.startswith("_")} - {"name"} - _code_names(_section(heading))
        assert missing == set(), f"docs/architecture.md '{heading}' does not name {sorted(missing)}"


def _imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text())
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module)
    return names


# Database clients; sqlalchemy.exc only names errors (the monitor waits out an unreachable store).
SQL_CLIENTS = ("sqlalchemy", "sqlite3", "psycopg", "adbc_driver_")
SQL_OUTSIDE_THE_STORE: set[tuple[str, str]] = set()  # cli/common.py read sqlite_master itself (moved)


def test_only_the_store_speaks_sql() -> None:
    found = {
        (str(path.relative_to(SRC)), name)
        for path in sorted(SRC.rglob("*.py"))
        if path.relative_to(SRC).parts[0] != "store"
        for name in _imports(path)
        if name.startswith(SQL_CLIENTS) and name != "sqlalchemy.exc"
    }
    assert found == SQL_OUTSIDE_THE_STORE, "SQL belongs in store/ (docs/architecture.md)"


def test_the_runner_plan_and_telemetry_ask_the_kind_never_name_it() -> None:
    """No `m.kind == "udp"` (or `in ("tcp", …)`) in run/, plan/ or telemetry/: a kind's module says
    what differs. The one exception the doc states: a background measurement's timeout check."""
    named: list[tuple[str, int, str]] = []
    for package in ("run", "plan", "telemetry"):
        for path in sorted((SRC / package).rglob("*.py")):
            for node in ast.walk(ast.parse(path.read_text())):
                if not isinstance(node, ast.Compare):
                    continue
                constants = [n for n in ast.walk(node) if isinstance(n, ast.Constant)]
                kinds = {c.value for c in constants if isinstance(c.value, str) and c.value in KINDS}
                named += [(str(path.relative_to(SRC)), node.lineno, k) for k in sorted(kinds)]
    assert [(where, kind) for where, _line, kind in named] == [("plan/planner.py", "background")], named


# A stored summary metric ends in its unit, or names what it counts (docs/architecture.md, Units).
UNITS = ("_ns", "_s", "_bps", "_pps", "_ratio", "_bytes")
COUNTS = ("packets", "received", "sent", "replies", "count", "errors", "events", "messages", "retransmits")
OTHER_NAMES = {"path_pps_limit": "packets/s", "exact_loss": "a 1/0 flag"}


def test_stored_names_carry_their_unit() -> None:
    metrics = {name for kind in KINDS.values() for name in kind.stored_metrics()}
    unnamed = sorted(m for m in metrics if not m.endswith(UNITS + COUNTS) and m not in OTHER_NAMES)
    assert unnamed == [], "give each stored metric its unit (rtt_ns, throughput_bps, loss_ratio)"
    # times are in ns; the one metric in seconds is the doc's stated exception
    assert {m for m in metrics if m.endswith("_s")} == {"udp_start_delay_s"}
    columns = [(t.name, c) for t in schema.metadata.sorted_tables for c in t.columns]
    times = [(t, c.name) for t, c in columns if c.name.endswith("_ns") and not isinstance(c.type, BigInteger)]
    assert times == [], "times are integer nanoseconds"
    clocks = [(t, c.name) for t, c in columns if "utc" in c.name and not c.name.endswith("_utc_ns")]
    assert clocks == [], "wall-clock times are *_utc_ns"


def test_every_measurement_keeps_its_provenance() -> None:
    """Campaign, attempt, repetition, factor levels, ends, placement, tool, version, exact command,
    build and start time, and the raw output beside the parsed values."""
    columns = set(schema.measurements.columns.keys())
    wanted = {"campaign_id", "attempt", "repetition", "factors", "src", "dst", "src_host", "dst_host"}
    wanted |= {"placement", "tool", "tool_version", "command", "build_id", "started_utc_ns"}
    assert wanted <= columns
    assert {"measurement_id", "role", "stream", "text"} <= set(schema.raw_outputs.columns.keys())


def test_the_cli_starts_without_the_run_machinery() -> None:
    """Importing the CLI (every `vnetbench --help`) loads no part of a run, the statistics stack,
    matplotlib, asyncssh or the monitor's optional packages: the commands import them when they run
    (cli/doctor.py imported asyncssh at its top, ~0.5 s of every start)."""
    heavy = [
        "pyroute2",
        "matplotlib",
        "scipy",
        "statsmodels",
        "pyarrow.dataset",
        "adbc_driver_sqlite",
        "asyncssh",
    ]
    heavy += ["croniter", "prometheus_client", "uvicorn", "fastapi", "vnetbench.run", "vnetbench.analysis"]
    heavy += ["vnetbench.providers.local", "vnetbench.dashboard", "vnetbench.report.html"]
    code = f"import sys, vnetbench.cli; print(sorted(m for m in {heavy!r} if m in sys.modules))"
    env = {"PYTHONPATH": str(ROOT / "src"), "PATH": "/usr/bin:/bin"}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"
