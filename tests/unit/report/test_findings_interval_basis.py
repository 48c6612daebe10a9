"""Every Findings line with an interval says what the interval is over and at which level.

A new user read 'RTT mean (alone, 95 % interval): a→b 10.1 ms (9.93 to 10.3)' beside the RTT table's
'n 20' (the replies) and could not tell that the interval is a t interval over the 2 per-repetition
means. The lines now name the basis (repetitions, per level with a pooled SD, flows × repetitions per
placement) and its n, and the level is the spec's analysis.confidence, not always 95 %. A UDP flow
offered less than its path's model maximum also says the share of the offered rate it received
(19.49 Mbit/s is 40.1 % of a 50 Mbit/s link's maximum, but 97.5 % of the 20 Mbit/s offered).

Expected intervals are computed here with scipy on the input values.
"""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pandas as pd
from scipy import stats

from tests.helpers.campaign_frames import PAIRS_SPEC, _frames, _row
from vnetbench.analysis import campaign_parts as cp
from vnetbench.analysis.campaign_analysis import FittedModel, analyze_campaign
from vnetbench.analysis.one_factor import one_factor_anova
from vnetbench.analysis.placement import compare_placements
from vnetbench.report.prepared import prepare
from vnetbench.report.sections import findings
from vnetbench.report.sections.findings import design_findings, headline_findings, placement_findings


def _t_interval(values: list[float], confidence: float) -> tuple[float, float]:
    x = np.asarray(values, dtype=float)
    half = stats.t.ppf((1 + confidence) / 2, x.size - 1) * x.std(ddof=1) / np.sqrt(x.size)
    return float(x.mean() - half), float(x.mean() + half)


def _flows(kind: str, metric: str, per_connection: dict[str, list[float]], **extra: object) -> pd.DataFrame:
    """a → each destination, one ok flow alone per repetition (repetition 1, 2, …)."""
    rows = [
        {"id": len(dst) * 100 + rep, "measurement": kind, "kind": kind, "src": "a", "dst": dst,
         "placement": "same-host", "status": "ok", "group_kind": "single", "repetition": rep, metric: v}
        | extra
        for dst, values in per_connection.items()
        for rep, v in enumerate(values, start=1)
    ]  # fmt: skip
    return pd.DataFrame(rows)


def test_the_headline_line_says_its_interval_is_over_the_repetitions() -> None:
    # 95.60, 95.64, 95.62 Mbit/s: mean 95.62, SD 0.02, ∓ t[0.975; 2] · 0.02 / √3 = ∓ 0.0497
    low, high = _t_interval([95.60, 95.64, 95.62], 0.95)
    assert (f"{low:.2f}", f"{high:.2f}") == ("95.57", "95.67")
    (line,) = headline_findings(_flows("tcp", "throughput_bps", {"b": [95.60e6, 95.64e6, 95.62e6]}))
    assert line == (
        "<b>TCP throughput</b> (alone; 95 % t interval over 3 repetitions): a→b 95.62 Mbit/s (95.57 to 95.67)."
    )


def test_connections_with_different_repetitions_give_a_range() -> None:
    frame = _flows("tcp", "throughput_bps", {"b": [95.60e6, 95.64e6, 95.62e6], "c": [9.0e6, 9.2e6]})
    (line,) = headline_findings(frame)
    assert line.startswith("<b>TCP throughput</b> (alone; 95 % t interval over 2 to 3 repetitions): a→b ")


def test_two_values_in_one_repetition_are_counted_as_measurements() -> None:
    frame = _flows("tcp", "throughput_bps", {"b": [95.60e6, 95.64e6]})
    frame = pd.concat([frame, frame.assign(id=frame["id"] + 1)], ignore_index=True)  # twice per repetition
    (line,) = headline_findings(frame)
    assert line.startswith(
        "<b>TCP throughput</b> (alone; 95 % t interval over 4 measurements in 2 repetitions): a→b "
    )
    # the quickstart: vm1→vm2 measured by two patterns (4 values), vm1→vm4 by one (2), in 2 repetitions
    frame = pd.concat([frame, _flows("tcp", "throughput_bps", {"c": [9.55e6, 9.57e6]})], ignore_index=True)
    (line,) = headline_findings(frame)
    assert line.startswith(
        "<b>TCP throughput</b> (alone; 95 % t interval over 2 to 4 measurements in 2 repetitions): a→b "
    )


