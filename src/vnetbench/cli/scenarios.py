"""`vnetbench scenarios list|show|run`: the built-in campaigns that repeat the published studies."""

from __future__ import annotations

import sys
from typing import Annotated

import typer
from rich.table import Table

from vnetbench.cli.campaign import run_and_report
from vnetbench.cli.common import (
    DbOption,
    JsonListOption,
    NoReportOption,
    ReportOption,
    SeedOption,
    SetOption,
    fail,
    out,
    parse_sets,
    spec_errors,
)
from vnetbench.cli.output import print_json, print_table
from vnetbench.scenarios import Scenario, all_scenarios, get_scenario
from vnetbench.spec.errors import SpecInvalid
from vnetbench.spec.loader import parse_spec

ScenarioArg = Annotated[str, typer.Argument(help="a built-in scenario (`vnetbench scenarios list`)")]

app = typer.Typer(help="Built-in campaigns that repeat the published studies.", no_args_is_help=True)


@app.command("list")
def scenarios_list(json_output: JsonListOption = False) -> None:
    """The built-in scenarios and the study each repeats."""
    if json_output:
        print_json([{"name": sc.name, "study": sc.study, "summary": sc.summary} for sc in all_scenarios()])
        return
    table = Table("name", "repeats", "what it shows")
    for sc in all_scenarios():
        table.add_row(sc.name, sc.study, sc.summary)
    print_table(out, table)


@app.command("show")
def scenarios_show(name: ScenarioArg) -> None:
    """Print a scenario's YAML (copy it to start your own campaign)."""
    sys.stdout.write(_scenario(name).text)


@app.command("run")
def scenarios_run(
    name: ScenarioArg,
    db: DbOption = "vnetbench.db",
    report: ReportOption = None,
    no_report: NoReportOption = False,
    set_: SetOption = None,
    seed: SeedOption = None,
) -> None:
    """Run a built-in scenario and write its report."""
    sc = _scenario(name)
    try:
        loaded = parse_spec(sc.text, f"scenario:{sc.name}", overrides=parse_sets(set_) or None)
    except SpecInvalid as exc:
        raise spec_errors(exc) from None
    run_and_report(loaded, db, report, no_report, seed)


def _scenario(name: str) -> Scenario:
    try:
        return get_scenario(name)
    except KeyError as exc:
        raise fail(str(exc.args[0])) from None
