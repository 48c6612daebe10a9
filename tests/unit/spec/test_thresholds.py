"""`thresholds:` in a spec (dashboard colours): units by the metric's suffix, direction from the order of the
levels, defaults < campaign < measurement, and a located error naming the fix for every malformed entry."""

from __future__ import annotations

import pytest

from vnetbench.spec import parse_spec
from vnetbench.spec.loader import SpecInvalid
from vnetbench.spec.thresholds import DEFAULT_THRESHOLDS, thresholds_for

SPEC = """\
name: t
topology:
  nodes: [{name: a}, {name: b}]
  links: [{endpoints: [a, b], rate: 100mbit}]
measurements:
  - {name: u, kind: udp, rate: 10mbit, MEASUREMENT}
  - {name: p, kind: rtt}
patterns: [{kind: pairs, pairs: [[a, b]], measurements: [u, p]}]
CAMPAIGN
"""


def _campaign(measurement: str = "", campaign: str = ""):
    text = SPEC.replace(", MEASUREMENT", f", {measurement}" if measurement else "")
    return parse_spec(text.replace("CAMPAIGN", campaign), "t.yaml").campaign


def _error(measurement: str = "", campaign: str = "") -> str:
    with pytest.raises(SpecInvalid) as info:
        _campaign(measurement, campaign)
    (err,) = info.value.errors
    return str(err)


def test_levels_are_read_in_the_metric_unit_named_by_its_suffix() -> None:
    c = _campaign(
        "thresholds: {loss_ratio: {warning: 0.5%, critical: 2%}, throughput_bps: {warning: 8mbit, critical: 5mbit}}",
        "thresholds:\n  rtt_mean_ns: {warning: 1ms, critical: 5ms}\n  jitter_mean_ns: {warning: 1.5, critical: 3, of: baseline}",
    )
    u = c.measurement("u").thresholds
    assert (u["loss_ratio"].warning, u["loss_ratio"].critical) == (0.005, 0.02)
    assert (u["throughput_bps"].warning, u["throughput_bps"].critical) == (8e6, 5e6)
    assert c.thresholds["rtt_mean_ns"].warning == 1e6 and c.thresholds["rtt_mean_ns"].critical == 5e6
    # of: baseline levels are factors, not durations
    assert c.thresholds["jitter_mean_ns"].warning == 1.5


def test_direction_follows_the_order_of_the_levels_or_worse() -> None:
    c = _campaign(
        "thresholds: {loss_ratio: {warning: 1%, critical: 5%}, throughput_bps: {warning: 8mbit, critical: 5mbit}, "
        "cpu_share_ratio: {warning: 50%, critical: 50%, worse: below}}"
    )
    th = c.measurement("u").thresholds
    assert th["loss_ratio"].higher_is_worse
    assert not th["throughput_bps"].higher_is_worse
    assert not th["cpu_share_ratio"].higher_is_worse


def test_measurement_overrides_campaign_overrides_defaults_per_metric() -> None:
    c = _campaign(
        "thresholds: {loss_ratio: {warning: 5%, critical: 10%}}",
        "thresholds:\n  loss_ratio: {warning: 1%, critical: 2%}\n  rtt_mean_ns: {warning: 2, critical: 4, of: baseline}",
    )
    u = thresholds_for(c.thresholds, c.measurement("u").thresholds)
    p = thresholds_for(c.thresholds, c.measurement("p").thresholds)
    assert u["loss_ratio"].critical == 0.10 and p["loss_ratio"].critical == 0.02
    assert u["rtt_mean_ns"].warning == 2.0
    assert u["throughput_bps"] == DEFAULT_THRESHOLDS["throughput_bps"]  # untouched default


def test_no_thresholds_means_the_defaults() -> None:
    c = _campaign()
    assert c.thresholds is None and c.measurement("u").thresholds is None
    assert thresholds_for(None, None) == DEFAULT_THRESHOLDS


@pytest.mark.parametrize(
    ("measurement", "campaign", "expected"),
    [
        (
            "thresholds: {loss_ratio: {warning: 1%, critical: 1%}}",
            "",
            "say which side is bad with worse: above|below",
        ),
        (
            "thresholds: {loss_ratio: {warning: lots, critical: 1%}}",
            "",
            "loss_ratio: 'lots' is not a percentage",
        ),
        (
            "thresholds: {throughput_bps: {warning: fast, critical: 1mbit}}",
            "",
            "throughput_bps: 'fast' is not a rate",
        ),
        ("", "thresholds:\n  Loss: {warning: 1, critical: 2}", "'Loss' is not a metric name"),
        (
            "",  # a misspelt metric given a level with a unit: the name is the error, not the number
            "thresholds:\n  loss_ration: {warning: 1%, critical: 2%}",
            "loss_ration: '1%' is not a number; only metrics named …_bps, …_ns or …_ratio take units; "
            "did you mean loss_ratio?",
        ),
        ("", "thresholds:\n  loss_ratio: {warning: 1%, critical: 2%, colour: red}", "unknown key 'colour'"),
        (
            "",
            "thresholds:\n  rtt_mean_ns: {warning: 2ms, critical: 3, of: baseline}",
            "of: baseline levels are factors",
        ),
        ("", "thresholds:\n  loss_ratio: {warning: 1%}", "critical"),
        (
            "",
            "thresholds:\n  loss_ratio: {warning: 5%, critical: 1%, worse: above}",
            "the critical level must lie above the warning level (here 1% vs 5%)",
        ),
        (
            "thresholds: {throughput_bps: {warning: 0.5, critical: 0.9, of: expected-max, worse: below}}",
            "",
            "the critical level must lie below the warning level (here 0.9 vs 0.5)",
        ),
    ],
)
def test_malformed_thresholds_are_located_errors_with_the_fix(
    measurement: str, campaign: str, expected: str
) -> None:
    message = _error(measurement, campaign)
    assert message.startswith("t.yaml:"), message
    assert "thresholds" in message and expected in message, message
