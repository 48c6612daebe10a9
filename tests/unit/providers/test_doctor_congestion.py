"""`vnetbench doctor` names the TCP congestion control a measurement without `congestion:` gets: the
machine's default (bbr on some distributions and clouds, which ignores random loss), while the studies
the scenarios repeat measured cubic."""

from __future__ import annotations

from vnetbench.providers.local.doctor import congestion_check


def test_cubic_by_default_needs_no_word() -> None:
    check = congestion_check("cubic", ["reno", "cubic"])
    assert (check.ok, check.detail, check.note) == (True, "cubic (available: reno cubic)", "")


def test_another_default_says_what_tcp_gets_and_how_to_repeat_a_study() -> None:
    check = congestion_check("bbr", ["reno", "bbr", "cubic"])
    assert check.ok and not check.needed
    assert check.detail == "bbr (available: reno bbr cubic)"
    assert check.note == (
        "TCP measurements without `congestion:` use bbr; the studies measured cubic: set `congestion: "
        "cubic` to repeat them"
    )


def test_a_kernel_without_cubic_says_so() -> None:
    assert congestion_check("reno", ["reno"]).note == (
        "TCP measurements without `congestion:` use reno; the studies measured cubic: this kernel has no cubic"
    )
