"""The shaper defaults docs/fidelity-notes.md promises a user, from the page's own formulas by hand.

network: queue = max(R × 2 × (delay + jitter), min(125 000 B, 50 ms at R)), at least 4 frames;
burst = max(2 frames, 8 ms at R). sender: queue 50 ms at R (at least 4 frames), burst max(2 frames,
1 ms at R). pps: tbf's mpu = rate / pps bytes; without rate, rate = pps full frames. A 1500-byte MTU
link's frame is 1514 bytes. (The same values were read back with `tc -d qdisc` from a built
topology when the page was audited.)
"""

from __future__ import annotations

import pytest

from vnetbench.layout.build import link_shaper
from vnetbench.spec.models import Link


def _link(**fields: object) -> Link:
    return Link.model_validate({"endpoints": ("a", "b"), **fields})


@pytest.mark.parametrize(
    ("fields", "queue", "burst"),
    [
        ({"rate": "20mbit"}, 125_000, 20_000),  # 50 ms at 2.5 MB/s = 125 KB; 8 ms = 20 KB
        ({"rate": "100mbit"}, 125_000, 100_000),  # min(125 KB, 625 KB); 8 ms at 12.5 MB/s
        ({"rate": "100mbit", "delay": "10ms"}, 250_000, 100_000),  # BDP 12.5 MB/s × 20 ms
        ({"rate": "20mbit", "delay": "5ms", "jitter": "2ms"}, 125_000, 20_000),  # BDP 35 KB < 125 KB
        ({"rate": "20mbit", "delay": "30ms"}, 150_000, 20_000),  # BDP 2.5 MB/s × 60 ms
        ({"rate": "1mbit"}, 6_250, 3_028),  # 50 ms = 6 250 B (> 4 frames, 6 056); 2 frames > 8 ms
        ({"rate": "20mbit", "queue": 60_000}, 60_000, 20_000),  # `queue:` overrides
        ({"rate": "20mbit", "queue": "125KB"}, 128_000, 20_000),  # a spec's KB is 1024 B (the page says so)
        ({"rate": "20mbit", "shaping": "sender"}, 125_000, 3_028),  # 1 ms = 2 500 B < 2 frames
        ({"rate": "100mbit", "shaping": "sender"}, 625_000, 12_500),  # 50 ms; 1 ms at 12.5 MB/s
    ],
)
def test_queue_and_burst_are_the_documented_defaults(fields: dict, queue: int, burst: int) -> None:
    shaper = link_shaper(_link(**fields))
    assert shaper is not None
    assert (shaper.queue_bytes, shaper.burst_bytes) == (queue, burst)
    assert shaper.placement == fields.get("shaping", "network")  # network shaping is the default


def test_pps_makes_each_frame_cost_rate_over_pps_bytes() -> None:
    shaper = link_shaper(_link(rate="20mbit", pps=20_000))
    assert shaper is not None
    assert shaper.min_frame_bytes == 125  # 2 500 000 B/s ÷ 20 000 packets/s
    alone = link_shaper(_link(pps=20_000))
    assert alone is not None
    assert alone.rate_bps == 20_000 * 1514 * 8  # pps full frames
    assert alone.min_frame_bytes == 1514


def test_an_unshaped_link_has_no_shaper() -> None:
    assert link_shaper(_link(delay="10ms")) is None
