"""`vnetbench doctor [--inventory FILE]`: can a campaign run on these hosts (providers/ssh/doctor.py),
or, without an inventory, on this machine with the local provider (providers/local/doctor.py)?"""

from __future__ import annotations

import platform
import statistics
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.console import Console
from rich.table import Table

from vnetbench.cli.common import JsonOption, fail, out, spec_errors
from vnetbench.cli.output import print_json, print_table
from vnetbench.spec.errors import SpecInvalid
from vnetbench.spec.units import signed

if TYPE_CHECKING:
    from vnetbench.providers.ssh.doctor import HostCheck


def doctor(
    inventory: Annotated[
        Path | None,
        typer.Option(help="inventory YAML (or a campaign with `inventory:`); without it: this machine"),
    ] = None,
    install_probe: Annotated[
        bool, typer.Option("--install-probe", help="copy vnb-probe to hosts that lack it")
    ] = False,
    insecure_accept_new_host_keys: Annotated[
        bool,
        typer.Option(
            "--insecure-accept-new-host-keys", help="INSECURE: trust first-seen host keys (appended)"
        ),
    ] = False,
    probe_path: Annotated[
        str,
        typer.Option(
            help="where --install-probe puts vnb-probe on a host whose inventory names no `tools` path "
            "for it (default: /usr/local/bin/vnb-probe)"
        ),
    ] = "",
    json_output: JsonOption = False,
) -> None:
    """Check hosts before a campaign: reachable, root/sudo, tools and versions, clock offset, path MTU.
    Without --inventory: this machine for the local provider (root, kernel features, tools)."""
    if inventory is None:
        if install_probe or insecure_accept_new_host_keys or probe_path:
            raise fail("--install-probe, --insecure-accept-new-host-keys and --probe-path need --inventory")
        _local(json_output)
    # the SSH doctor loads asyncssh (~0.5 s): imported when an inventory is checked, not at every start
    from vnetbench.providers.ssh.doctor import check_inventory, notes_of, problems_of, ready, summary

    try:
        checks, elapsed = check_inventory(
            inventory, install_probe, insecure_accept_new_host_keys, probe_path or None
        )
    except SpecInvalid as exc:
        raise spec_errors(exc) from None
    ok = sum(ready(c) for c in checks)
    code = 0 if ok == len(checks) and not any(c.reason for c in checks) else 1
    if json_output:
        hosts = [
            asdict(c) | {"ready": ready(c), "problems": problems_of(c), "notes": notes_of(c)} for c in checks
        ]
        print_json({"hosts": hosts, "ready": ok, "checked_s": elapsed})
        raise typer.Exit(code)
    print_table(out, _table(checks))
    _clock_spread(checks, out)
    for line in (p for c in checks for p in problems_of(c)):
        out.print(f"[yellow]•[/yellow] {line}", highlight=False, soft_wrap=True)
    for line in (n for c in checks for n in notes_of(c)):
        out.print(f"• {line}", highlight=False, soft_wrap=True)
    out.print(summary(checks, elapsed), highlight=False)
    raise typer.Exit(code)


def _table(checks: list[HostCheck]) -> Table:
    from vnetbench.providers.ssh.doctor import TOOLS

    table = Table("host", "reachable", "user", "root/sudo", "iperf3", "ping", "vnb-probe", "kernel",
                  "clock offset", "path MTU", title="vnetbench doctor")  # fmt: skip
    for c in checks:
        if not c.reachable:
            table.add_row(c.name, "[red]no[/red]", "", "", "", "", "", "", "", "")
            continue
        if not c.user:  # reached, but its checks did not run (said below): unknown, not missing
            table.add_row(c.name, "yes", "?", "?", "?", "?", "?", "?", "?", "")
            continue
        priv = "root" if c.root else ("sudo" if c.sudo else "[yellow]no[/yellow]")
        tools = [c.tools.get(t) or "[red]missing[/red]" for t in TOOLS]
        clock = (
            f"{signed(c.clock_offset_ns / 1e6, '.2f')} ms ± {c.clock_error_ns / 1e6:.2f}"
            if c.clock_offset_ns is not None and c.clock_error_ns is not None
            else "?"
        )
        mtu = f"{c.path_mtu or 'no reply'} → {c.mtu_peer}" if c.mtu_peer else ""
        table.add_row(c.name, "yes", c.user, priv, *tools, c.kernel, clock, mtu)
    return table


def _clock_spread(checks: list[HostCheck], console: Console) -> None:
    offsets = [c.clock_offset_ns for c in checks if c.clock_offset_ns is not None]
    if len(offsets) > 1:
        spread = max(offsets) - min(offsets)
        worst = max(c.clock_error_ns or 0 for c in checks)
        console.print(
            f"clock spread between hosts: {spread / 1e6:.2f} ms (median offset to this machine "
            f"{signed(statistics.median(offsets) / 1e6, '.2f')} ms; each offset ± its error, the largest "
            f"{worst / 1e6:.2f} ms)",
            highlight=False,
        )


def _local(json_output: bool) -> None:
    """The local machine's checks; exit 0 when a campaign with the defaults can run, 1 otherwise."""
    from vnetbench.providers.local import doctor as local  # pyroute2: imported when needed

    checks = local.check_machine()
    code = 0 if local.ready(checks) else 1
    if json_output:
        print_json(local.as_json(checks))
        raise typer.Exit(code)
    table = Table("check", "", "detail", title=f"vnetbench doctor: this machine ({platform.release()})")
    for c in checks:
        mark = "[green]yes[/green]" if c.ok else ("[red]no[/red]" if c.needed else "[yellow]no[/yellow]")
        table.add_row(c.what, mark, c.detail)
    print_table(out, table)
    for c in checks:
        if not c.ok:
            colour = "red" if c.needed else "yellow"
            out.print(
                f"[{colour}]•[/{colour}] without {c.what}: {c.without}", highlight=False, soft_wrap=True
            )
        elif c.note:
            out.print(f"• {c.what}: {c.note}", highlight=False, soft_wrap=True)
    missing = [c.what for c in checks if c.needed and not c.ok]
    if missing:
        out.print(f"not ready: a campaign with the defaults needs {', '.join(missing)}", highlight=False)
    else:
        out.print("ready: campaigns with the defaults can run here (the local provider)", highlight=False)
    raise typer.Exit(code)
