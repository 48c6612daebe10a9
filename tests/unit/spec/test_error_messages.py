"""What a user reads when a campaign file is wrong: the field's path, what is wrong, and the fix.

Each case mutates one valid spec and asserts the key parts of the message: the located path and the
words that say what to write instead (never a Python class name, never a message that contradicts
the value given).
"""

from __future__ import annotations

import pytest

from vnetbench.spec.errors import SpecInvalid
from vnetbench.spec.loader import parse_spec, spec_of

VALID = """\
name: small
topology:
  nodes:
    - {name: vm1, cpu: 0.5}
    - {name: vm2}
  switches:
    - {name: sw}
  links:
    - {endpoints: [vm1, sw], rate: 100mbit}
    - {name: wan, endpoints: [vm2, sw], rate: 10mbit, delay: 5ms}
measurements:
  - {name: tcp, kind: tcp, duration: 5s}
  - {name: udp, kind: udp, rate: link}
  - {name: ping, kind: rtt, count: 5, interval: 200ms}
patterns:
  - {name: p, kind: pairs, pairs: [[vm1, vm2]], measurements: [tcp, udp, ping]}
schedule:
  repetitions: 2
"""


def errors(old: str, new: str, base: str = VALID) -> list[str]:
    """The error lines of VALID with `old` replaced by `new` (once), without the file name."""
    assert old in base, old
    with pytest.raises(SpecInvalid) as info:
        parse_spec(base.replace(old, new, 1), "c.yaml")
    return [str(e).removeprefix("c.yaml") for e in info.value.errors]


def test_the_base_spec_is_valid() -> None:
    assert parse_spec(VALID, "c.yaml").campaign.name == "small"


def test_a_misspelt_key_suggests_the_right_one() -> None:
    assert errors("rate: 100mbit}", "rat: 100mbit}") == [
        ":9: topology.links[0].rat: unknown key 'rat'; did you mean 'rate'? accepted here: delay, delay_cdf, "
        "delay_hold, emulator, endpoints, jitter, jitter_distribution, loss, loss_burst, loss_model, mtu, name, "
        "overlay, pps, queue, rate, reorder, shaper, shaping"
    ]


def test_a_misspelt_required_key_is_one_error_not_also_a_missing_one() -> None:
    found = errors("measurements:", "measurments:")
    assert len(found) == 1, found
    assert found[0].startswith(":11: measurments: unknown key 'measurments'; did you mean 'measurements'?")


def test_a_misspelt_key_of_a_udp_measurement_lists_the_udp_fields() -> None:
    # the accepted keys were the first measurement's (tcp: congestion, reverse, …), not this one's
    (found,) = errors("kind: udp, rate: link", "kind: udp, rte: link")
    assert found.startswith(":13: measurements[1].rte: unknown key 'rte'; did you mean 'rate'?")
    assert "rate_factor" in found and "congestion" not in found


def test_a_misspelt_kind_is_located_at_kind_and_suggests_one() -> None:
    (found,) = errors("kind: tcp", "kind: tpc")
    assert found.startswith(":12: measurements[0].kind: 'kind' must be one of 'tcp', 'udp', 'rtt'")
    assert found.endswith("got 'tpc'; did you mean 'tcp'?")


def test_a_missing_kind_lists_the_kinds() -> None:
    # was "'kind' must be one of" with nothing after it
    (found,) = errors("{name: p, kind: pairs, ", "{name: p, ")
    assert found == (
        ":16: patterns[0].kind: required field is missing: "
        "'kind' must be one of 'pairs', 'star', 'fan-in', 'parallel', 'mesh', 'nodes'"
    )


