"""Errors only the plan finds (factor levels, the tools' limits, the schedule), located at the field
the user must change, with the fix: `vnetbench validate` reports them before anything is built."""

from __future__ import annotations

import pytest

from vnetbench.plan import make_plan
from vnetbench.scenarios import Scenario, all_scenarios
from vnetbench.spec.errors import SpecInvalid
from vnetbench.spec.loader import parse_spec

SPEC = """\
name: small
topology:
  nodes: [{name: vm1}, {name: vm2}]
  links:
    - {name: ab, endpoints: [vm1, vm2], rate: 100mbit}
measurements:
  - {name: tcp, kind: tcp, duration: 2s}
  - {name: ping, kind: rtt, count: 5, interval: 200ms}
patterns:
  - {name: p, kind: pairs, pairs: [[vm1, vm2]], measurements: [tcp, ping]}
factors:
  - {name: cc, path: measurements.tcp.congestion, levels: [cubic, reno]}
  - {name: rate, path: topology.links.ab.rate, levels: [10mbit, 100mbit]}
"""


def plan_errors(old: str, new: str) -> list[str]:
    assert old in SPEC, old
    with pytest.raises(SpecInvalid) as info:
        make_plan(parse_spec(SPEC.replace(old, new, 1), "c.yaml"), "00000000", 0)
    return [str(e).removeprefix("c.yaml") for e in info.value.errors]


def test_the_base_spec_plans() -> None:
    assert len(make_plan(parse_spec(SPEC, "c.yaml"), "00000000", 0).steps) == 8


def test_a_level_the_field_refuses_is_located_at_the_level() -> None:
    # was "c.yaml: topology.links[0].rate: … (with factor levels …)": no line, and the link's path
    assert plan_errors("levels: [10mbit, 100mbit]", "levels: [10mbit, fast]") == [
        ":13: factors[1].levels[1]: level 'fast' for topology.links.ab.rate (topology.links[0].rate): "
        "'fast' is not a rate; expected a rate like 10mbit, 100mbit, 1gbit, 2.5gbit or 500kbit "
        "(bits per second, SI prefixes)"
    ]


def test_a_path_to_a_misspelt_field_is_located_at_the_path() -> None:
    # was located at measurements[0].congestoin, a field nobody wrote, without a line
    (found,) = plan_errors("measurements.tcp.congestion", "measurements.tcp.congestoin")
    assert found.startswith(
        ":12: factors[0].path: 'measurements.tcp.congestoin' names no field (measurements[0].congestoin): "
        "unknown key 'congestoin'; did you mean 'congestion'?"
    )


def test_two_factors_with_one_name_or_one_path_are_refused() -> None:
    # both were valid: the second factor silently overwrote the first's levels in every treatment
    assert plan_errors("{name: rate,", "{name: cc,") == [
        ":13: factors[1].name: 'cc' is used twice (first at position 1); names must be unique"
    ]
    assert plan_errors(
        "path: topology.links.ab.rate, levels: [10mbit, 100mbit]",
        "path: measurements.0.congestion, levels: [bbr, htcp]",
    ) == [
        ":13: factors[1].path: 'measurements.0.congestion' is set by factor 'cc' (factors[0]) too; each factor "
        "sets a field of its own: merge their levels into one factor, or remove one"
    ]


@pytest.mark.parametrize(
    ("old", "new", "expected"),
    [
        (  # iperf3 would have refused it in the middle of the run (a ValueError from the driver)
            "duration: 2s",
            "duration: 0",
            ":7: measurements[0].duration: duration 0 s: iperf3 3.12 takes whole seconds from 1 to 86400; "
            "use e.g. duration: 2s",
        ),
        (
            "duration: 2s",
            "duration: 1.5s",
            ":7: measurements[0].duration: duration 1.5 s: iperf3 3.12 takes whole seconds from 1 to 86400 "
            "(it would silently cut 1.5 s to 1 s); use e.g. duration: 2s",
        ),
        (
            "interval: 200ms",
            "interval: 0",
            ":8: measurements[1].interval: interval 0 ms: ping sends at most every 2 ms unless it runs as root; "
            "use 2ms or more",
        ),
    ],
)
def test_what_the_tool_cannot_do_is_refused_by_the_plan(old: str, new: str, expected: str) -> None:
    (found,) = plan_errors(old, new)
    assert found.startswith(expected), found


