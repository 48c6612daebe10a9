"""Running campaigns: `run`, `resume`, `validate`, `schema` (and what `scenarios run` shares with `run`).

The run machinery (providers, drivers, telemetry) and the report (matplotlib) are imported when a
command runs, not when the CLI starts: `vnetbench --help` stays fast.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table

from vnetbench.cli.common import (
    EXIT_FAILED,
    EXIT_INTERRUPTED,
    EXIT_USAGE,
    CampaignArg,
    DbOption,
    JsonOption,
    NoReportOption,
    ReportOption,
    SeedOption,
    SetOption,
    err,
    fail,
    find_campaign,
    open_store,
    out,
    parse_sets,
    spec_errors,
    stored_spec_error,
)
from vnetbench.cli.output import print_json, print_table
from vnetbench.plan import Plan, make_plan
from vnetbench.spec.errors import SpecInvalid
from vnetbench.spec.loader import LoadedSpec, load_spec
from vnetbench.spec.models import Campaign
from vnetbench.store.db import Store
from vnetbench.store.monitoring import MonitorStore


def run(
    spec: Annotated[Path, typer.Argument(help="campaign YAML file")],
    db: DbOption = "vnetbench.db",
    report: ReportOption = None,
    no_report: NoReportOption = False,
    set_: SetOption = None,
    seed: SeedOption = None,
    inventory: Annotated[
        Path | None, typer.Option(help="run on these existing hosts over SSH (docs/ssh-provider.md)")
    ] = None,
) -> None:
    """Build the topology, run the whole campaign, store every sample and write the report."""
    try:
        loaded = load_spec(spec, overrides=parse_sets(set_), inventory=inventory)
    except SpecInvalid as exc:
        raise spec_errors(exc) from None
    run_and_report(loaded, db, report, no_report, seed)


def run_and_report(
    loaded: LoadedSpec, db: str, report: Path | None, no_report: bool, seed: int | None
) -> None:
    """Create the campaign in the store, run it, and write its report."""
    from vnetbench.run.campaign import create_campaign  # the run machinery: start-up time

    check_report_option(report, no_report, loaded.campaign.name)

    def buildable(plan: Plan) -> None:  # refused before it is stored: no failed campaign left to resume
        problems = local_machine_problems(loaded, plan)
        if problems:
            done = "nothing was stored or built: fix the above and run it again"
            raise fail("\n".join([*problems, done]), EXIT_USAGE)

    store = open_store(db, create=True)
    try:
        provider = "ssh" if loaded.campaign.inventory is not None else "local"
        started = create_campaign(loaded, store, provider=provider, seed=seed, check=buildable)
    except SpecInvalid as exc:
        raise spec_errors(exc) from None
    plan = started.plan
    err.print(
        f"campaign [bold]{loaded.campaign.name}[/bold] id [bold]{started.campaign_id}[/bold]: "
        f"{plan.count_text()}, {plan.planned_text()}; store {store.location}",
        highlight=False,
        soft_wrap=True,  # one line, never broken inside a path (rich wraps at 80 columns in a pipe)
    )
    _execute(store, started.campaign_id, plan, report, no_report)


def local_machine_problems(loaded: LoadedSpec, plan: Plan) -> list[str]:
    """What stops this machine building the campaign's topologies (the local provider's preflight:
    root, kernel features, tools), each with its fix; none for a campaign on SSH hosts."""
    if loaded.campaign.inventory is not None:
        return []
    from vnetbench.providers.registry import local_build_problems  # pyroute2: start-up time

    return local_build_problems(plan.layouts)


def _execute(store: Store, campaign_id: str, plan: Plan, report: Path | None, no_report: bool) -> None:
    # the run machinery (providers, pyroute2, asyncssh): imported when a campaign runs, for start-up time
    from vnetbench.providers.base import ProviderError
    from vnetbench.providers.registry import make_provider
    from vnetbench.run.campaign import run_campaign

    row = find_campaign(store, campaign_id)
    for name, reason in dict.fromkeys(
        (name, why) for (_, name), why in plan.refused.items()
    ):  # stored specs'
        err.print(
            f"[yellow]warning[/yellow]: measurement '{name}' {reason}; its steps are stored as failed, "
            "the rest runs",
            highlight=False,
            soft_wrap=True,
        )
    provider = make_provider(row["provider"], campaign_id, store)
    try:
        summary = run_campaign(store, campaign_id, provider, err, plan)
    except ProviderError as exc:
        raise fail(
            f"{exc}\nnothing was left behind. What this machine or the hosts lack (a tool, a kernel "
            f"feature): install it and run `vnetbench resume {campaign_id} --db {store.location}`. What "
            "the campaign file or its inventory says (a field, an address, a port, a key, a tools path): "
            "change it and `vnetbench run` it again (resume runs the campaign and inventory as stored)",
            EXIT_USAGE,
        ) from None
    err.print(
        f"{summary.flows_ok} measurements ok, {summary.flows_failed} failed"
        + (f", {summary.skipped} already in the store" if summary.skipped else "")
        + (f"; {summary.reruns} failed steps re-run (schedule.retries)" if summary.reruns else "")
        + (f"; {summary.setup_failures} tool setups failed, re-run" if summary.setup_failures else ""),
        highlight=False,
        soft_wrap=True,
    )
    for line in summary.failures[:10]:
        err.print(f"  [yellow]failed[/yellow] {line}", highlight=False, soft_wrap=True)
    if summary.interrupted:
        err.print(
            f"interrupted: everything measured so far is stored; continue with "
            f"`vnetbench resume {campaign_id} --db {store.location}`",
            highlight=False,
            soft_wrap=True,  # the command stays on one line, to copy
        )
        raise typer.Exit(EXIT_INTERRUPTED)
    if not no_report:
        path = write_report(store, campaign_id, report)
        err.print(f"report: [bold]{path}[/bold]", highlight=False, soft_wrap=True)
    if summary.flows_failed:
        raise typer.Exit(EXIT_FAILED)


def check_report_option(
    report: Path | None, no_report: bool, name: str, campaign_id: str | None = None
) -> None:
    """`--report` before anything is built: a usage error for a report that could not be written at
    the end (it was found only after the whole run, which then exited 2), or one --no-report drops."""
    if report is not None and no_report:
        raise fail(f"--report {report} and --no-report together: give one of them")
    problem = report_dir_problem(report, name, campaign_id) if report is not None else None
    if problem:
        raise fail(f"--report {problem}")


def report_dir_problem(out_dir: Path, name: str, campaign_id: str | None) -> str | None:
    """Why a report of campaign `name` (`campaign_id`; None: not yet created) must not go into out_dir:
    it is a file, or it holds the report of a campaign of another name (overwritten without a word,
    its figures left beside the new ones) or an index.html of something else. A newer run of the
    same campaign replaces its report (`make demo` twice). None if it may."""
    if out_dir.exists() and not out_dir.is_dir():
        return f"{out_dir}: is a file, not a directory; give a directory for index.html and figures/"
    try:
        page = (out_dir / "index.html").read_text(errors="replace")
    except OSError:  # none there (or unreadable: writing it says so)
        return None
    title = re.search(r"<title>vnetbench · (.*) \((\w+)\)</title>", page)
    if title and (title[1] == name or title[2] == campaign_id):
        return None
    what = (
        f"the report of campaign {title[2]} ({title[1]})"
        if title
        else "an index.html that is not a vnetbench report"
    )
    return f"{out_dir}: holds {what}, which this would overwrite; give another directory, or remove that one"


def write_report(store: Store, campaign_id: str, out_dir: Path | None) -> Path:
    """The campaign's report into out_dir (default: reports/NAME-ID)."""
    from vnetbench.report.html import write_report as write  # matplotlib: imported when needed (start-up)

    row = find_campaign(store, campaign_id)
    out_dir = out_dir or Path("reports") / f"{row['name']}-{campaign_id}"
    problem = report_dir_problem(out_dir, row["name"], campaign_id)
    if problem:
        raise fail(
            f"cannot write the report into {problem}; the campaign is stored: "
            f"`vnetbench report {campaign_id} --db {store.location} --out DIR` writes it"
        )
    try:
        return write(store, campaign_id, out_dir)
    except OSError as exc:  # a directory that cannot be made or written: a usage error, not a traceback
        raise fail(
            f"cannot write the report into '{out_dir}': {exc.strerror or exc}; the campaign is stored, write "
            f"its report elsewhere with `vnetbench report {campaign_id} --db {store.location} --out DIR`"
        ) from None


