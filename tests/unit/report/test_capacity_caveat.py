"""The Findings' capacity line ('Recommended maximum: receivers = N') says where the report's own
Machine as bottleneck lines call some of the loss this machine's: onl-udp-receivers (campaign
3bac6a03) recommended receivers = 3 with no word that at receivers = 2, 3 and 4 a shaper had stalled
and socket buffers overflowed while the flows offered within the link's rate."""

from __future__ import annotations

from types import SimpleNamespace

from tests.helpers.campaign_frames import ONL_SPEC, _frames, onl_rows
from vnetbench.analysis.campaign_analysis import analyze_campaign
from vnetbench.report.analysis_tables import analysis_parts
from vnetbench.report.sections.design import _capacity_caveats
from vnetbench.report.sections.findings import design_findings


def _loss(mid: int, cause: str, hop_lost: float) -> SimpleNamespace:
    return SimpleNamespace(measurement_id=mid, cause=cause, hop_lost=hop_lost, app_lost=hop_lost, stages=[])


def test_the_recommendation_names_the_levels_where_the_machine_lost_datagrams() -> None:
    frames = _frames(ONL_SPEC, onl_rows())
    frame = frames.measurements
    analysis = analyze_campaign(frames)
    ids = {
        n: [int(i) for i in frame.loc[frame["factors"].map(lambda f: f["receivers"]) == n, "id"]]
        for n in (5, 6)
    }
    # By hand: two flows at receivers = 5 lost 10 and 20 datagrams to a full socket buffer (a machine
    # cause: 10 + 20 = 30), one at receivers = 6 lost 7; a third at receivers = 5 lost 50 at a qdisc
    # while offered above any rate (the network's: not counted). Levels in numeric order: 5 (30), 6 (7).
    losses = [
        _loss(ids[5][0], "socket buffer full", 10.0),
        _loss(ids[5][1], "socket buffer full", 20.0),
        _loss(ids[5][2], "qdisc drop", 50.0),
        _loss(ids[6][0], "socket buffer full", 7.0),
    ]
    (line,) = [x for x in design_findings(analysis, frame, losses) if "Recommended maximum" in x]  # type: ignore[arg-type]
    assert line.endswith(
        "Recommended maximum: receivers = 5 — caveat: this machine, not the emulated network, lost "
        "datagrams at receivers = 5 (30), 6 (7) (see Machine as bottleneck); the recommendation counts "
        "them as the network's."
    )
    # no machine loss: the line as before
    (plain,) = [x for x in design_findings(analysis, frame, losses[2:3]) if "Recommended maximum" in x]  # type: ignore[arg-type]
    assert plain.endswith("Recommended maximum: receivers = 5.")

    # the design section's capacity item ("... Recommended maximum: receivers = 5 (the lower of the two
    # criteria).") gets the same caveat as a sentence; without machine loss it stays as it was
    (effects,) = [p for p in analysis_parts(analysis) if p.anchor == "effects"]
    ctx = SimpleNamespace(frame=frame, losses=losses)
    (item,) = [x for x in _capacity_caveats(list(effects.items), analysis.models, ctx) if "capacity:" in x]  # type: ignore[arg-type]
    assert item.endswith(
        "Recommended maximum: receivers = 5 (the lower of the two criteria). Caveat: this machine, not "
        "the emulated network, lost datagrams at receivers = 5 (30), 6 (7) (see Machine as bottleneck); "
        "the recommendation counts them as the network's."
    )
    ctx.losses = losses[2:3]
    assert _capacity_caveats(list(effects.items), analysis.models, ctx) == list(effects.items)  # type: ignore[arg-type]
