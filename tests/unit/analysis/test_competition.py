"""The simultaneous-flows verdict (analysis.descriptive.competition): what each repetition showed,
with the interval of the expected index beside it. The quickstart's report said "they share
unfairly" from two 5 s repetitions (Jain 0.948 and 0.769) whose interval of the expected index was
0.5 to 1, i.e. the data could not tell."""

from __future__ import annotations

from types import SimpleNamespace

import pandas as pd
import pytest

from tests.helpers.campaign_frames import star
from vnetbench.analysis.descriptive import competition, jain_text
from vnetbench.analysis.fairness import index_sd_text, mean_index_interval
from vnetbench.spec.units import plain_number


def test_two_short_runs_say_what_each_showed_and_that_the_interval_is_wide() -> None:
    """Jain's index of (a, b) is (a + b)² / (2(a² + b²)): (36.9, 59.4) → 9273.69 / 9779.94 = 0.9482 and
    (74.2, 21.7) → 9196.81 / 11953.06 = 0.7694 (by hand); both below 0.95."""
    (c,) = competition(star([(36.9e6, 59.4e6), (74.2e6, 21.7e6)]))
    assert c.jain_per_rep == pytest.approx([0.9482, 0.7694], abs=1e-4)
    assert c.verdict == (
        "the flows compete: each gets less than alone, and they share unfairly in both repetitions "
        "(Jain's index 0.948, 0.769, each below 0.95)"
    )
    low, high = c.jain_interval
    assert low <= 0.77 and high > 0.999  # two runs of two flows bound the expected index only loosely
    assert any("interval of the expected index" in r for r in c.reasons)
    assert any(r.startswith("the flows ran 6 s: TCP flows' shares settle") for r in c.reasons)


def test_mixed_repetitions_are_counted() -> None:
    """(47, 48) → 0.99989; (30, 65) → 95² / (2 · (900 + 4225)) = 0.8805."""
    (c,) = competition(star([(47e6, 48e6), (30e6, 65e6), (47.5e6, 47.5e6)]))
    assert c.verdict.endswith(
        "they share fairly in 2 of 3 repetitions and unfairly in the other "
        "(Jain's index 1.000, 0.880, 1.000; ≥ 0.95 counts as fair)"
    )


def test_fair_runs_and_long_runs_need_no_caveat() -> None:
    (fair,) = competition(star([(47e6, 48e6), (48e6, 47e6)]))
    assert fair.verdict.endswith("they share fairly in both repetitions (Jain's index 1.000, 1.000)")
    assert not any("settle" in r for r in fair.reasons)
    (long_run,) = competition(star([(30e6, 65e6), (65e6, 30e6)], duration_s=121))
    assert "unfairly in both" in long_run.verdict
    assert not any("settle" in r for r in long_run.reasons)  # 2 minutes: convergence is no excuse
    (udp,) = competition(star([(30e6, 65e6), (65e6, 30e6)], kind="udp"))
    assert not any("settle" in r for r in udp.reasons)  # no congestion control to converge


def test_one_repetition_says_so() -> None:
    (c,) = competition(star([(30e6, 65e6)]))
    assert c.verdict.endswith("they share unfairly in the one repetition (Jain's index 0.880)")
    assert c.jain_interval != c.jain_interval or all(x != x for x in c.jain_interval)  # NaN: no interval
    assert not any("interval of the expected index" in r for r in c.reasons)
    # one index has no sample SD (n − 1 = 0): not "0.880 ± 0.000", which reads as "no spread"
    assert c.jain_sd != c.jain_sd  # NaN
    assert any("Jain's fairness index 0.880 over 1 repetition" in r for r in c.reasons)
    # two: (30, 65) and (65, 30) both 0.8805, SD 0 by hand
    (two,) = competition(star([(30e6, 65e6), (65e6, 30e6)]))
    assert two.jain_sd == pytest.approx(0.0, abs=1e-12)
    # an SD of 0 as the fairness table writes it ('0'), and said to be one
    assert any("Jain's fairness index 0.880 ± 0 (mean ± SD) over 2 repetitions" in r for r in two.reasons)