def test_a_ping_interval_in_fractions_of_a_millisecond_gets_one_consistent_fix() -> None:
    # 1.5 ms: the rounding fix said 'use e.g. interval: 1ms' and the next error 'use 2ms or more'
    assert plan_errors("interval: 200ms", "interval: 1500us") == [
        ":8: measurements[1].interval: interval 1.5 ms: ping counts whole milliseconds; use e.g. interval: 2ms",
        ":8: measurements[1].interval: interval 1.5 ms: ping sends at most every 2 ms unless it runs as root; "
        "use 2ms or more",
    ]
    (found,) = plan_errors("interval: 200ms", "interval: 2500us")  # above the minimum: rounds down
    assert found.endswith("ping counts whole milliseconds; use e.g. interval: 2ms")


def test_an_interval_shorter_than_a_repetition_is_refused() -> None:
    # 4 treatments × (2 s of TCP + 1 s of ping) per repetition: an interval of 1 s cannot be kept
    found = plan_errors("factors:", "schedule: {repetitions: 3, interval: 1s}\nfactors:")
    assert found == [
        ":11: schedule.interval: 1 s is shorter than one repetition's measuring alone (12 s): repetitions "
        "would start late, not every 1 s; give at least 12s, or 0 to run them back to back"
    ]


def test_a_timeout_no_longer_than_the_measurement_is_refused() -> None:
    # was valid: every step ended at its timeout, before iperf3 finished, and failed
    assert plan_errors("duration: 2s}", "duration: 2s, timeout: 1s}") == [
        ":7: measurements[0].timeout: 1 s is not longer than the measurement runs (2 s): every step would be "
        "ended before its tool finishes; give more, or remove it (the default is that + 45 s)"
    ]


def test_a_mesh_of_one_node_is_refused() -> None:
    # was valid and measured nothing
    (found,) = plan_errors(
        "{name: p, kind: pairs, pairs: [[vm1, vm2]],", "{name: p, kind: mesh, nodes: [vm1],"
    )
    assert found == ":10: patterns[0].nodes: a mesh of 1 node has no pair to measure: list at least two nodes"


def test_a_stored_campaign_plans_without_the_checks_added_since_it_ran() -> None:
    # resume, the report and the dashboard plan a stored campaign: its measured steps stay readable
    old = SPEC.replace("duration: 2s", "duration: 2s, timeout: 1s").replace(
        "path: topology.links.ab.rate, levels: [10mbit, 100mbit]",
        "path: measurements.0.congestion, levels: [bbr, htcp]",
    )
    with pytest.raises(SpecInvalid):
        make_plan(parse_spec(old, "c.yaml"), "00000000", 0)
    assert len(make_plan(parse_spec(old, "c.yaml", stored=True), "00000000", 0).steps) == 8


@pytest.mark.parametrize("scenario", all_scenarios(), ids=lambda sc: sc.name)
def test_every_builtin_scenario_passes_every_check(scenario: Scenario) -> None:
    # what `vnetbench validate` runs on a new spec (parse, then the plan's checks): no check added
    # here may refuse a scenario vnetbench ships, the quickstart included
    assert make_plan(parse_spec(scenario.text, f"scenario:{scenario.name}"), "00000000", 0).steps


@pytest.mark.parametrize("scenario", all_scenarios(), ids=lambda sc: sc.name)
def test_every_study_scenario_names_its_tcp_congestion_control(scenario: Scenario) -> None:
    # A scenario repeats a study: its TCP must not take the machine's default (bbr on some hosts,
    # which ignores random loss: benchmarks/fidelity/tcp_loss.py). The quickstart is a tour and
    # keeps the default, which its report names.
    spec = parse_spec(scenario.text, f"scenario:{scenario.name}").campaign
    set_by_factor = {f.path.split(".")[1] for f in spec.factors if f.path.endswith(".congestion")}
    unnamed = [
        m.name
        for m in spec.measurements
        if m.kind == "tcp" and not m.congestion and m.name not in set_by_factor
    ]
    assert unnamed == [] or scenario.name == "quickstart", unnamed


def test_an_analysis_response_analyze_cannot_model_is_refused_with_the_names_it_can() -> None:
    # 'loss_ration' validated and analyze then fitted no model and said nothing
    spec = SPEC + "analysis: {response: loss_ration}\n"
    with pytest.raises(SpecInvalid) as info:
        parse_spec(spec, "c.yaml")
    (error,) = [str(e) for e in info.value.errors]
    assert error == (
        "c.yaml:14: analysis.response: 'loss_ration' is not a response analyze can model; did you mean "
        "'loss_ratio'? use one of throughput_bps, total_throughput_bps, jain_index, loss_ratio, "
        "effective_throughput_bps, rtt_mean_ns, or remove response to model each kind's default"
    )
    assert (
        parse_spec(SPEC + "analysis: {response: jain_index}\n", "c.yaml").campaign.analysis.response
        == "jain_index"
    )
    stored = parse_spec(spec, "c.yaml", stored=True)  # a stored campaign stays readable
    assert stored.campaign.analysis.response == "loss_ration"