@pytest.mark.parametrize(
    ("old", "new", "expected"),
    [
        (  # was: "input should be a valid dictionary or instance of Schedule"
            "schedule:\n  repetitions: 2",
            "schedule: [2]",
            ":17: schedule: expected a mapping of keys (key: value lines, or {key: value}), got a list of 1 item",
        ),
        (
            "  links:\n",
            "  links:\n    wan: {endpoints: [vm1, vm2]}\n  old_links:\n",
            ":8: topology.links: expected a list ('- item' lines, or [a, b]), got a mapping (key: value)",
        ),
        (  # YAML read `repetitions:2` as one word
            "repetitions: 2",
            "repetitions:2",
            ":17: schedule: expected a mapping of keys (key: value lines, or {key: value}), got the text "
            "'repetitions:2'; YAML needs a space after a key's colon: write 'repetitions: 2'",
        ),
        (
            "repetitions: 2",
            "repetitions: three",
            ":18: schedule.repetitions: expected a whole number, got the text 'three'",
        ),
        (
            "cpu: 0.5",
            "cpu: 50%",
            ":4: topology.nodes[0].cpu: expected a number, got the text '50%'; "
            "cpu: CPU quota of this node alone (fraction of a core)",
        ),
        (
            "pairs: [[vm1, vm2]]",
            "pairs: [vm1, vm2]",
            ":16: patterns[0].pairs[0]: expected a list like [a, b], got the text 'vm1'; "
            "each item is itself a list: write [[vm1, vm2]], not [vm1, vm2]",
        ),
    ],
)
def test_a_value_of_the_wrong_type_says_what_was_expected_and_got(old: str, new: str, expected: str) -> None:
    assert errors(old, new)[0] == expected


def test_a_link_with_one_end_says_how_many_it_needs() -> None:
    # was "required field is missing" about a field that is there
    assert errors("[vm1, sw]", "[vm1]") == [
        ":9: topology.links[0].endpoints: has 1 item, needs 2: give every one, e.g. [a, b]"
    ]


def test_a_list_too_long_or_empty_has_no_pydantic_words() -> None:
    # (a pairs pattern's fields were located under its `pairs:`: the union's tag 'pairs' read as the key)
    assert errors("[vm1, sw]", "[vm1, vm2, sw]") == [
        ":9: topology.links[0].endpoints: must have at most 2 items, not 3"
    ]
    assert errors("measurements: [tcp, udp, ping]", "measurements: []") == [
        ":16: patterns[0].measurements: must have at least 1 item, not 0"
    ]


def test_a_bound_says_the_value_given() -> None:
    assert errors("repetitions: 2", "repetitions: 0") == [
        ":18: schedule.repetitions: input should be greater than or equal to 1, got 0"
    ]


@pytest.mark.parametrize("given, shown", [("40ms", "40 ms"), ("0.04", "40 ms"), ("20000us", "20 ms")])
def test_a_duration_bound_is_said_in_time_units_not_nanoseconds(given: str, shown: str) -> None:
    # telemetry.interval must be ≥ 50 ms; pydantic checks the parsed nanoseconds and said
    # "greater than or equal to 50000000, got 40000000"
    spec = VALID + "telemetry: {interval: 1s}\n"
    assert errors("interval: 1s}", f"interval: {given}}}", spec) == [
        f":19: telemetry.interval: must be at least 50 ms, got {shown}; interval: sampling interval (≥ 50 ms)"
    ]


def test_a_choice_says_the_value_given_and_suggests_one() -> None:
    found = errors("repetitions: 2", "repetitions: 2\n  order: randm")
    assert found == [
        ":19: schedule.order: input should be 'as-written' or 'random', got 'randm'; did you mean 'random'?"
    ]


def test_a_rate_or_link_is_one_message_naming_both() -> None:
    # was two lines: "'fast' is not a rate; …" and "input should be 'link'"
    (found,) = errors("rate: link", "rate: fast")
    assert found.startswith(":13: measurements[1].rate: 'fast' is not a rate; expected a rate like 10mbit")
    assert found.endswith(", or 'link'")


