"""A link's empirical delay distribution (`delay_cdf`): accepted forms, and one located error that
names the field and the fix for every malformed one."""

from __future__ import annotations

import pytest

from tests.helpers.specs import ONE_LINK_SPEC as SPEC
from tests.helpers.specs import one_link_campaign, one_link_error
from vnetbench.spec import delaycdf, parse_spec
from vnetbench.spec.loader import SpecInvalid

GOOD = "delay_cdf: [[0, 49.5ms], [0.75, 52.5ms], [0.95, 90ms], [1, 400ms]]"


def _link(fields: str):
    return one_link_campaign(fields).topology.links[0]


_error = one_link_error


def test_points_are_parsed_into_probability_and_ns() -> None:
    link = _link(GOOD + ", reorder: true")
    assert link.delay_cdf == ((0.0, 49_500_000), (0.75, 52_500_000), (0.95, 90_000_000), (1.0, 400_000_000))
    assert link.delay is None and link.reorder
    # bare numbers are seconds, as for every duration of the spec; a step (equal delays) is fine
    assert _link("delay_cdf: [[0, 0.01], [0.5, 0.01], [1, 0.02]]").delay_cdf[2] == (1.0, 20_000_000)


@pytest.mark.parametrize(
    ("fields", "words"),
    [
        ("delay_cdf: [[0, 1ms]]", "needs at least two points"),
        ("delay_cdf: [[0.1, 1ms], [1, 2ms]]", "the first point must have probability 0"),
        ("delay_cdf: [[0, 1ms], [0.9, 2ms]]", "the last probability 1"),
        (
            "delay_cdf: [[0, 1ms], [0.5, 2ms], [0.5, 3ms], [1, 4ms]]",
            "must increase strictly: 0.5 is followed by 0.5",
        ),
        (
            "delay_cdf: [[0, 5ms], [1, 2ms]]",
            "delays must not decrease: 5 ms at 0.0 is followed by 2 ms at 1.0",
        ),
        ("delay_cdf: [[0, 1ms], [1.5, 2ms]]", "probability 1.5 is outside 0–1"),
    ],
)
def test_malformed_points_name_the_field_and_the_fix(fields: str, words: str) -> None:
    message = _error(fields)
    assert message.startswith("topology.links[0].delay_cdf: "), message
    assert words in message, message


def test_a_bad_delay_names_the_point() -> None:
    message = _error("delay_cdf: [[0, 1ms], [1, 3 parsecs]]")
    assert message.startswith("topology.links[0].delay_cdf[1][1]: '3 parsecs' is not a duration"), message


@pytest.mark.parametrize(
    ("extra", "named"),
    [
        ("delay: 5ms", "remove delay from this link"),
        ("delay: 5ms, jitter: 1ms", "remove delay and jitter from this link"),
        ("jitter_distribution: pareto", "remove jitter_distribution from this link"),
    ],
)
def test_delay_cdf_excludes_delay_jitter_and_their_distribution(extra: str, named: str) -> None:
    message = _error(f"{GOOD}, {extra}")
    assert message.startswith("topology.links[0].delay_cdf: delay_cdf gives the whole one-way delay"), message
    assert named in message and "(or remove delay_cdf)" in message


def test_quantile_and_cdf_are_inverse_and_the_cli_form_round_trips() -> None:
    points = _link(GOOD).delay_cdf
    for p in (0.0, 0.3, 0.75, 0.8, 0.99, 1.0):
        assert delaycdf.cdf(points, delaycdf.quantile(points, p)) == pytest.approx(p)
    assert delaycdf.quantile(points, 0.375) == pytest.approx(51_000_000)
    assert delaycdf.cdf(points, 1_000_000) == 0.0 and delaycdf.cdf(points, 1e12) == 1.0
    assert delaycdf.cli(points) == "0.0:49500000ns,0.75:52500000ns,0.95:90000000ns,1.0:400000000ns"


def test_a_bare_delay_of_one_or_more_is_refused_at_the_point() -> None:
    # was read as seconds: [[0, 25], [1, 40]] emulated a 25–40 s one-way delay
    with pytest.raises(SpecInvalid) as info:
        _link('delay_cdf: [[0, 25], [0.5, 30ms], [1, "40"]]')
    assert [f"{e.line}: {e.path}: {e.message}" for e in info.value.errors] == [
        "5: topology.links[0].delay_cdf[0]: 25 without a unit is 25 s one way; write 25ms for milliseconds "
        "(or 25s if you mean seconds)",
        "5: topology.links[0].delay_cdf[2]: '40' without a unit is 40 s one way; write 40ms for milliseconds "
        "(or 40s if you mean seconds)",
    ]


def test_a_stored_spec_keeps_reading_bare_delays_as_seconds() -> None:
    text = SPEC.replace("LINK", "delay_cdf: [[0, 25], [1, 40]]")
    links = parse_spec(text, "d.yaml", stored=True).campaign.topology.links
    assert links[0].delay_cdf == ((0.0, 25 * 10**9), (1.0, 40 * 10**9))
