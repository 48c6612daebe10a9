"""A tiny typer app that registers `stats` the way the CLI does, for end-to-end tests."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import typer
from typer.testing import CliRunner, Result

from vnetbench.cli.stats import stats_command

DATA = Path(__file__).resolve().parents[1] / "data"
ONL = DATA / "onl_udp_loss.csv"

app = typer.Typer()
app.command("stats")(stats_command)


@app.command("version")
def _version() -> None:  # a second command, so `stats` stays a named subcommand as in cli.py
    typer.echo("test")


def run(*args: str | Path) -> Result:
    return CliRunner().invoke(app, ["stats", *map(str, args)])


def run_json(*args: str | Path) -> dict[str, Any]:
    result = run(*args, "--json")
    assert result.exit_code == 0, result.stderr
    return json.loads(result.stdout)  # exactly one JSON object, or this raises