@pytest.mark.parametrize(
    ("old", "new", "expected"),
    [
        (  # was "'-1ms' is not a duration": it is one, with a sign it cannot have
            "delay: 5ms",
            "delay: -1ms",
            ":10: topology.links[1].delay: must not be negative, got '-1ms'; expected a duration like",
        ),
        ("rate: 10mbit", "rate: -100mbit", ":10: topology.links[1].rate: must be positive, got '-100mbit'"),
        (  # was "'100mb' is not a rate"
            "rate: 10mbit",
            "rate: 100mb",
            ":10: topology.links[1].rate: '100mb' is not a rate: its unit says neither bits nor bytes; write "
            "100mbit for 100 megabits per second",
        ),
        ("rate: 10mbit", "rate: 0", ":10: topology.links[1].rate: must be positive, got 0"),
        (  # 100 bit/s: the unit was forgotten
            "rate: 10mbit",
            "rate: 100",
            ":10: topology.links[1].rate: 100 without a unit is 100 bit/s (a 1500-byte frame would take 120 s); "
            "write the unit, e.g. 100mbit",
        ),
        (  # 10 s one way: the unit was forgotten
            "delay: 5ms",
            "delay: 10",
            ":10: topology.links[1].delay: 10 without a unit is 10 s one way; write 10ms for milliseconds "
            "(or 10s if you mean seconds)",
        ),
        (  # was "5 is outside 0–100 %", which 5 % is not
            "delay: 5ms",
            "delay: 5ms, loss: 5",
            ":10: topology.links[1].loss: 5 without '%' is a ratio, 500 %; write 5% for 5 percent (or the ratio 0.05)",
        ),
        (
            "delay: 5ms",
            "delay: 5ms, loss: -1%",
            ":10: topology.links[1].loss: must not be negative, got '-1%'",
        ),
        ("delay: 5ms", "delay: 5ms, loss: 150%", ":10: topology.links[1].loss: '150%' is outside 0–100 %"),
        ("duration: 5s", "duration: -5s", ":12: measurements[0].duration: must not be negative, got '-5s'"),
    ],
)
def test_a_unit_mistake_says_what_to_write(old: str, new: str, expected: str) -> None:
    (found,) = errors(old, new)
    assert found.startswith(expected), found


@pytest.mark.parametrize(
    ("old", "new", "bps", "delay_ns", "loss"),
    [
        ("rate: 10mbit", "rate: 1e8", 10**8, 5 * 10**6, None),  # YAML reads 1e8 (no dot) as text
        ("rate: 10mbit", "rate: 100 Mbit/s", 10**8, 5 * 10**6, None),
        ("delay: 5ms", "delay: 10 ms", 10**7, 10**7, None),
        ("delay: 5ms", "delay: 0.01", 10**7, 10**7, None),  # a bare number below 1 is still seconds
        ("delay: 5ms", "delay: 5ms, loss: 5%", 10**7, 5 * 10**6, 0.05),
    ],
)
def test_units_that_are_accepted(old: str, new: str, bps: int, delay_ns: int, loss: float | None) -> None:
    link = parse_spec(VALID.replace(old, new, 1), "c.yaml").campaign.topology.links[1]
    assert (link.rate, link.delay, link.loss) == (bps, delay_ns, loss)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (  # was "found character that cannot start any token"
            VALID.replace("schedule:\n  repetitions: 2", "schedule:\n\trepetitions: 2"),
            ":18: not valid YAML: a tab (column 1); YAML indents with spaces only: replace the tab",
        ),
        (
            "```yaml\n" + VALID,
            ":1: not valid YAML: '`' (column 1) cannot start a value; a Markdown fence (```) copied with an "
            "example? remove it, or quote the value",
        ),
        (
            VALID.replace("pairs: [[vm1, vm2]],", "pairs: [[vm1, vm2],"),
            ":16: not valid YAML: did not find expected ',' or ']' (column 78): the '[' opened on this line "
            "(column 35) is not closed; close it",
        ),
        (
            "",
            ":1: the file is empty (or only comments); a campaign is a YAML mapping with keys name, topology",
        ),
        ("# nothing yet\n", ":1: the file is empty (or only comments); a campaign is a YAML mapping"),
        (
            "- name: a\n- name: b\n",
            ":1: the file is a list (its lines start with '- '); a campaign is a YAML mapping",
        ),
        ("hello\n", ":1: the file is a single value ('hello'); a campaign is a YAML mapping"),
    ],
)
def test_a_yaml_error_or_a_file_that_is_no_mapping_says_what_to_change(text: str, expected: str) -> None:
    with pytest.raises(SpecInvalid) as info:
        parse_spec(text, "c.yaml")
    (found,) = [str(e).removeprefix("c.yaml") for e in info.value.errors]
    assert found.startswith(expected), found


