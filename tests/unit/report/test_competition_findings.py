"""The report's Findings name the verdict on simultaneous flows (the question of ExoGENI experiments
2 and 4: do they compete?), with the caveat of short TCP runs, and count them when there are many."""

from __future__ import annotations

from tests.helpers.campaign_frames import star
from vnetbench.analysis.descriptive import competition
from vnetbench.report.sections.findings import competition_findings


def test_the_verdict_is_among_the_findings_with_the_short_run_caveat() -> None:
    (comp,) = competition(star([(36.9e6, 59.4e6), (74.2e6, 21.7e6)]))
    assert competition_findings([(None, comp)]) == [
        "<b>Simultaneous flows</b>: star · tcp: the flows compete: each gets less than alone, and they "
        "share unfairly in both repetitions (Jain's index 0.948, 0.769, each below 0.95) — from runs of "
        "6 s, in which TCP's shares may not have settled."
    ]


def test_fair_or_long_runs_carry_no_caveat_and_many_groups_are_counted() -> None:
    (fair,) = competition(star([(47e6, 48e6), (48e6, 47e6)]))
    (long_run,) = competition(star([(30e6, 65e6), (65e6, 30e6)], duration_s=121))
    (alike,) = competition(star([(95e6, 95e6), (94e6, 95e6)]))  # as much together as alone
    (line,) = competition_findings([("rate=1", fair), ("rate=2", long_run)])
    assert "settled" not in line
    assert "star · tcp · rate=1: the flows compete" in line and "star · tcp · rate=2:" in line
    many = [(f"t{i}", c) for i, c in enumerate([fair, long_run, alike, fair, alike])]
    assert competition_findings(many) == [
        "<b>Simultaneous flows</b>: in 3 of 5 treatments the flows compete (each gets less than alone)."
    ]
    # without factors, one verdict per pattern · measurement
    untreated = [(None, c) for c in (fair, long_run, alike, fair, alike)]
    assert competition_findings(untreated) == [
        "<b>Simultaneous flows</b>: in 3 of 5 combinations of pattern · measurement the flows compete "
        "(each gets less than alone)."
    ]


def test_groups_without_an_alone_baseline_are_not_counted_as_not_competing() -> None:
    """onl-tcp-factorial (alone: false, 8 treatments) printed 'in 0 of 8 groups the flows compete'
    although none of them could be compared: no flow was measured alone. Then 'no flow of the 8
    groups was measured alone, so whether they compete cannot be told', where `analyze` counts 24
    groups (8 treatments × 3 repetitions) and the line told nothing the campaign asked: now none."""
    alone_rows = star([(47e6, 48e6)])
    (unmeasured,) = competition(alone_rows[alone_rows["group_kind"] == "together"])
    assert unmeasured.verdict == "no flow was measured alone; cannot compare"
    (fair,) = competition(star([(47e6, 48e6), (48e6, 47e6)]))  # 47-48 of 95 alone: they compete
    (alike,) = competition(star([(95e6, 95e6), (94e6, 95e6)]))  # as much together as alone
    none = [(f"t{i}", unmeasured) for i in range(8)]
    assert competition_findings(none) == []
    assert competition_findings(none[:2]) == []  # few: no 'cannot compare' line per treatment either
    mixed = [("a", fair), ("b", alike), ("c", unmeasured), ("d", unmeasured), ("e", fair)]
    assert competition_findings(mixed) == [
        "<b>Simultaneous flows</b>: in 2 of 3 treatments the flows compete (each gets less than alone); "
        "2 treatments have no flow measured alone (not compared)."
    ]
    one_missing = [("a", fair), ("b", alike), ("c", unmeasured), ("d", fair), ("e", alike)]
    assert competition_findings(one_missing)[0].endswith(
        "1 treatment has no flow measured alone (not compared)."
    )
