"""A link's `delay_hold` (a drawn delay kept for a while, per direction): the spec's checks with
their exact messages, the layout's Netem, the choice of a delay node even where netem exists, and the
delay node's command line."""

from __future__ import annotations

import pytest

from tests.helpers.specs import one_link_campaign, one_link_error
from vnetbench.layout import build_layout
from vnetbench.layout.link_emulation import choose, command, realise

CDF = "delay_cdf: [[0, 5ms], [1, 45ms]]"


_campaign, _error = one_link_campaign, one_link_error


def test_a_hold_is_a_duration_and_absent_by_default() -> None:
    assert _campaign(CDF).topology.links[0].delay_hold is None
    assert _campaign(f"{CDF}, delay_hold: 2s").topology.links[0].delay_hold == 2_000_000_000
    assert (
        _campaign("delay: 20ms, jitter: 5ms, delay_hold: 250ms").topology.links[0].delay_hold == 250_000_000
    )
    assert _campaign(f"{CDF}, delay_hold: 1h").topology.links[0].delay_hold == 3600 * 10**9


@pytest.mark.parametrize(
    ("hold", "shown"),
    [("0s", "0 s"), ("2h", "7200 s")],
)
def test_a_hold_outside_0_to_1_hour_is_refused(hold: str, shown: str) -> None:
    assert _error(f"{CDF}, delay_hold: {hold}") == (
        f"topology.links[0].delay_hold: {shown} is outside (0, 1 h]: hold a delay for e.g. 1s, or "
        "remove delay_hold to draw a delay per frame"
    )


@pytest.mark.parametrize("fields", ["delay: 20ms", "loss: 1%", "rate: 10mbit"])
def test_a_hold_without_jitter_or_delay_cdf_is_refused(fields: str) -> None:
    assert _error(f"{fields}, delay_hold: 1s") == (
        "topology.links[0].delay_hold: delay_hold needs jitter or delay_cdf: a constant delay is the "
        "same for every frame already; remove delay_hold or give the link jitter or delay_cdf"
    )


def test_a_hold_with_emulator_netem_is_refused() -> None:
    assert _error(f"{CDF}, delay_hold: 1s, emulator: netem") == (
        "topology.links[0].delay_hold: netem draws a delay per frame and cannot hold one: remove "
        "`emulator: netem` from this link (auto gives it a delay node) or remove delay_hold"
    )


def test_a_held_link_gets_a_delay_node_even_where_netem_exists() -> None:
    for fields, held in ((f"{CDF}, delay_hold: 2s", True), (CDF, False)):
        layout = build_layout(_campaign(fields), "c0ffee0a")
        (netem,) = {i.netem for i in layout.interfaces() if i.netem}
        assert netem.hold_ns == (2_000_000_000 if held else None)
        assert choose(netem, kernel_has_netem=True) == ("delay-node" if held else "netem")
        assert choose(netem, kernel_has_netem=False) == "delay-node"
        realised, choice = realise(layout, kernel_has_netem=True)
        assert choice == {"wan": "delay-node" if held else "netem"}
        assert len(realised.delay_nodes) == int(held)


@pytest.mark.parametrize("emulator", ["auto", "delay-node"])
def test_the_node_is_told_the_hold(emulator: str) -> None:
    layout = build_layout(
        _campaign(f"{CDF}, delay_hold: 2s, reorder: true, emulator: {emulator}"), "c0ffee0b"
    )
    (node,) = realise(layout, kernel_has_netem=True)[0].delay_nodes
    argv = command(node, "p")
    assert argv[argv.index("--delay-hold") + 1] == "2000000000ns"
    assert "--delay-cdf" in argv and "--reorder" in argv
    (plain,) = realise(build_layout(_campaign(CDF), "c0ffee0c"), kernel_has_netem=False)[0].delay_nodes
    assert "--delay-hold" not in command(plain, "p")
