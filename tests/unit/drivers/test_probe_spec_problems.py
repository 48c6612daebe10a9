"""What vnb-probe cannot do with a pps, trace, cpushare or probe-rtt measurement is refused by
`vnetbench validate` (and run) at the field, with the fix: a `duration: 0` used to pass validation and
fail every step at the tool (`seconds must be > 0`), a 0.5 µs trace bin or cpushare threshold silently
ran as 1 µs."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from vnetbench.cli import app
from vnetbench.drivers.probe import ProbeFlowDriver
from vnetbench.spec.loader import parse_spec

SPEC = """\
name: probes
topology:
  nodes: [{name: vm1}, {name: vm2}]
  links:
    - {name: ab, endpoints: [vm1, vm2], rate: 100mbit}
measurements:
  - {name: sweep, kind: pps, rates: [1000, 5000], duration: 2s}
  - {name: tr, kind: trace, rate: 10mbit, duration: 2s, bin: 1ms}
  - {name: cpu, kind: cpushare, duration: 2s}
  - {name: prtt, kind: probe-rtt, count: 10, interval: 10ms}
patterns:
  - {name: p, kind: pairs, pairs: [[vm1, vm2]], measurements: [sweep, tr, prtt]}
  - {name: n, kind: nodes, nodes: [vm1], measurements: [cpu]}
"""


def validate(tmp_path: Path, text: str) -> tuple[int, list[str]]:
    spec = tmp_path / "c.yaml"
    spec.write_text(text)
    result = CliRunner().invoke(app, ["validate", str(spec)])
    prefix = f"error: {spec}"
    return result.exit_code, [
        ln.removeprefix(prefix) for ln in result.stderr.splitlines() if ln.startswith("error:")
    ]


def test_the_base_spec_validates(tmp_path: Path) -> None:
    assert validate(tmp_path, SPEC) == (0, [])


@pytest.mark.parametrize(
    ("old", "new", "expected"),
    [
        (
            "rates: [1000, 5000], duration: 2s",
            "rates: [1000, 5000], duration: 0",
            ":7: measurements[0].duration: duration 0 s: vnb-probe needs a time longer than 0; "
            "use e.g. duration: 5s",
        ),
        (
            "rates: [1000, 5000], duration: 2s",
            "rates: [1, 5000], duration: 300ms",
            ":7: measurements[0].duration: duration 0.3 s at 1 packets/s (the lowest of rates) sends no "
            "packet (vnb-probe sends round(packets/s × duration)); give at least 0.5s",
        ),
        (
            "rate: 10mbit, duration: 2s",
            "rate: 10mbit, duration: 0s",
            ":8: measurements[1].duration: duration 0 s: vnb-probe needs a time longer than 0; "
            "use e.g. duration: 5s",
        ),
        (
            "bin: 1ms",
            "bin: 500ns",
            ":8: measurements[1].bin: bin 500 ns: vnb-probe takes whole microseconds, at least 1 µs "
            "(this would run as 1 µs); use e.g. bin: 1ms",
        ),
        (
            "bin: 1ms",
            "bin: 3s",
            ":8: measurements[1].bin: bin 3 s is longer than the duration (2 s): the trace would have one "
            "partial bin; give a bin a small part of the duration, e.g. bin: 10ms",
        ),
        (
            # the receiver keeps 3.6M bins: the trace of the last 0.4 s would be missing
            "duration: 2s, bin: 1ms",
            "duration: 4s, bin: 1us",
            ":8: measurements[1].bin: bin 1 µs over 4 s is 4,000,000 bins; vnb-probe keeps at most "
            "3,600,000 and leaves later packets out of the trace: give a bin of at least 2 µs, e.g. bin: 1ms",
        ),
        (
            "cpushare, duration: 2s",
            "cpushare, duration: 0",
            ":9: measurements[2].duration: duration 0 s: vnb-probe needs a time longer than 0; "
            "use e.g. duration: 5s",
        ),
        (
            "cpushare, duration: 2s",
            "cpushare, duration: 2s, threshold: 0",
            ":9: measurements[2].threshold: threshold 0 ns: vnb-probe takes whole microseconds, at least "
            "1 µs (this would run as 1 µs); use e.g. threshold: 100us",
        ),
        (
            "cpushare, duration: 2s",
            "cpushare, duration: 2s, threshold: 2s",
            ":9: measurements[2].threshold: threshold 2 s is not shorter than the duration (2 s): no time "
            "off the CPU could be counted; use e.g. threshold: 100us",
        ),
        (
            "interval: 10ms",
            "interval: 0",
            ":10: measurements[3].interval: interval 0 s: vnb-probe needs a time longer than 0; "
            "use e.g. interval: 10ms",
        ),
        (
            "interval: 10ms",
            "interval: 10ms, wait: 0",
            ":10: measurements[3].wait: wait 0 s: vnb-probe needs a time longer than 0; use e.g. wait: 1s",
        ),
    ],
)
def test_what_vnb_probe_cannot_do_is_refused_at_the_field(
    tmp_path: Path, old: str, new: str, expected: str
) -> None:
    assert old in SPEC, old
    code, errors = validate(tmp_path, SPEC.replace(old, new, 1))
    assert (code, errors) == (2, [expected])


def test_a_background_flow_may_send_slower_than_a_packet_per_step() -> None:
    # its duration is the step's it accompanies, not its own: only a zero one is refused
    m = parse_spec(
        SPEC.replace(
            "  - {name: cpu,",
            "  - {name: bg, kind: background, rate: 1kbit, pairs: [[vm1, vm2]]}\n  - {name: cpu,",
        ),
        "c.yaml",
    ).campaign.measurement("bg")
    assert ProbeFlowDriver().spec_problems(m) == []