def test_without_an_interval_the_line_says_so() -> None:
    (single,) = headline_findings(_flows("tcp", "throughput_bps", {"b": [95.60e6]}))
    assert single == "<b>TCP throughput</b> (alone; 1 repetition, no interval): a→b 95.60 Mbit/s."
    many = {dst: [10e6 * (i + 1), 10e6 * (i + 1) + 1e5] for i, dst in enumerate("bcdef")}
    (collapsed,) = headline_findings(_flows("tcp", "throughput_bps", many))
    assert collapsed == (
        "<b>TCP throughput</b> (alone; means of 2 repetitions): 5 connections from 10.05 to 50.05 Mbit/s."
    )


def test_a_udp_flow_offered_less_than_the_model_says_the_share_of_the_offer_it_received() -> None:
    # 19.48 and 19.52 Mbit/s of 20 Mbit/s offered on a path whose model maximum is 48.65 Mbit/s
    received = [19.48e6, 19.52e6]
    of_offered = float(np.mean(np.asarray(received) / 20e6))
    of_model = float(np.mean(np.asarray(received) / 48.65e6))
    assert (f"{100 * of_offered:.1f}", f"{100 * of_model:.1f}") == ("97.5", "40.1")
    low, high = _t_interval([19.48, 19.52], 0.95)
    assert (f"{low:.2f}", f"{high:.2f}") == ("19.25", "19.75")
    frame = _flows("udp", "throughput_bps", {"b": received}, offered_bps=20e6, expected_max_bps=48.65e6)
    (line,) = headline_findings(frame)
    assert line == (
        "<b>UDP throughput</b> (alone; 95 % t interval over 2 repetitions): a→b 19.50 Mbit/s (19.25 to 19.75), "
        "97.5 % of the 20.00 Mbit/s offered, 40.1 % of the model maximum."
    )
    # offered more than the path carries: the model maximum alone is the measure
    (over,) = headline_findings(frame.assign(offered_bps=100e6))
    assert over.endswith("a→b 19.50 Mbit/s (19.25 to 19.75), 40.1 % of the model maximum.")


def test_level_means_say_repetitions_per_level_and_the_pooled_sd_at_the_analysis_level() -> None:
    """Levels 1 and 2 with 3 repetitions each; at 99 % the label says 99 % and the interval is
    ȳ.j ∓ t[0.995; 4] · s_e / √3 with s_e² = SSE / 4."""
    frame = pd.DataFrame({"receivers": [1] * 3 + [2] * 3, "loss_ratio": [0.10, 0.12, 0.14, 0.20, 0.22, 0.24]})
    s_e = np.sqrt((4 * 0.02**2) / 4)
    half = stats.t.ppf(0.995, 4) * s_e / np.sqrt(3)
    ends = [f"{100 * (m + sign * half):.3g}" for m in (0.12, 0.22) for sign in (-1, 1)]
    assert ends == ["6.68", "17.3", "16.7", "27.3"]  # three significant digits, as the report writes them
    result = one_factor_anova(frame, "loss_ratio", "receivers", confidence=0.99)
    (line,) = design_findings(
        SimpleNamespace(models=[FittedModel("rx · udp · loss_ratio", "one-factor", result)])
    )
    assert line.split(". Mean per level ")[1] == (
        "(99 % t interval over 3 repetitions per level, pooled SD): 1: 12.0 % (6.68 to 17.3), "
        "2: 22.0 % (16.7 to 27.3)."
    )


def _pairs_campaign(confidence: float) -> tuple[dict, pd.DataFrame]:
    """a→b (same-host) and a→c (same-site) TCP, 3 repetitions, the spec's analysis.confidence."""
    spec = PAIRS_SPEC + f"analysis: {{confidence: {confidence}}}\n"
    rates = {"b": [95.60e6, 95.64e6, 95.62e6], "c": [47.0e6, 47.4e6, 47.2e6]}
    rows, i = [], 0
    for dst, placement in (("b", "same-host"), ("c", "same-site")):
        for rep, rate in enumerate(rates[dst], start=1):
            i += 1
            rows.append(_row(i, kind="tcp", measurement="tcp", pattern="p", pattern_kind="pairs", src="a",
                             dst=dst, placement=placement, repetition=rep, build_id=rep,
                             step_key=f"s{i}", throughput_bps=rate, offered_bps=np.nan))  # fmt: skip
    frames = _frames(spec, rows, builds=3)
    return frames, pd.DataFrame(rows)


