"""A command that only reads a store refuses a SQLite path with nothing there, and creates nothing:
a mistyped --db used to leave a new empty store behind and say "no campaign … known: none"."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from vnetbench.cli import app
from vnetbench.store.db import Store

READERS = [
    ["campaigns"],
    ["report", "x"],
    ["analyze", "x"],
    ["loss", "x"],
    ["export", "x"],
    ["compare", "x", "y"],
    ["resume", "x"],
]


@pytest.mark.parametrize("command", READERS, ids=lambda c: c[0])
@pytest.mark.parametrize("url", [False, True], ids=["path", "sqlite-url"])
def test_a_reader_refuses_a_missing_store_and_creates_nothing(
    tmp_path: Path, command: list[str], url: bool
) -> None:
    path = tmp_path / "typo" / "stor.db"
    db = f"sqlite:///{path}" if url else str(path)
    res = CliRunner().invoke(app, [*command, "--db", db])
    assert res.exit_code == 2, res.output
    assert f"no store at '{db}'" in res.output
    assert "vnetbench run SPEC --db" in res.output
    assert not path.exists() and not path.parent.exists()


def test_an_existing_store_still_opens(tmp_path: Path) -> None:
    db = tmp_path / "s.db"
    Store(db).create_campaign(
        id="cafe0001", name="kept", status="finished", provider="local", spec_text="name: kept\n",
        spec_sha256="-", spec_source="test", seed=1, environment={}, tool_versions={},
    )  # fmt: skip
    res = CliRunner().invoke(app, ["campaigns", "--db", str(db), "--json"])
    assert res.exit_code == 0, res.output
    assert "cafe0001" in res.stdout
