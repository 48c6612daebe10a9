"""`vnetbench compare --help` names every reason a row is missing and the tolerance's absolute floors,
and `--tolerance` out of range says the valid range. Through the real CLI app (typer's CliRunner)."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner, Result

from vnetbench.analysis.compare import FLOOR
from vnetbench.cli import app


def _invoke(*args: str) -> Result:
    return CliRunner().invoke(app, list(args), env={"COLUMNS": "120"})


def test_help_names_every_missing_reason_and_the_floors() -> None:
    """The floors are compare.FLOOR's: loss 0.001 as a ratio = 0.1 percentage point, RTT and jitter
    50 000 ns = 50 µs (was: the help said only '± this share of A', and left out 'no value', the
    reason given when every sample of a campaign is before its analysis.omit)."""
    res = _invoke("compare", "--help")
    assert res.exit_code == 0, res.output
    text = " ".join(res.output.replace("│", " ").split())  # rich wraps the help inside a box
    assert "listed with why: failed in it, not in its plan, not run in it, or no value in it" in text
    assert "(e.g. no sample at or after its analysis.omit)" in text
    loss_pp, rtt_us = 100 * FLOOR["loss_ratio"], FLOOR["rtt_ns"] / 1000
    assert (loss_pp, rtt_us, FLOOR["jitter_mean_ns"] / 1000) == (0.1, 50, 50)
    assert (
        f"within an absolute floor if larger ({loss_pp:g} percentage point of loss, {rtt_us:g} µs of RTT and "
        "jitter)" in text
    )
    assert "from 0 up to, not including, 100 %" in text


@pytest.mark.parametrize("tolerance", ["200%", "1", "100%", "-1%", "abc", "nan"])
def test_a_tolerance_out_of_range_says_the_range(tolerance: str) -> None:
    res = _invoke("compare", "a", "b", "--tolerance", tolerance)
    assert (res.exit_code, res.output) == (
        2,
        f"error: --tolerance {tolerance}: give a share from 0 up to, not including, 100 %, such as 5% or "
        "0.05\n",
    )


@pytest.mark.parametrize("tolerance", ["0", "0.0", "0%", "99.9%", "5%", "0.05"])
def test_a_tolerance_in_range_is_taken(tmp_path: Path, tolerance: str) -> None:
    # taken: the command goes on to look for the store (here missing), not a --tolerance error
    res = _invoke("compare", "a", "b", "--db", str(tmp_path / "none.db"), "--tolerance", tolerance)
    assert res.exit_code == 2 and res.output.startswith("error: a: no store at "), res.output