def resume(
    campaign: CampaignArg = None,
    db: DbOption = "vnetbench.db",
    report: ReportOption = None,
    no_report: NoReportOption = False,
) -> None:
    """Continue an interrupted campaign: measurements already stored are never redone."""
    # the run machinery: imported when a campaign runs, for start-up time
    from vnetbench.providers.cleanup import clean as clean_leftovers
    from vnetbench.providers.cleanup import elsewhere_message, running_elsewhere, still_running
    from vnetbench.run.campaign import load_plan

    store = open_store(db)
    row = find_campaign(store, campaign)
    check_report_option(report, no_report, row["name"], row["id"])
    if MonitorStore(store).is_monitored(row["id"]):  # its runs follow the monitor's plan, not this one
        raise fail(
            f"campaign {row['id']} ({row['name']}) is run by `vnetbench monitor`; continue it with "
            f"`vnetbench monitor SPEC.yaml --db {store.location}`"
        )
    if row["status"] == "finished":
        err.print(f"campaign {row['id']} is already finished; nothing to do")
        return
    if elsewhere := running_elsewhere(row):  # its pid is another machine's: checking it here meant nothing
        raise fail(elsewhere_message(row, *elsewhere, f"resume {row['id']} --db {store.location}"))
    pid = still_running(store, row["id"])
    if pid is not None:  # a second process would build the same topology and measure the steps twice
        raise fail(
            f"campaign {row['id']} ({row['name']}) is still running (its controlling process, pid {pid}); "
            f"wait for it to finish, or stop it (kill -INT {pid}) and then resume"
        )
    leftovers = clean_leftovers(store, row["id"])  # a killed run may have left its topology behind
    if leftovers.removed:
        err.print(f"removed {len(leftovers.removed)} objects left by the interrupted run")
    try:
        plan = load_plan(store, row["id"])
    except SpecInvalid as exc:
        raise stored_spec_error(row, exc, "resume") from None
    _execute(store, row["id"], plan, report, no_report)


