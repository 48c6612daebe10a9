"""Every malformed spec gets located one-line errors (file:line: field.path: what and the fix) and exit code 2."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner, Result

from vnetbench.cli import app

VALID = """\
name: small
topology:
  sites: [ams, hou]
  hosts:
    - {name: h1, site: ams}
    - {name: h2, site: hou}
  nodes:
    - {name: vm1, host: h1}
    - {name: vm2, host: h1}
    - {name: vm3, host: h2}
  switches:
    - {name: sw, host: h1}
  links:
    - {endpoints: [vm1, sw], rate: 100mbit}
    - {endpoints: [vm2, sw], rate: 100mbit}
    - {name: wan, endpoints: [vm1, vm3], rate: 10mbit, overlay: vxlan}
measurements:
  - {name: tcp, kind: tcp, duration: 5s}
  - {name: udp, kind: udp, rate: link}
  - {name: ping, kind: rtt, count: 5, interval: 0.2s}
patterns:
  - {kind: pairs, pairs: [[vm1, vm2], [vm1, vm3]], measurements: [tcp, udp, ping]}
schedule: {repetitions: 2}
"""

# (id, text replacement (old, new) applied to VALID, expected line, expected field path, expected words)
CASES = [
    (
        "unknown-top-key",
        ("schedule:", "schedul:"),
        23,
        "schedul",
        "unknown key 'schedul'; did you mean 'schedule'? accepted here:",
    ),
    (
        "unknown-link-key",
        ("rate: 100mbit}\n    - {endpoints: [vm2", "rat: 100mbit}\n    - {endpoints: [vm2"),
        14,
        "topology.links[0].rat",
        "accepted here:",
    ),
    (
        "bad-rate-unit",
        ("rate: 10mbit,", "rate: 10mbits,"),
        16,
        "topology.links[2].rate",
        "expected a rate like",
    ),
    ("negative-rate", ("rate: 10mbit,", "rate: -5,"), 16, "topology.links[2].rate", "rate"),
    (
        "bad-duration",
        ("duration: 5s", "duration: 5 parsecs"),
        18,
        "measurements[0].duration",
        "expected a duration like",
    ),
    ("bad-interval", ("interval: 0.2s", "interval: soon"), 20, "measurements[2].interval", "duration"),
    ("bad-kind", ("kind: rtt", "kind: icmp"), 20, "measurements[2].kind", "'kind' must be one of"),
    (
        "missing-kind",
        ("{name: ping, kind: rtt, ", "{name: ping, "),
        20,
        "measurements[2].kind",
        "required field is missing: 'kind' must be one of 'tcp', 'udp', 'rtt'",
    ),
    (
        "link-to-missing-node",
        ("[vm2, sw]", "[vm9, sw]"),
        15,
        "topology.links[1].endpoints[0]",
        "no node or switch named 'vm9'",
    ),
    (
        "node-on-missing-host",
        ("{name: vm3, host: h2}", "{name: vm3, host: h7}"),
        10,
        "topology.nodes[2].host",
        "no host named 'h7'",
    ),
    (
        "host-in-missing-site",
        ("{name: h2, site: hou}", "{name: h2, site: sfo}"),
        6,
        "topology.hosts[1].site",
        "no site named 'sfo'",
    ),
    (
        "pattern-unlinked",
        ("[[vm1, vm2], [vm1, vm3]]", "[[vm1, vm2], [vm2, vm3]]"),
        22,
        "patterns[0].pairs[1][1]",
        "share no link or switch",
    ),
    (
        "pattern-missing-node",
        ("[[vm1, vm2], [vm1, vm3]]", "[[vm1, vm2], [vm1, vm8]]"),
        22,
        "patterns[0].pairs[1][1]",
        "no node named 'vm8'",
    ),
    (
        "pattern-missing-measurement",
        ("measurements: [tcp, udp, ping]", "measurements: [tcp, iperf]"),
        22,
        "patterns[0].measurements[1]",
        "no measurement named 'iperf'",
    ),
    (
        "duplicate-node",
        ("{name: vm2, host: h1}", "{name: vm1, host: h1}"),
        9,
        "topology.nodes[1].name",
        "used twice",
    ),
    ("duplicate-yaml-key", ("{name: small", "{name: small"), None, None, None),  # placeholder replaced below
    (
        "self-link",
        ("[vm1, vm3], rate: 10mbit", "[vm1, vm1], rate: 10mbit"),
        16,
        "topology.links[2].endpoints",
        "two different ends",
    ),
    (
        "overlay-same-host",
        ("[vm2, sw], rate: 100mbit}", "[vm2, sw], rate: 100mbit, overlay: vxlan}"),
        15,
        "topology.links[1].overlay",
        "an overlay joins different hosts",
    ),
    ("bad-overlay", ("overlay: vxlan", "overlay: gre"), 16, "topology.links[2].overlay", "'vxlan'"),
    (
        "bad-switch-kind",
        ("{name: sw, host: h1}", "{name: sw, host: h1, kind: cisco}"),
        12,
        "topology.switches[0].kind",
        "'linux-bridge' or 'ovs'",
    ),
    ("bad-name", ("name: small", "name: 'small campaign!'"), 1, "name", "letters, digits"),
    (
        "zero-repetitions",
        ("repetitions: 2", "repetitions: 0"),
        23,
        "schedule.repetitions",
        "greater than or equal",
    ),
    (
        "bad-loss",
        ("rate: 10mbit,", "rate: 10mbit, loss: 150%,"),
        16,
        "topology.links[2].loss",
        "outside 0–100 %",
    ),
    (
        "bad-mtu",
        ("rate: 10mbit,", "rate: 10mbit, mtu: 70000,"),
        16,
        "topology.links[2].mtu",
        "less than or equal",
    ),
    (
        "missing-nodes",
        (
            "  nodes:\n    - {name: vm1, host: h1}\n    - {name: vm2, host: h1}\n    - {name: vm3, host: h2}\n",
            "",
        ),
        2,
        "topology.nodes",
        "required field is missing",
    ),
    (
        "host-needs-site",
        ("{name: h2, site: hou}", "{name: h2}"),
        6,
        "topology.hosts[1].site",
        "required when there is more than one site",
    ),
    (
        "jitter-without-delay",
        ("rate: 10mbit,", "rate: 10mbit, jitter: 5ms,"),
        16,
        "topology.links[2].jitter",
        "jitter needs a delay",
    ),
    ("not-a-mapping", None, 1, "", "a campaign is a YAML mapping"),
    ("bad-yaml", None, 4, "", "not valid YAML"),
    (
        "udp-link-rate-unshaped",
        (
            "{endpoints: [vm1, sw], rate: 100mbit}\n    - {endpoints: [vm2, sw], rate: 100mbit}",
            "{endpoints: [vm1, sw]}\n    - {endpoints: [vm2, sw]}",
        ),
        19,
        "measurements[1].rate",
        "has no link with a rate",
    ),
    (
        "bad-size",
        ("{name: udp, kind: udp, rate: link}", "{name: udp, kind: udp, rate: link, length: 12 bytes}"),
        19,
        "measurements[1].length",
        "expected a size in bytes",
    ),
]


def _text(case: tuple) -> str:
    name, change = case[0], case[1]
    if name == "not-a-mapping":
        return "- just\n- a list\n"
    if name == "bad-yaml":
        return "name: x\ntopology:\n  nodes: [a, b\n  links: }\n"
    if name == "duplicate-yaml-key":
        return VALID.replace(
            "schedule: {repetitions: 2}", "schedule: {repetitions: 2}\nschedule: {repetitions: 3}"
        )
    old, new = change
    assert old in VALID, f"{name}: replacement target not found"
    return VALID.replace(old, new, 1)


def _validate(tmp_path: Path, text: str) -> Result:
    """`vnetbench validate` in this process (click's runner: the same command, arguments, exit code
    and stderr as the installed script, without a Python start-up per case); the real script is
    run once below."""
    spec = tmp_path / "campaign.yaml"
    spec.write_text(text)
    return CliRunner().invoke(app, ["validate", str(spec)])


def test_the_base_spec_is_valid(tmp_path: Path) -> None:
    (tmp_path / "campaign.yaml").write_text(VALID)
    result = subprocess.run(
        [sys.executable, "-m", "vnetbench.cli", "validate", str(tmp_path / "campaign.yaml")],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    assert "valid" in result.stdout


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_malformed_spec_gets_a_located_error(tmp_path: Path, case: tuple) -> None:
    name, _, line, path, words = case
    if name == "duplicate-yaml-key":
        line, path, words = 24, "schedule", "appears twice"
    result = _validate(tmp_path, _text(case))
    assert result.exit_code == 2, result.stdout + result.stderr
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    errors = [ln for ln in result.stderr.splitlines() if ln.startswith("error:")]
    assert errors, result.stderr
    first = errors[0]
    match = re.match(r"error: (?P<file>[^:]+)(:(?P<line>\d+))?: (?P<rest>.*)$", first)
    assert match, first
    assert match["file"].endswith("campaign.yaml")
    if line:
        assert int(match["line"]) == line, first
    if path:
        assert match["rest"].startswith(path + ": "), first
    assert words in match["rest"], first


def test_missing_file_is_a_usage_error(tmp_path: Path) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "vnetbench.cli", "validate", str(tmp_path / "nope.yaml")],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 2
    assert "no such file" in result.stderr
