"""The `vnetbench` command line: one sub-command per job, thin wrappers over the library.

Exit codes: 0 success, 1 a run with failed measurements (or a failed build), 2 a usage error
(bad spec, unknown campaign, missing kernel feature or tool), 130 interrupted (resume it).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.table import Table

from vnetbench.analysis.stats_cli import stats_command
from vnetbench.analyze_cli import analyze_command
from vnetbench.spec.loader import SpecInvalid, load_spec, parse_spec

app = typer.Typer(
    name="vnetbench",
    help="Measure what a virtualized network really delivers: declare a topology and a campaign in YAML, "
    "build it, run real tools (iperf3, ping, vnb-probe), keep every sample, get the statistics and figures.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode="rich",
)
scenarios_app = typer.Typer(
    help="Built-in campaigns that repeat the published studies.", no_args_is_help=True
)
app.add_typer(scenarios_app, name="scenarios")
app.command("stats")(stats_command)  # analysis of any CSV table (analysis/stats_cli.py)
app.command("analyze")(analyze_command)  # designed-experiment analysis of a campaign (analyze_cli.py)

out = Console()
err = Console(stderr=True)

DbOption = Annotated[
    str,
    typer.Option("--db", envvar="VNETBENCH_DB", help="store: a SQLite file path or a SQLAlchemy URL"),
]
CampaignArg = Annotated[
    str | None, typer.Argument(help="campaign id, id prefix or name (default: the newest in the store)")
]


def _fail(message: str, code: int = 2) -> typer.Exit:
    err.print(f"[red]error:[/red] {message}", highlight=False, soft_wrap=True)
    return typer.Exit(code)


def _spec_errors(exc: SpecInvalid) -> typer.Exit:
    for e in exc.errors:
        err.print(f"[red]error:[/red] {e}", highlight=False, soft_wrap=True)
    return typer.Exit(2)


def _store(db: str) -> Any:
    from vnetbench.store import Store

    try:
        return Store(db)
    except Exception as exc:  # a bad URL or an unwritable path is a usage error
        raise _fail(f"cannot open the store '{db}': {exc}") from None


def _campaign(store: Any, ident: str | None) -> dict[str, Any]:
    row = store.campaign(ident)
    if row is None:
        known = ", ".join(f"{c['id']} ({c['name']})" for c in store.campaigns()[-5:]) or "none"
        raise _fail(f"no campaign '{ident or ''}' in {store.location}; known: {known}")
    return row


def _parse_sets(values: list[str] | None) -> dict[str, Any]:
    import yaml

    overrides = {}
    for item in values or []:
        if "=" not in item:
            raise _fail(f"--set {item!r}: expected PATH=VALUE, e.g. --set schedule.repetitions=3")
        path, value = item.split("=", 1)
        overrides[path.strip()] = yaml.safe_load(value)
    return overrides


# ---------------------------------------------------------------------- running


@app.command()
def run(
    spec: Annotated[Path, typer.Argument(help="campaign YAML file")],
    db: DbOption = "vnetbench.db",
    report: Annotated[
        Path | None, typer.Option(help="write the report here (default: reports/NAME-ID)")
    ] = None,
    no_report: Annotated[bool, typer.Option("--no-report", help="do not write a report at the end")] = False,
    set_: Annotated[
        list[str] | None, typer.Option("--set", help="override a spec field: PATH=VALUE (repeatable)")
    ] = None,
    seed: Annotated[
        int | None, typer.Option(help="seed for randomised order (default: recorded random)")
    ] = None,
    inventory: Annotated[
        Path | None, typer.Option(help="run on these existing hosts over SSH (docs/ssh-provider.md)")
    ] = None,
) -> None:
    """Build the topology, run the whole campaign, store every sample and write the report."""
    try:
        loaded = load_spec(spec)
        if inventory is not None:
            from vnetbench.spec.inventory import with_inventory

            loaded = with_inventory(loaded, inventory)
        if set_:
            loaded = parse_spec(loaded.text, loaded.source, overrides=_parse_sets(set_))
    except SpecInvalid as exc:
        raise _spec_errors(exc) from None
    _run_and_report(loaded, db, report, no_report, seed)


def _run_and_report(loaded: Any, db: str, report: Path | None, no_report: bool, seed: int | None) -> None:
    from vnetbench.campaign import create_campaign

    store = _store(db)
    try:
        provider = "ssh" if loaded.campaign.inventory is not None else "local"
        started = create_campaign(loaded, store, provider=provider, seed=seed)
    except SpecInvalid as exc:
        raise _spec_errors(exc) from None
    plan = started.plan
    err.print(
        f"campaign [bold]{loaded.campaign.name}[/bold] id [bold]{started.campaign_id}[/bold]: "
        f"{len(plan.steps)} steps, {plan.flow_count} measurements, ~{plan.planned_ns / 1e9 / 60:.1f} min of "
        f"measuring; store {store.location}",
        highlight=False,
    )
    _execute(store, started.campaign_id, plan, report, no_report)


def _execute(store: Any, campaign_id: str, plan: Any, report: Path | None, no_report: bool) -> None:
    from vnetbench.campaign import run_campaign
    from vnetbench.providers.base import ProviderError
    from vnetbench.providers.registry import make_provider

    provider = make_provider(store.campaign(campaign_id)["provider"], campaign_id, store)
    try:
        summary = run_campaign(store, campaign_id, provider, err, plan)
    except ProviderError as exc:
        raise _fail(
            f"{exc}\nnothing was left behind; fix the above and run `vnetbench resume {campaign_id}`", 2
        ) from None
    err.print(
        f"{summary.flows_ok} measurements ok, {summary.flows_failed} failed"
        + (f", {summary.skipped} already in the store" if summary.skipped else ""),
        highlight=False,
    )
    for line in summary.failures[:10]:
        err.print(f"  [yellow]failed[/yellow] {line}", highlight=False, soft_wrap=True)
    if summary.interrupted:
        err.print(
            f"interrupted: everything measured so far is stored; continue with "
            f"`vnetbench resume {campaign_id} --db {store.location}`",
            highlight=False,
        )
        raise typer.Exit(130)
    if not no_report:
        path = _write_report(store, campaign_id, report)
        err.print(f"report: [bold]{path}[/bold]", highlight=False)
    if summary.flows_failed:
        raise typer.Exit(1)


def _write_report(store: Any, campaign_id: str, out_dir: Path | None) -> Path:
    from vnetbench.report.html import write_report

    row = store.campaign(campaign_id)
    out_dir = out_dir or Path("reports") / f"{row['name']}-{campaign_id}"
    return write_report(store, campaign_id, out_dir)


@app.command()
def resume(
    campaign: CampaignArg = None,
    db: DbOption = "vnetbench.db",
    report: Annotated[Path | None, typer.Option(help="write the report here")] = None,
    no_report: Annotated[bool, typer.Option("--no-report")] = False,
) -> None:
    """Continue an interrupted campaign: measurements already stored are never redone."""
    from vnetbench.campaign import load_plan
    from vnetbench.cleanup import clean as clean_leftovers

    store = _store(db)
    row = _campaign(store, campaign)
    if row["status"] == "finished":
        err.print(f"campaign {row['id']} is already finished; nothing to do")
        return
    leftovers = clean_leftovers(store, row["id"])  # a killed run may have left its topology behind
    if leftovers.removed:
        err.print(f"removed {len(leftovers.removed)} objects left by the interrupted run")
    plan = load_plan(store, row["id"])
    _execute(store, row["id"], plan, report, no_report)


@app.command()
def clean(
    db: Annotated[
        str | None, typer.Option("--db", envvar="VNETBENCH_DB", help="store to read ownership records from")
    ] = None,
    campaign: Annotated[str | None, typer.Option(help="only this campaign's objects")] = None,
) -> None:
    """Remove what a killed run left behind (namespaces, processes, cgroups, OVS daemons) — only objects
    recorded as ours, never anything matched by name."""
    from vnetbench.cleanup import active_campaigns
    from vnetbench.cleanup import clean as clean_leftovers

    locations = [db] if db else sorted({loc for _, loc in active_campaigns()} | {"vnetbench.db"})
    total = 0
    for location in locations:
        if "://" not in location and not Path(location).exists():
            continue
        store = _store(location)
        cid = _campaign(store, campaign)["id"] if campaign else None
        result = clean_leftovers(store, cid)
        for line in result.removed:
            out.print(f"removed {line}", highlight=False)
        for line in result.problems:
            err.print(f"[yellow]could not remove[/yellow] {line}", highlight=False)
        total += len(result.removed)
    out.print(f"{total} objects removed" if total else "nothing of ours was left behind")


# ---------------------------------------------------------------------- looking at results


@app.command()
def report(
    campaign: CampaignArg = None,
    db: DbOption = "vnetbench.db",
    out_dir: Annotated[
        Path | None, typer.Option("--out", help="directory for index.html and figures")
    ] = None,
) -> None:
    """Write the HTML report (tables, CDFs, per-repetition figures) of a campaign."""
    store = _store(db)
    row = _campaign(store, campaign)
    path = _write_report(store, row["id"], out_dir)
    out.print(f"report: {path}", highlight=False)


@app.command()
def campaigns(db: DbOption = "vnetbench.db") -> None:
    """List the campaigns in a store."""
    store = _store(db)
    table = Table("id", "name", "status", "created (UTC)", "measurements")
    import datetime as dt

    for row in store.campaigns():
        frame = store.measurements_frame(row["id"])
        ok = int((frame["status"] == "ok").sum()) if not frame.empty else 0
        when = dt.datetime.fromtimestamp(row["created_utc_ns"] / 1e9, dt.UTC).strftime("%Y-%m-%d %H:%M")
        table.add_row(row["id"], row["name"], row["status"], when, str(ok))
    out.print(table)


@app.command()
def export(
    campaign: CampaignArg = None,
    db: DbOption = "vnetbench.db",
    fmt: Annotated[str, typer.Option("--format", help="csv or parquet")] = "csv",
    out_dir: Annotated[Path, typer.Option("--out", help="directory to write the tables into")] = Path(
        "export"
    ),
) -> None:
    """Export a campaign's tables (measurements with summaries, samples, events, builds) to CSV or Parquet."""
    from vnetbench.export import export_campaign

    if fmt not in {"csv", "parquet"}:
        raise _fail(f"--format {fmt!r}: use csv or parquet")
    store = _store(db)
    row = _campaign(store, campaign)
    for path in export_campaign(store, row["id"], out_dir, fmt):
        out.print(f"wrote {path}", highlight=False)