def test_the_responses_a_spec_may_name_are_the_columns_analyze_models() -> None:
    """spec.models.RESPONSES (what `analysis.response` accepts) is written apart from the analysis that
    fits them: every kind's default response must be accepted, and every accepted name must be a column
    of the per-group table the models are fitted to (analysis/campaign_data.py)."""
    import pandas as pd

    from vnetbench.analysis import campaign_data as cd
    from vnetbench.spec.models import RESPONSES

    defaults = {name for names in cd.RESPONSES.values() for name in names}
    assert defaults <= set(RESPONSES)
    flows = pd.DataFrame(
        {
            "step_key": ["s"], "group_kind": ["pair"], "series": ["p"], "pattern": ["p"], "measurement": ["m"],
            "kind": ["tcp"], "repetition": [1],
            "build": [0], "started_utc_ns": [0], "throughput_bps": [1e6], "loss_ratio": [0.0],
            "effective_throughput_bps": [1e6], "rtt_mean_ns": [1e6],
        }
    )  # fmt: skip
    groups = cd.group_table(flows, [])
    assert set(RESPONSES) <= set(groups.columns), set(RESPONSES) - set(groups.columns)


PROBES = """\
name: probes
topology:
  nodes: [{name: vm1}, {name: vm2}, {name: vm3}]
  links:
    - {endpoints: [vm1, vm2], rate: 100mbit}
    - {endpoints: [vm2, vm3], rate: 1gbit, mtu: 9000}
measurements:
  - {name: sweep, kind: pps, rates: [1000], sizes: [18, SWEEP], duration: 1s}
  - {name: echo, kind: probe-rtt, count: 5, size: ECHO}
  - {name: bg, kind: background, pairs: [[vm1, vm2]], pps: 100, size: BG}
patterns:
  - {name: p, kind: pairs, pairs: [[vm1, vm2], [vm2, vm3]], measurements: [sweep, echo], background: [bg]}
"""


def probe_plan_errors(sweep: int, echo: int, bg: int, jumbo_only: bool = False) -> list[str]:
    text = PROBES.replace("SWEEP", str(sweep)).replace("ECHO", str(echo)).replace("BG", str(bg))
    if jumbo_only:  # every flow on the MTU 9000 link
        text = text.replace("[[vm1, vm2], [vm2, vm3]]", "[[vm2, vm3]]").replace(
            "[[vm1, vm2]]", "[[vm3, vm2]]"
        )
    try:
        make_plan(parse_spec(text, "c.yaml"), "00000000", 0)
    except SpecInvalid as err:
        return [str(e).removeprefix("c.yaml") for e in err.errors]
    return []


def test_a_probe_datagram_the_path_would_fragment_is_refused_at_plan_time() -> None:
    """vnb-probe refuses to send a datagram its path's MTU cannot carry whole (IPv4 20 + UDP 8 header
    bytes, RFC 791/768: 1472 of payload at MTU 1500); the plan finds it, with the path and the largest
    size, instead of every step failing at the tool."""
    assert probe_plan_errors(1472, 1472, 1472) == []  # the largest unfragmented payload at MTU 1500
    assert probe_plan_errors(1473, 1473, 1473) == [
        ":8: measurements[0].sizes: 1473 bytes + 28 of IPv4/UDP headers exceed the path MTU 1500 of "
        "vm1→vm2, and vnb-probe sends no fragments; use at most 1472 bytes, or raise the links' mtu",
        ":9: measurements[1].size: 1473 bytes + 28 of IPv4/UDP headers exceed the path MTU 1500 of "
        "vm1→vm2, and vnb-probe sends no fragments; use at most 1472 bytes, or raise the links' mtu",
        ":10: measurements[2].size: 1473 bytes + 28 of IPv4/UDP headers exceed the path MTU 1500 of "
        "vm1→vm2, and vnb-probe sends no fragments; use at most 1472 bytes, or raise the links' mtu",
    ]
    assert probe_plan_errors(8972, 8972, 8972, jumbo_only=True) == []  # 9000 − 28
    assert probe_plan_errors(18, 8973, 18, jumbo_only=True) == [
        ":9: measurements[1].size: 8973 bytes + 28 of IPv4/UDP headers exceed the path MTU 9000 of "
        "vm2→vm3, and vnb-probe sends no fragments; use at most 8972 bytes, or raise the links' mtu"
    ]