def test_a_campaign_at_99_percent_gets_99_percent_intervals_in_its_findings() -> None:
    """docs/spec.md: analysis.confidence sets every interval. The headline intervals were always 95 %
    (descriptive.describe's constant) and every Findings label said 95 %."""
    frames, frame = _pairs_campaign(0.99)
    prep = prepare(frames.campaign, frame, frames.samples, frames.builds)
    assert prep.confidence == 0.99
    ctx = SimpleNamespace(frame=frame, prepared=prep, analysis=None, losses=[], cpu=pd.DataFrame())
    (section,) = findings.build(ctx)  # type: ignore[arg-type]
    assert section.intro == (
        "The answer first: the headline numbers with their 99 % intervals (each line says what its interval "
        "is over), what mattered and what did not, and where the bottleneck was. The sections below hold "
        "every detail."
    )
    b_low, b_high = _t_interval([95.60, 95.64, 95.62], 0.99)
    c_low, c_high = _t_interval([47.0, 47.4, 47.2], 0.99)
    assert [f"{v:.2f}" for v in (b_low, b_high, c_low, c_high)] == ["95.51", "95.73", "46.05", "48.35"]
    assert section.items[0] == (
        "<b>TCP throughput</b> (alone; 99 % t interval over 3 repetitions): a→b 95.62 Mbit/s (95.51 to 95.73); "
        "a→c 47.20 Mbit/s (46.05 to 48.35)."
    )
    # the placement comparison of the same campaign, from `analyze`, is at 99 % and says so
    (line,) = placement_findings(analyze_campaign(frames))
    assert line.startswith(
        "<b>tcp: throughput by placement</b> (alone; 99 % t interval over flows × repetitions, "
        "n = 3 per placement): same-host 95.62 Mbit/s (95.51 to 95.73), same-site 47.20 Mbit/s (46.05 to 48.35)"
    )
    # at the default level the same rows give 95 % intervals, labelled so
    frames95, _ = _pairs_campaign(0.95)
    assert prepare(frames95.campaign, frame, frames95.samples, frames95.builds).confidence == 0.95
    assert "95 % t interval" in headline_findings(frame)[0] and "99 %" not in headline_findings(frame)[0]


def test_levels_with_different_repetitions_and_placements_of_one_flow_give_their_counts() -> None:
    # level 1 measured 3 times, level 2 twice: the pooled interval's r_j per level as a range
    frame = pd.DataFrame({"receivers": [1, 1, 1, 2, 2], "loss_ratio": [0.10, 0.12, 0.14, 0.20, 0.22]})
    result = one_factor_anova(frame, "loss_ratio", "receivers")
    (line,) = design_findings(
        SimpleNamespace(models=[FittedModel("rx · udp · loss_ratio", "one-factor", result)])
    )
    assert ". Mean per level (95 % t interval over 2 to 3 repetitions per level, pooled SD): " in line
    # one flow per placement: no interval, and the line says so rather than naming a level
    one = pd.DataFrame({"placement": ["same-host", "cross-site"], "rtt_mean_ns": [1e6, 10e6]})
    placements = cp.Placements(
        0.95, [cp.PlacementEntry("rtt", "rtt_mean_ns", compare_placements(one, "rtt_mean_ns"))]
    )
    (line,) = placement_findings(SimpleNamespace(placement=placements))
    assert line == (
        "<b>rtt: mean by placement</b> (alone; 1 flow per placement, no interval): same-host 1.00 ms, "
        "cross-site 10.0 ms."
    )


def test_an_interval_whose_top_is_above_the_model_maximum_says_it_is_no_rate() -> None:
    """quickstart d1453f96: 'vm1→vm3 95.91 Mbit/s (84.04 to 107.8), 98.7 % of the model maximum' on a
    path whose model maximum is 97.22 Mbit/s. Here 94.0 and 97.0 Mbit/s: mean 95.5, SD 2.121, upper end
    95.5 + t[0.975; 1] · 2.121 / √2 = 114.56 > 97.22."""
    low, high = _t_interval([94.0, 97.0], 0.95)
    assert (f"{low:.2f}", f"{high:.1f}") == ("76.44", "114.6")
    frame = _flows("udp", "throughput_bps", {"b": [94.0e6, 97.0e6]}, expected_max_bps=97.22e6)
    (line,) = headline_findings(frame)
    assert line.endswith(
        "a→b 95.50 Mbit/s (76.44 to 114.6, its top above the model maximum: the spread of few values, not a "
        "rate), 98.2 % of the model maximum."
    )
    # a top less than 1 % above the model (the bucket's burst, rounding) is left to the section's note:
    # 97.10 and 97.20, mean 97.15, top 97.15 + 12.706 · 0.07071 / √2 = 97.785, 100.58 % of 97.22
    (near,) = headline_findings(
        _flows("udp", "throughput_bps", {"b": [97.10e6, 97.20e6]}, expected_max_bps=97.22e6)
    )
    assert "(96.51 to 97.79)" in near and "its top" not in near
    # within the model: nothing added
    (inside,) = headline_findings(
        _flows("udp", "throughput_bps", {"b": [95.0e6, 95.1e6]}, expected_max_bps=97.22e6)
    )
    assert "its top" not in inside