# ---------------------------------------------------------------------- specs


@app.command()
def validate(spec: Annotated[Path, typer.Argument(help="campaign YAML file")]) -> None:
    """Check a campaign and show its plan without building anything."""
    from vnetbench.plan import make_plan

    try:
        loaded = load_spec(spec)
        plan = make_plan(loaded, "00000000", loaded.campaign.schedule.seed or 0)
    except SpecInvalid as exc:
        raise _spec_errors(exc) from None
    table = Table("step", "rep", "pattern", "group", "measurement", "flows")
    for step in plan.steps[:40]:
        flows = ", ".join(f"{f.src}→{f.dst}" for f in step.flows)
        table.add_row(
            str(step.seq + 1), str(step.repetition), step.pattern, step.group_kind, step.measurement, flows
        )
    out.print(table)
    more = f" (first 40 of {len(plan.steps)} shown)" if len(plan.steps) > 40 else ""
    out.print(
        f"{spec}: valid — {len(plan.steps)} steps, {plan.flow_count} measurements, "
        f"~{plan.planned_ns / 1e9 / 60:.1f} min of measuring{more}",
        highlight=False,
        soft_wrap=True,
    )


@app.command()
def schema() -> None:
    """Print the JSON Schema of campaign files (for editors and validators)."""
    from vnetbench.spec.models import Campaign

    out.print_json(json.dumps(Campaign.model_json_schema()))


