"""iperf3 -O runs the omitted warm-up before the -t test (`iperf3 -t 1 -O 2` takes 3 s): a tcp or udp
measurement's planned time, behind the ETA, the default timeout and the timeout check, is omit +
duration."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from tests.helpers.specs import two_node_spec
from vnetbench.cli import app
from vnetbench.plan import make_plan
from vnetbench.spec.loader import parse_spec

SPEC = two_node_spec(
    "warm",
    {
        "tcp": "kind: tcp, duration: 3s, omit: 2sEXTRA",
        "udp": "kind: udp, duration: 3s, omit: 1s, rate: 10mbit",
    },
)


def test_the_plan_counts_the_omitted_warm_up() -> None:
    # was 3 s each (duration alone): the ETA said ~6 s for 9 s of iperf3, and the default timeout
    # (planned + 45 s) could end a step with omit > 45 s before its tool finished
    plan = make_plan(parse_spec(SPEC.replace("EXTRA", "")), "c0ffee00", 1)
    assert [s.planned_ns for s in plan.steps] == [5 * 10**9, 4 * 10**9]
    assert plan.planned_text() == "~9 s of measuring"


def test_a_timeout_shorter_than_warm_up_and_test_is_refused(tmp_path: Path) -> None:
    # timeout 4s > duration 3s was accepted, though iperf3 runs 5 s: every step would be killed
    spec = tmp_path / "w.yaml"
    spec.write_text(SPEC.replace("EXTRA", ", timeout: 4s"))
    res = CliRunner().invoke(app, ["validate", str(spec)], env={"COLUMNS": "400"})
    assert res.exit_code == 2, res.output
    assert (
        "measurements[0].timeout: 4 s is not longer than the measurement runs (5 s): every step would be "
        "ended before its tool finishes; give more, or remove it (the default is that + 45 s)"
    ) in res.output
