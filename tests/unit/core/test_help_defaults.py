"""Every option's --help states its default: a user who leaves an option out learns from the help what
happens, and the help says what the code does (each default checked against the code's)."""

from __future__ import annotations

from typer.testing import CliRunner

from vnetbench.cli import app

WIDE = {"COLUMNS": "400"}  # no help line wrapped


def _option_line(command: str, option: str) -> str:
    res = CliRunner().invoke(app, [command, "--help"], env=WIDE)
    assert res.exit_code == 0, res.output
    return next(line for line in res.output.splitlines() if f"│ {option} " in line)


def test_report_help_states_where_the_report_goes_without_out() -> None:
    # said only "directory for index.html and figures": without --out it is reports/NAME-ID, as run's
    # --report says (write_report's default)
    line = _option_line("report", "--out,--report")  # --report: as run, resume and dashboard spell it
    assert "directory for index.html and figures (default: reports/NAME-ID)" in line


def test_clean_help_states_which_stores_it_reads_without_db() -> None:
    # said only "store to read ownership records from", no default: without --db (or VNETBENCH_DB)
    # clean reads every store a live build of this machine registered, and ./vnetbench.db (_locations)
    line = _option_line("clean", "--db")
    assert (
        "store to read ownership records from (default: the stores of the builds this machine registered "
        "as live, and ./vnetbench.db)" in line
    )


def test_doctor_help_states_where_install_probe_copies_without_probe_path() -> None:
    # said only "where --install-probe puts vnb-probe": no default, and not that a host's `tools` path
    # in the inventory comes first (docs/ssh-provider.md; run_checks installs to h.tools.get(...))
    from vnetbench.providers.ssh.doctor import DEFAULT_PROBE_PATH

    line = _option_line("doctor", "--probe-path")
    assert (
        "where --install-probe puts vnb-probe on a host whose inventory names no `tools` path for it "
        f"(default: {DEFAULT_PROBE_PATH})" in line
    )


def test_json_help_of_campaigns_and_scenarios_list_says_array() -> None:
    # said "print one JSON object instead of tables": both print a JSON array, one object per row
    expected = "print one JSON array, an object per row, instead of the table (SI base units)"
    assert expected in _option_line("campaigns", "--json")
    res = CliRunner().invoke(app, ["scenarios", "list", "--help"], env=WIDE)
    assert expected in next(line for line in res.output.splitlines() if "│ --json " in line)
    listed = CliRunner().invoke(app, ["scenarios", "list", "--json"], env=WIDE)
    assert listed.output.startswith("[")