# ---------------------------------------------------------------------- scenarios


@scenarios_app.command("list")
def scenarios_list() -> None:
    """The built-in scenarios and the study each repeats."""
    from vnetbench.scenarios import all_scenarios

    table = Table("name", "repeats", "what it shows")
    for sc in all_scenarios():
        table.add_row(sc.name, sc.study, sc.summary)
    out.print(table)


@scenarios_app.command("show")
def scenarios_show(name: str) -> None:
    """Print a scenario's YAML (copy it to start your own campaign)."""
    from vnetbench.scenarios import get_scenario

    sc = _scenario(name, get_scenario)
    sys.stdout.write(sc.text)


@scenarios_app.command("run")
def scenarios_run(
    name: str,
    db: DbOption = "vnetbench.db",
    report: Annotated[Path | None, typer.Option(help="write the report here")] = None,
    no_report: Annotated[bool, typer.Option("--no-report")] = False,
    set_: Annotated[list[str] | None, typer.Option("--set", help="override a field: PATH=VALUE")] = None,
    seed: Annotated[int | None, typer.Option()] = None,
) -> None:
    """Run a built-in scenario and write its report."""
    from vnetbench.scenarios import get_scenario

    sc = _scenario(name, get_scenario)
    try:
        loaded = parse_spec(sc.text, f"scenario:{sc.name}", overrides=_parse_sets(set_) or None)
    except SpecInvalid as exc:
        raise _spec_errors(exc) from None
    _run_and_report(loaded, db, report, no_report, seed)


@app.command()
def doctor(
    inventory: Annotated[Path, typer.Option(help="inventory YAML (or a campaign with `inventory:`)")],
    install_probe: Annotated[
        bool, typer.Option("--install-probe", help="copy vnb-probe to hosts that lack it")
    ] = False,
    insecure_accept_new_host_keys: Annotated[
        bool,
        typer.Option(
            "--insecure-accept-new-host-keys", help="INSECURE: trust first-seen host keys (appended)"
        ),
    ] = False,
    probe_path: Annotated[str, typer.Option(help="where --install-probe puts vnb-probe")] = "",
) -> None:
    """Check hosts before a campaign: reachable, root/sudo, tools and versions, clock offset, path MTU."""
    from vnetbench.doctor import run_doctor

    try:
        code = run_doctor(inventory, install_probe, insecure_accept_new_host_keys, out, probe_path or None)
    except SpecInvalid as exc:
        raise _spec_errors(exc) from None
    raise typer.Exit(code)


def _scenario(name: str, getter: Any) -> Any:
    try:
        return getter(name)
    except KeyError as exc:
        raise _fail(str(exc.args[0])) from None


from vnetbench.telemetry.cli import loss_command  # noqa: E402

app.command("loss")(loss_command)


def main() -> None:
    app()


if __name__ == "__main__":
    main()