def test_the_index_sd_is_written_as_the_fairness_table_writes_it() -> None:
    # the table's SD column: three significant digits, '< 0.0001' below its last decimal, '' for none
    assert [index_sd_text(v) for v in (0.006976, 4.84e-07, 0.0, float("nan"))] == [
        "0.00698",
        "< 0.0001",
        "0",
        "",
    ]
    near_one = SimpleNamespace(jain_mean=0.99999, jain_sd=4.84e-07)
    # not '1.000 ± 0.000'
    assert jain_text(near_one) == "1.000 (mean; SD < 0.0001)"  # type: ignore[arg-type]
    spread = SimpleNamespace(jain_mean=0.9962, jain_sd=0.006976)
    assert jain_text(spread) == "0.996 ± 0.00698 (mean ± SD)"  # type: ignore[arg-type]


def test_counts_are_in_words() -> None:
    (one,) = competition(star([(30e6, 65e6)]))
    (two,) = competition(star([(30e6, 65e6), (65e6, 30e6)]))
    assert any("over 1 repetition (1 = equal" in r for r in one.reasons)
    assert any("over 2 repetitions, 95 % interval" in r for r in two.reasons)


def _rtt_star(alone: list[list[float]], together: list[list[float]]) -> pd.DataFrame:
    """hub → vm-a, vm-b, vm-c: each repetition's mean RTT (ms) per flow, alone and together."""
    rows = []
    for rep, (solo, both) in enumerate(zip(alone, together, strict=True), start=1):
        for dst, a, t in zip(("vm-a", "vm-b", "vm-c"), solo, both, strict=True):
            common = {"status": "ok", "pattern": "star", "pattern_kind": "star", "measurement": "rtt",
                      "kind": "rtt", "src": "hub", "dst": dst, "repetition": rep, "link_rate_bps": 1e8,
                      "duration_ns": 8e9}  # fmt: skip
            rows.append(common | {"group_kind": "alone", "rtt_mean_ns": a * 1e6, "start_skew_ns": 0})
            rows.append(common | {"group_kind": "together", "rtt_mean_ns": t * 1e6, "start_skew_ns": 7e6})
    return pd.DataFrame(rows)


def test_rtt_that_grew_in_one_repetition_of_three_is_no_consistent_effect() -> None:
    # exogeni-exp4, campaign ef4349e3 (2026-11-29, loaded machine): the report's Findings said "star ·
    # rtt: RTT grows when measured together" from the flows' mean ratios 2.70, 1.07, 3.07, all carried
    # by repetition 2. Within each repetition, together / alone averaged over the three flows is
    # rep 1: (0.0354/0.0587 + 0.0482/0.0739 + 0.0540/0.0712) / 3 = (0.603 + 0.652 + 0.758) / 3 = 0.671
    # rep 2: (0.3357/0.0479 + 0.1264/0.0706 + 0.4892/0.0574) / 3 = (7.008 + 1.790 + 8.523) / 3 = 5.774
    # rep 3: (0.0534/0.0503 + 0.0653/0.0790 + 0.0646/0.0691) / 3 = (1.062 + 0.827 + 0.935) / 3 = 0.941
    alone = [[0.0587, 0.0739, 0.0712], [0.0479, 0.0706, 0.0574], [0.0503, 0.0790, 0.0691]]
    together = [[0.0354, 0.0482, 0.0540], [0.3357, 0.1264, 0.4892], [0.0534, 0.0653, 0.0646]]
    (c,) = competition(_rtt_star(alone, together))
    assert c.ratio_per_rep == pytest.approx([0.671, 5.774, 0.941], abs=1e-3)
    assert c.verdict == "RTT grew when measured together in only 1 of 3 repetitions: no consistent effect"
    assert (
        "within each repetition, together / alone (mean over the flows): 67.1 %, 577.4 %, 94.1 %" in c.reasons
    )
    # twice as long together in every repetition: a trend
    (grows,) = competition(_rtt_star(alone, [[2 * x for x in rep] for rep in alone]))
    assert grows.verdict == "RTT grows when measured together"
    assert grows.ratio_per_rep == pytest.approx([2.0, 2.0, 2.0])


