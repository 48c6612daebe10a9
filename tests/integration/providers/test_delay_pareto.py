"""Delay nodes with netem's long-tailed `jitter_distribution: pareto`: 2000 probes over a
20 ms + pareto(5 ms) link. Real namespaces, real vnb-probe.

netem's pareto offset is jitter × (4/3)(X − 1.5), X Pareto(shape 3), cut at +4 jitter: median
−0.32 jitter, p99 at the cap (+4), never below −2/3 jitter. So p99 − median is ~4.3 jitter where a
normal gives 2.33 sd. The node runs with a fixed seed, so the draws are fixed and the only thing
that can move the figures is the node or the path (which adds some µs, rarely some ms).
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pytest

from tests.helpers.integration.probe_runs import rtt_records
from tests.helpers.integration.topology import Built, seeded_delay_topology

pytestmark = [pytest.mark.root, pytest.mark.timing]
SEED = 3
DELAY_NS, JITTER_NS = 20_000_000, 5_000_000


@pytest.fixture(scope="module")
def tailed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Built]:
    with seeded_delay_topology(tmp_path_factory.mktemp("pareto"), "delay_pareto.yaml", SEED) as built:
        yield built


def test_pareto_jitter_has_a_long_right_tail(tailed: Built) -> None:
    p = tailed.provider
    assert p.link_emulation == {"tailed": "delay-node"}
    dst = tailed.layout.address_of("b", "a")
    p.spawn("a", ["ping", "-c", "2", "-i", "0.2", "-q", dst]).wait(10)  # ARP first
    records = rtt_records(p, "a", "b", dst, 7008, 2000, "0.001")
    owd = np.array([r["owd_up_ns"] for r in records if r["owd_up_ns"] is not None], dtype=float)
    assert len(owd) >= 1980
    z = (owd - DELAY_NS) / JITTER_NS  # offsets in units of jitter
    median, p99 = np.median(z), np.percentile(z, 99)
    # heavier than a normal's p99 - median (2.33 sd): the draws give ~4.3
    assert p99 - median > 3.5, f"p99 - median {p99 - median:.2f} jitter (median {median:.2f})"
    # the left side is short: no probe earlier than delay - 2/3 jitter (50 µs of clock slack)
    assert z.min() > -2 / 3 - 0.01, f"a probe {z.min():.3f} jitter early"
    assert abs(median + 0.32) < 0.1, f"median {median:.3f} jitter"
    # the mean, as netem's table: -0.03 jitter (sd of the mean of 2000 draws: 0.02)
    assert abs(np.mean(z) + 0.033) < 0.15, f"mean {np.mean(z):.3f} jitter"
