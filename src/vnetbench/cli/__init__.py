"""The `vnetbench` command line: one module per command group, thin wrappers over the library.

- `campaign`   run, resume, validate, schema
- `results`    report, campaigns, export
- `analyze`    the designed-experiment analysis of a stored campaign
- `stats`      the textbook analysis of any CSV table
- `compare`    two campaigns row by row with a verdict (exit 1 if worse, or failing more in B than in A)
- `loss`       where the packets went
- `scenarios`  list, show, run the built-in campaigns
- `clean`      remove what a killed run left behind
- `doctor`     check SSH hosts before a campaign
- `dashboard`  serve the live dashboard of a store
- `monitor`    run campaigns on their schedule for days (alerts, /metrics, /health)
- `common`     consoles, exit codes, the store and campaign arguments

Exit codes: 0 success, 1 a run with failed measurements (or a failed build), 2 a usage error
(bad spec, unknown campaign, missing kernel feature or tool), 130 interrupted (resume it).
"""

from __future__ import annotations

import inspect
from typing import Annotated, Any

import typer
import typer.core

from vnetbench import __version__
from vnetbench.cli import (
    analyze,
    campaign,
    clean,
    compare,
    dashboard,
    doctor,
    loss,
    monitor,
    results,
    scenarios,
    stats,
)


def _flags_show_no_type() -> None:
    """An on/off option (`--json`) or a counted one shows no type in `--help`. typer's rich help (0.29 here)
    gives every option its type, a flag's too: `--json <bool>` read as if it took a value, and
    `campaigns --json true` failed ("Got unexpected extra argument(s) (true)"). Click's plain help
    writes a type only for an option that takes a value; so does this, for every command at once.
    A typer without this method is left as it is."""
    option = getattr(typer.core, "TyperOption", None)
    shown = getattr(option, "display_type_rich", None)
    if option is None or shown is None or getattr(shown, "flags_show_no_type", False):
        return

    def display_type_rich(self: Any, ctx: Any) -> str | None:
        return None if self.is_flag or self.count else shown(self, ctx)

    display_type_rich.flags_show_no_type = True  # type: ignore[attr-defined]
    option.display_type_rich = display_type_rich


_flags_show_no_type()

app = typer.Typer(
    name="vnetbench",
    help="Measure what a virtualized network really delivers: declare a topology and a campaign in YAML, "
    "build it, run real tools (iperf3, ping, vnb-probe), keep every sample, get the statistics and figures.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode="rich",
)


def _print_version(value: bool) -> None:
    if value:
        typer.echo(f"vnetbench {__version__}")
        raise typer.Exit()


@app.callback()
def _options(
    version: Annotated[
        bool,
        typer.Option(
            "--version",
            callback=_print_version,
            is_eager=True,
            help="print vnetbench's version (as each campaign stores it: environment.vnetbench) and exit",
        ),
    ] = False,
) -> None:
    """The options before a command: only --version."""


app.add_typer(scenarios.app, name="scenarios")
app.command("stats")(stats.stats_command)
app.command("analyze")(analyze.analyze_command)
app.command("compare")(compare.compare_command)
app.command()(campaign.run)
app.command()(campaign.resume)
app.command()(clean.clean)
app.command()(results.report)
app.command()(results.campaigns)
app.command()(results.export)
app.command()(campaign.validate)
app.command()(campaign.schema)
app.command()(doctor.doctor)
app.command("loss")(loss.loss_command)
app.command("dashboard")(dashboard.dashboard_command)
app.command("monitor")(monitor.monitor_command)


def reflow(doc: str) -> str:
    """A docstring with each paragraph on one line. In rich markup mode typer keeps a docstring's
    hard line breaks, so `--help` broke sentences mid-line ("fairness, UDP" / "effective throughput")."""
    return "\n\n".join(" ".join(p.split()) for p in inspect.cleandoc(doc).split("\n\n"))


def _reflow_help(typer_app: typer.Typer) -> None:
    """Every command's help (and its sub-groups') from its docstring, reflowed."""
    for info in typer_app.registered_commands:
        if info.help is None and info.callback is not None and info.callback.__doc__:
            info.help = reflow(info.callback.__doc__)
    for group in typer_app.registered_groups:
        if group.typer_instance is not None:
            _reflow_help(group.typer_instance)


_reflow_help(app)


def main() -> None:
    """The `vnetbench` console entry point."""
    app()
