"""The delay node's random draws, replayed in Python: xoshiro256++ seeded by SplitMix64 and
Marsaglia's polar method, exactly as probe/src/delay/rng.rs (pinned by its `known_sequence` unit
test). With the node's seed, a test knows the delay the node drew for every frame and can check the
node released each frame when it should, separately from whether the draws fit the distribution."""

from __future__ import annotations

import math

import numpy as np

_M = (1 << 64) - 1


def _rotl(x: int, k: int) -> int:
    return ((x << k) | (x >> (64 - k))) & _M


class Rng:
    def __init__(self, seed: int) -> None:
        x, self.s = seed & _M, []
        for _ in range(4):
            x = (x + 0x9E3779B97F4A7C15) & _M
            z = ((x ^ (x >> 30)) * 0xBF58476D1CE4E5B9) & _M
            z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _M
            self.s.append(z ^ (z >> 31))
        self.spare: float | None = None

    def next_u64(self) -> int:
        s = self.s
        out = (_rotl((s[0] + s[3]) & _M, 23) + s[0]) & _M
        t = (s[1] << 17) & _M
        s[2] ^= s[0]
        s[3] ^= s[1]
        s[1] ^= s[2]
        s[0] ^= s[3]
        s[2] ^= t
        s[3] = _rotl(s[3], 45)
        return out

    def uniform(self) -> float:
        return (self.next_u64() >> 11) * (1.0 / (1 << 53))

    def normal(self) -> float:
        if self.spare is not None:
            z, self.spare = self.spare, None
            return z
        while True:
            u, v = 2 * self.uniform() - 1, 2 * self.uniform() - 1
            s = u * u + v * v
            if 0 < s < 1:
                m = math.sqrt(-2 * math.log(s) / s)
                self.spare = v * m
                return u * m


def normal_delays_ns(seed: int, n: int, delay_ns: int, jitter_ns: int) -> np.ndarray:
    """The delays the node draws for its first n frames (jitter: normal, no loss)."""
    r = Rng(seed)
    return np.array([max(0, round(delay_ns + r.normal() * jitter_ns)) for _ in range(n)], dtype=float)


def on_time(residual_ns: np.ndarray, within_ns: float = 1e6) -> np.ndarray:
    """The probes released within 1 ms of their draw (NaN: lost, not on time)."""
    return np.abs(np.nan_to_num(residual_ns, nan=np.inf)) < within_ns


# The share of probes that must be on time. The node's own behaviour is "never early, and following
# its draws" (match(), below); how late a probe is depends on the machine as well. On a quiet
# machine ~99 % are; a make test-stress run with another load on the machine (2026-11-27) saw 70 %
# (1408 of 2000). A majority still proves the probes follow the draws; the node's precision is
# benchmarks/delay's claim, not a test's.
ON_TIME_SHARE = 0.5


def assert_mostly_on_time(residual_ns: np.ndarray, probes: int) -> np.ndarray:
    """The on-time mask, after asserting that most of `probes` are."""
    mask = on_time(residual_ns)
    assert mask.sum() >= ON_TIME_SHARE * probes, (
        f"only {mask.sum()} of {probes} probes within 1 ms of their draw"
    )
    return mask


def match(owd_ns: np.ndarray, drawn_ns: np.ndarray, max_shift: int = 64) -> np.ndarray:
    """Residual (measured − drawn) of each probe (NaN where owd_ns is NaN).

    Probes cross the node in send order, but other frames (ARP, neighbour discovery) take draws
    too: probe i uses draw i + c_i, with c_i never decreasing. The shifts are found by dynamic
    programming: a probe costs |residual| (capped at 20 ms) if the residual is >= −50 µs, else
    20 ms (a node cannot release early), and each step up in c costs 20 ms."""
    cap, penalty = 20e6, 20e6
    n, shifts = len(owd_ns), np.arange(max_shift)
    idx = np.arange(n)[:, None] + shifts[None, :]
    res = owd_ns[:, None] - drawn_ns[np.minimum(idx, len(drawn_ns) - 1)]
    cost = np.where(res >= -50e3, np.minimum(np.abs(res), cap), cap)
    cost[np.isnan(cost)] = 0.0
    best = np.zeros(max_shift)
    back = np.zeros((n, max_shift), dtype=int)
    for i in range(n):
        # arrive at shift c from the cheapest shift <= c (a step up pays the penalty)
        prev = np.minimum.accumulate(best + penalty)
        arg = np.array([int(np.argmin(best[: c + 1])) for c in shifts]) if i else shifts
        stay = best
        take_stay = stay <= prev
        back[i] = np.where(take_stay, shifts, arg)
        best = np.where(take_stay, stay, prev) + cost[i]
    c = int(np.argmin(best))
    out = np.empty(n)
    for i in range(n - 1, -1, -1):
        out[i] = res[i, c]
        c = back[i, c]
    return out


def cdf_delays_ns(seed: int, n: int, points: tuple[tuple[float, int], ...]) -> np.ndarray:
    """The delays the node draws for its first n frames from an empirical CDF (`delay_cdf`)."""
    from vnetbench.spec.delaycdf import quantile

    r = Rng(seed)
    return np.array([round(quantile(points, r.uniform())) for _ in range(n)], dtype=float)


NETEM_TABLE_MAX = 32767.0 / 8192.0  # netem's table cap, about +4 jitter


def pareto_offset(u: float) -> float:
    """netem's pareto offset in units of jitter at quantile u (probe/src/delay/jitter.rs)."""
    x = (1.0 - u) ** (-1.0 / 3.0)  # Pareto(shape 3, scale 1)
    return min((x - 1.5) * 4.0 / 3.0, NETEM_TABLE_MAX)


def pareto_delays_ns(seed: int, n: int, delay_ns: int, jitter_ns: int) -> np.ndarray:
    """The delays the node draws for its first n frames (jitter: netem's pareto, no loss)."""
    r = Rng(seed)

    def open_uniform() -> float:
        while True:
            u = r.uniform()
            if 0.0 < u < 1.0:
                return u

    return np.array(
        [max(0, round(delay_ns + pareto_offset(open_uniform()) * jitter_ns)) for _ in range(n)], dtype=float
    )
