"""The Python replay of the delay node's random draws (tests/helpers/delay_draws.py):
the same sequence as the Rust (pinned values shared with probe/src/delay/rng.rs `known_sequence`)
and the alignment of probes to draws when other frames take draws in between."""

from __future__ import annotations

import numpy as np

from tests.helpers import delay_draws


def test_same_sequence_as_the_node() -> None:
    r = delay_draws.Rng(7)
    assert r.next_u64() == 1_021_219_803_524_665_661
    assert r.next_u64() == 3_174_977_118_032_272_916


def test_normal_draws_have_the_configured_moments() -> None:
    d = delay_draws.normal_delays_ns(3, 20_000, 50_000_000, 10_000_000)
    assert abs(d.mean() - 50e6) < 0.25e6 and abs(d.std() - 10e6) < 0.2e6


def test_match_recovers_lateness_across_foreign_frames() -> None:
    rng = np.random.default_rng(1)
    drawn = delay_draws.normal_delays_ns(5, 2200, 50_000_000, 10_000_000)
    # probes take draws 3.., with foreign frames taking draws 700, 701 and 1500 in between
    used = [k for k in range(3, 2200) if k not in (700, 701, 1500)][:2000]
    late = rng.exponential(10e3, 2000)  # ~10 µs of path and release error
    late[[100, 900]] = [2e6, 5e6]  # two stalls
    owd = drawn[used] + late
    owd[50] = np.nan  # a lost reply
    res = delay_draws.match(owd, drawn)
    ok = ~np.isnan(owd)
    assert np.isnan(res[50])
    np.testing.assert_allclose(res[ok], late[ok], atol=1.0)
