"""What a new user meets at the command line: help that reads as written, errors that show what was
typed (no rich markup, no emoji, no traceback) and say what to do."""

from __future__ import annotations

from typer.testing import CliRunner

from vnetbench.cli import app

WIDE = {"COLUMNS": "250"}  # no line of these helps needs wrapping at this width


def _line_with(text: str, needle: str) -> str:
    return next(line for line in text.splitlines() if needle in line)


def test_top_level_help_keeps_each_command_summary_on_one_line() -> None:
    res = CliRunner().invoke(app, ["--help"], env=WIDE)
    assert res.exit_code == 0, res.output
    # the docstrings' hard line breaks used to split these sentences over two lines
    assert "fairness, UDP effective throughput" in _line_with(res.output, "│ analyze ")
    assert "a verdict (same / better / worse)" in _line_with(res.output, "│ compare ")
    assert "only objects recorded as ours" in _line_with(res.output, "│ clean ")
    assert "path MTU. Without --inventory" in _line_with(res.output, "│ doctor ")


def test_a_command_help_joins_the_lines_of_each_paragraph() -> None:
    res = CliRunner().invoke(app, ["monitor", "--help"], env=WIDE)
    assert res.exit_code == 0, res.output
    assert "a random `slip`, `max_runs`, `until`." in _line_with(res.output, "block says when")
    assert "a monitor killed and started again" in _line_with(res.output, "ONE campaign")
