"""`run --set PATH=VALUE`: the spec text the store keeps is the one that ran. It kept the file's own
text, so a campaign run with `--set topology.links.direct.rate=10mbit` showed the file's 20 Mbit/s in
its report (the spec section, the bandwidth-delay table) and `resume` ran its rest at 20 Mbit/s."""

from __future__ import annotations

import pytest

from vnetbench.plan import make_plan
from vnetbench.scenarios import Scenario, all_scenarios
from vnetbench.spec.errors import SpecInvalid
from vnetbench.spec.loader import parse_spec

SPEC = """\
name: sets
topology:
  nodes: [{name: n1}, {name: n2}]
  links:
    - {name: direct, endpoints: [n1, n2], rate: 20mbit}   # a comment the file keeps
measurements:
  - {name: tcp, kind: tcp, duration: 3s}
patterns:
  - {name: p, kind: pairs, pairs: [[n1, n2]], measurements: [tcp]}
schedule: {repetitions: 2}
"""


def test_the_kept_text_is_the_spec_with_its_overrides() -> None:
    loaded = parse_spec(SPEC, "c.yaml", overrides={"topology.links.direct.rate": "10mbit"})
    assert loaded.campaign.topology.links[0].rate == 10_000_000
    again = parse_spec(loaded.text, loaded.source)  # what resume, report and analyze read back
    assert again.campaign == loaded.campaign
    assert again.campaign.topology.links[0].rate == 10_000_000
    assert loaded.text.startswith('# c.yaml as run, with:\n#   --set topology.links.direct.rate="10mbit"\n')
    assert "rate: 20mbit" not in loaded.text


def test_resume_plans_the_same_steps_as_the_run() -> None:
    loaded = parse_spec(SPEC, "c.yaml", overrides={"schedule.repetitions": 3})
    run = make_plan(loaded, "cafe0001", 7)
    resumed = make_plan(parse_spec(loaded.text, loaded.source), "cafe0001", 7)
    assert [s.key for s in resumed.steps] == [s.key for s in run.steps]
    assert len(run.steps) == 3


def test_without_overrides_the_file_is_kept_as_written() -> None:
    loaded = parse_spec(SPEC, "c.yaml")
    assert loaded.text == SPEC


@pytest.mark.parametrize("scenario", all_scenarios(), ids=lambda sc: sc.name)
def test_every_scenario_survives_the_round_trip(scenario: Scenario) -> None:
    loaded = parse_spec(scenario.text, f"scenario:{scenario.name}", overrides={"description": "x"})
    assert parse_spec(loaded.text, loaded.source).campaign == loaded.campaign


def test_an_invalid_override_is_named_beside_the_file_line() -> None:
    # the error's line is the file's, where the rate is still 20mbit: the message says what was set
    with pytest.raises(SpecInvalid) as err:
        parse_spec(SPEC, "c.yaml", overrides={"topology.links.direct.rate": "100mbits"})
    (error,) = err.value.errors
    assert str(error).startswith("c.yaml:5: topology.links[0].rate: '100mbits' is not a rate")
    assert str(error).endswith('(with --set topology.links.direct.rate="100mbits")')
