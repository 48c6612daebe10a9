"""measurements_frame: summary metrics become columns without clobbering the measurement's own columns."""

from __future__ import annotations

from tests.helpers.stores import campaign_store, pair_record


def test_a_summary_metric_named_like_a_column_is_kept_as_the_tools_view(store_url: str) -> None:
    store = campaign_store(store_url)
    rec = pair_record(
        "c1",
        "r001/udp/a>b",
        "udp",
        "a",
        "b",
        offered_bps=194444444.44,  # what vnetbench planned to offer
        summary={"offered_bps": 194444444.0, "loss_ratio": 0.5, "throughput_bps": 97.2e6},
    )
    store.save_measurements([rec])
    frame = store.measurements_frame("c1")
    assert frame.loc[0, "offered_bps"] == 194444444.44
    assert frame.loc[0, "tool_offered_bps"] == 194444444.0
    assert frame.loc[0, "loss_ratio"] == 0.5
    assert not [c for c in frame.columns if c.endswith(("_x", "_y"))]
    store.close()
