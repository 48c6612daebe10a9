"""Terminal tables keep every number whole (issue #15): a table that fits is printed as a table, one
that does not (80 columns, or a pipe) one record per block; `--json` on every tabular command."""

from __future__ import annotations

import io
import json
from pathlib import Path

from rich.console import Console
from typer.testing import CliRunner

from tests.helpers.stores import campaign_store
from vnetbench.cli import app
from vnetbench.cli.output import print_table
from vnetbench.report.view import TableView

WIDE = TableView(
    "Rebuilds against the first build",
    ["metric", "first build mean (n)", "rebuilds", "mean of rebuilds", "CV", "difference", "Welch interval"],
    [
        ["tcp vma→vmb throughput (Mbit/s)", "95.26 (3)", "5", "95.08", "0.21%", "-0.1746 (-0.18%)", "(-0.7779, 0.4287)"],
        ["rtt vmc→vmd rtt mean (ms)", "0.0760 (3)", "5", "0.0795", "11.90%", "+0.00351 (4.61%)", "(-0.0114, 0.0184)"],
    ],
    "thresholds: CV ≤ 5 %, difference within ±5 % of the first build",
)  # fmt: skip


def _printed(table: TableView, width: int) -> str:
    buffer = io.StringIO()
    print_table(Console(file=buffer, width=width), table)
    return buffer.getvalue()


def test_a_wide_table_at_80_columns_is_one_block_per_record_with_every_number_whole() -> None:
    text = _printed(WIDE, 80)
    assert "…" not in text and max(len(line) for line in text.splitlines()) <= 80
    assert "── metric: tcp vma→vmb throughput (Mbit/s)" in text
    lines = text.splitlines()
    for row in WIDE.rows:
        for header, cell in zip(WIDE.columns[1:], row[1:], strict=True):
            assert any(line.startswith(header) and line.endswith(cell) for line in lines), (header, cell)


def test_a_table_that_fits_stays_a_table() -> None:
    text = _printed(WIDE, 200)
    assert "┃ metric" in text and "── metric" not in text
    assert all(cell in text for row in WIDE.rows for cell in row)


def test_a_label_value_table_wraps_its_values_instead() -> None:
    facts = TableView(
        "", ["", ""], [["factors", "offered ∈ [2000000, 5000000, 10000000] (measurements.udp.rate)"]]
    )
    text = _printed(facts, 60)
    assert "── " not in text and "10000000]" in text and "[2000000," in text


def test_every_tabular_command_has_json(tmp_path: Path) -> None:
    store = campaign_store(tmp_path / "s.db", status="finished")
    store.close()
    runner = CliRunner()
    campaigns = runner.invoke(app, ["campaigns", "--db", str(tmp_path / "s.db"), "--json"])
    assert campaigns.exit_code == 0 and json.loads(campaigns.output)[0]["id"] == "c1"
    listed = runner.invoke(app, ["scenarios", "list", "--json"])
    assert listed.exit_code == 0 and "exogeni-exp5" in {s["name"] for s in json.loads(listed.output)}
    for command in (["analyze"], ["loss"], ["stats"], ["compare"], ["doctor"], ["validate"], ["campaigns"]):
        help_text = runner.invoke(app, [*command, "--help"], env={"COLUMNS": "200"}).output
        assert "--json" in help_text, command


def test_captions_and_titles_are_broken_at_spaces_never_at_a_hyphen() -> None:
    # quickstart (campaign efd6a61d), `vnetbench loss`: the note under the table printed
    # "… (iperf3's UDP connect, vnb-" and "probe's FIN copies) …" on the next line
    note = (
        "Counts are in datagrams: interface counters (frames) minus the sender's TCP/ICMP packets and the "
        "tool's own set-up and end datagrams (iperf3's UDP connect, vnb-probe's FIN copies), divided by the "
        "fragments per datagram."
    )
    table = TableView("Loss localization", WIDE.columns, WIDE.rows, note)
    lines = _printed(table, 80).splitlines()
    assert any("vnb-probe's" in line for line in lines)
    assert not any(line.rstrip().endswith("-") for line in lines)