def test_rtt_lower_together_in_every_repetition_is_not_called_unaffected() -> None:
    # exogeni-exp4, campaign cbc7b671 (2026-11-29): together / alone 0.71-0.79 in every repetition,
    # and the Findings said "RTT unaffected by simultaneous probes"
    alone = [[0.074, 0.097, 0.092]] * 3
    (lower,) = competition(_rtt_star(alone, [[0.75 * x for x in rep] for rep in alone]))
    assert lower.ratio_per_rep == pytest.approx([0.75, 0.75, 0.75])
    assert (
        lower.verdict
        == "RTT not slowed by simultaneous probes: lower together than alone (75.0 % of it on average)"
    )
    # each flow's ratio as the section's table writes it (70.5 %), not 0.70 beside it
    assert "each flow's mean RTT together / alone: 75.0 %, 75.0 %, 75.0 %" in lower.reasons
    (same,) = competition(_rtt_star(alone, [[0.95 * x for x in rep] for rep in alone]))  # within 10 %
    assert same.verdict == "RTT unaffected by simultaneous probes"


def test_shares_and_the_interval_have_the_digits_of_the_tables_beside_them() -> None:
    # the quickstart's section said 'range 45–55 %' above a table of 54.7 % and 45.3 %, and exogeni-exp2's
    # 'interval of the expected index 1 to 1' above the fairness table's '(1.000, 1.000)'.
    # vm2 41 of 95 Mbit/s alone = 43.16 %, vm3 54 of 95 = 56.84 %, mean 50.00 %
    (c,) = competition(star([(40e6, 55e6), (42e6, 53e6)]))
    assert (
        "each flow got 50.0 % of its alone throughput on average (range 43.2–56.8 %, as the table's "
        "together / alone); with 2 flows an equal share is 50 %"
    ) in c.reasons
    (jain,) = [r for r in c.reasons if "interval of the expected index" in r]
    low, high = c.jain_interval
    assert f"interval of the expected index {plain_number(low, 4)} to {plain_number(high, 4)} (" in jain
    assert len(plain_number(low, 4).lstrip("0.")) == 4  # four significant digits: 0.9108, not 0.911
    (equal,) = competition(star([(47.5e6, 47.5e6), (47.5e6, 47.5e6)]))
    assert any("interval of the expected index 1.000 to 1.000" in r for r in equal.reasons)


def test_the_index_interval_is_at_the_campaigns_level() -> None:
    """analysis.confidence 0.99 reaches the interval of the expected index and its words (it was 95 %
    whatever the spec said). The indices by hand, (a + b)² / (2(a² + b²)); the interval is fairness's
    mean_index_interval of them at 0.99 (tested on its own in test_fairness_coverage.py)."""
    pairs = [(36.9e6, 59.4e6), (74.2e6, 21.7e6), (50e6, 45e6)]
    indices = [(a + b) ** 2 / (2 * (a * a + b * b)) for a, b in pairs]
    (c,) = competition(star(pairs), 0.99)
    assert c.confidence == 0.99
    assert c.jain_interval == pytest.approx(mean_index_interval(indices, 2, 0.99))
    assert c.jain_interval != pytest.approx(mean_index_interval(indices, 2, 0.95))
    assert any("over 3 repetitions, 99 % interval of the expected index " in r for r in c.reasons)
    assert not any("95 %" in r for r in c.reasons)
