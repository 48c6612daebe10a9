"""The `vnetbench` command line: one sub-command per job, thin wrappers over the library."""

from __future__ import annotations

import typer

app = typer.Typer(
    name="vnetbench",
    help="Measure what a virtualized network really delivers: declare a topology and a campaign in YAML, "
    "build it, run real tools, keep every sample, get the statistics and figures.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


def main() -> None:
    app()


if __name__ == "__main__":
    main()