def validate(
    spec: Annotated[Path, typer.Argument(help="campaign YAML file")],
    set_: Annotated[
        list[str] | None, typer.Option("--set", help="override a spec field: PATH=VALUE (repeatable), as run")
    ] = None,
    inventory: Annotated[
        Path | None,
        typer.Option(help="check it as `run --inventory` would run it on these hosts (docs/ssh-provider.md)"),
    ] = None,
    json_output: JsonOption = False,
) -> None:
    """Check a campaign and show its plan without building anything.

    Also checks that this machine can build its topology (root, kernel features, tools), as `run`
    does first. Exit status: 0 valid and buildable here; 1 valid, but this machine cannot build it
    (each reason printed with its fix); 2 invalid. A campaign with an inventory (in the file or
    --inventory) is checked against what SSH hosts can do; whether the hosts are ready is
    `vnetbench doctor --inventory`'s check."""
    try:
        loaded = load_spec(spec, overrides=parse_sets(set_), inventory=inventory)
        plan = make_plan(loaded, "00000000", loaded.campaign.schedule.seed or 0)
        if loaded.campaign.monitor is not None:  # a monitor: block means the file is for `vnetbench monitor`
            from vnetbench.monitor.service import check_monitorable

            check_monitorable(loaded, plan=plan)
    except SpecInvalid as exc:
        raise spec_errors(exc) from None
    problems = local_machine_problems(loaded, plan)
    if json_output:
        steps = [
            {
                "step": s.seq + 1,
                "repetition": s.repetition,
                "pattern": s.pattern,
                "group": s.group_kind,
                "measurement": s.measurement,
                "flows": [[f.src, f.dst] for f in s.flows],
            }
            for s in plan.steps
        ]
        print_json(
            {
                "valid": True,
                "steps": steps,
                "measurements": plan.measurement_count,
                "background_measurements": plan.background_count,
                "planned_ns": plan.planned_ns,
                "machine_problems": problems,
            }
        )
        if problems:
            raise typer.Exit(EXIT_FAILED)
        return
    table = Table("step", "rep", "pattern", "group", "measurement", "flows")
    for step in plan.steps[:40]:
        flows = ", ".join(f"{f.src}→{f.dst}" for f in step.flows)
        table.add_row(
            str(step.seq + 1), str(step.repetition), step.pattern, step.group_kind, step.measurement, flows
        )
    print_table(out, table)
    more = f" (first 40 of {len(plan.steps)} shown)" if len(plan.steps) > 40 else ""
    out.print(
        f"{spec}: valid — {plan.count_text()}, {plan.planned_text()}{more}",
        highlight=False,
        soft_wrap=True,
    )
    if problems:
        err.print("[yellow]but this machine cannot build it[/yellow] (`run` would stop before building):")
        for problem in problems:
            err.print(f"  {problem}", highlight=False, soft_wrap=True)
        raise typer.Exit(EXIT_FAILED)


def schema() -> None:
    """Print the JSON Schema of campaign files (for editors and validators)."""
    out.print_json(json.dumps(Campaign.model_json_schema()))