def test_a_stored_spec_is_read_without_the_checks_added_since_it_ran() -> None:
    # a campaign stored before the forgotten-unit checks stays readable by report, analyze and resume
    old = (
        VALID.replace("rate: 10mbit, delay: 5ms", "rate: 100, delay: 10")
        .replace("{name: p, kind: pairs, pairs: [[vm1, vm2]],", "{name: p, kind: mesh, nodes: [vm1],")
        .replace(
            "repetitions: 2",
            "repetitions: 2\nfactors:\n  - {name: f, path: measurements.tcp.streams, "
            "levels: [1, 2]}\n  - {name: f, path: measurements.tcp.omit, levels: [0, 1]}",
        )
    )
    with pytest.raises(SpecInvalid) as info:
        parse_spec(old, "c.yaml")
    assert [e.path for e in info.value.errors] == [
        "topology.links[1].rate",
        "topology.links[1].delay",
        "patterns[0].nodes",
    ]
    stored = parse_spec(old, "c.yaml", stored=True)
    link = stored.campaign.topology.links[1]
    assert (link.rate, link.delay, stored.stored) == (100, 10 * 10**9, True)
    assert spec_of({"spec_text": old, "spec_source": "c.yaml"}).patterns[0].nodes == ["vm1"]


@pytest.mark.parametrize(
    ("old", "new", "expected"),
    [
        (  # was ":16: not a real date or time (…)": no field, and the fix assumed a time was meant
            "schedule:\n",
            "monitor: {repeat: PT10M, until: 2026-02-30T10:00:00}\nschedule:\n",
            ":17: monitor.until: 2026-02-30T10:00:00 is not a real date or time (day is out of range for month); "
            "write one that exists, e.g. 2026-12-11T00:00:00Z",
        ),
        (  # a date-like text where text goes
            "name: small",
            "name: small\ndescription: 2026-13-01",
            ":2: description: YAML reads 2026-13-01 as a date, which does not exist (month must be in 1..12); "
            "write a real date, or quote it ('2026-13-01') if it is text",
        ),
    ],
)
def test_an_impossible_date_names_the_field_and_the_fix(old: str, new: str, expected: str) -> None:
    assert errors(old, new) == [expected]


@pytest.mark.parametrize(
    ("old", "new", "expected"),
    [
        (  # was "measurements[0][5]: keys should be strings": pydantic's words, the key taken for an index
            "duration: 5s}",
            "duration: 5s, 5: x}",
            ":12: measurements[0]: the key 5 is a number, not a field name; accepted here: congestion, "
            "duration, interval, kind, name, omit, reverse, streams, thresholds, timeout, window",
        ),
        (
            "  - {name: ping, kind: rtt, count: 5, interval: 200ms}\n",
            "  - name: ping\n    kind: rtt\n    on: 5\n",
            ":16: measurements[2]: the key true is a yes/no value (YAML reads on, off, yes, no, true and false "
            "so), not a field name; accepted here: count, deadline, interval, kind, name, size, thresholds, "
            "timeout",
        ),
        (  # was "expected a list …, got a mapping (key: value)", without what made it a mapping
            "  links:\n    - {endpoints: [vm1, sw], rate: 100mbit}\n    - {name",
            "  links:\n    1: {endpoints: [vm1, sw], rate: 100mbit}\n    2: {name",
            ":8: topology.links: expected a list ('- item' lines, or [a, b]), got a mapping (key: value) whose "
            "keys are like 1 (a number); write each item on a line of its own starting with '- ', instead of "
            "'1:'",
        ),
        (
            "schedule:\n",
            "thresholds: {5: {warning: 1%, critical: 2%}}\nschedule:\n",
            ":17: thresholds: the key 5 is a number; keys here are names: quote it ('5') if it is one",
        ),
    ],
)
def test_a_key_that_is_no_text_says_which_where_and_what_goes_there(
    old: str, new: str, expected: str
) -> None:
    assert errors(old, new) == [expected]
