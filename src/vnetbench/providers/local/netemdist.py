"""netem's delay distribution tables (TCA_NETEM_DELAY_DIST), built here instead of read from
iproute2's .dist files, and the netem options class that can carry them.

The kernel draws a frame's delay as tabledist(mu, sigma, table): one entry t of the table, chosen
uniformly at random, gives mu + sigma · t / NETEM_DIST_SCALE (8192), t a signed 16-bit value. mu
and sigma are the qdisc's latency and jitter (TCA_NETEM_LATENCY64 / TCA_NETEM_JITTER64, ns).

- normal, pareto, paretonormal: the tables iproute2 generates (netem/normal.c, pareto.c,
  paretonormal.c), reproduced by the same formulas: 4096 entries, mu = delay, sigma = jitter.
- uniform: no table (the kernel's default is uniform in [mu − sigma, mu + sigma]).
- an empirical CDF (a link's `delay_cdf`): 4096 entries at the quantiles (i + ½)/4096 of the
  piecewise-linear inverse CDF; mu is the middle of its range and sigma the smallest whole ns for
  which every entry fits in s16 — the resolution is then (max − min) / 65534.

pyroute2 (0.9) leaves the distribution out ("TODO delay distribution" in sched_netem) and has no
64-bit latency/jitter; `install()` registers an options class with both for TCA_KIND netem.
"""

from __future__ import annotations

import math
import struct
import types
from functools import cache

import numpy as np
from pyroute2.netlink.rtnl.tcmsg import plugins as tc_plugins
from pyroute2.netlink.rtnl.tcmsg import sched_netem
from scipy.special import erf

from vnetbench.spec import delaycdf

SCALE = 8192  # NETEM_DIST_SCALE
TABLE_SIZE = 4096  # as iproute2's tables (the kernel takes up to NETEM_DIST_MAX = 16384)
S16_MIN, S16_MAX = -32768, 32767
S32_MAX = 2**31 - 1  # tabledist's sigma is an s32


@cache
def _normal_x_table() -> np.ndarray:
    """iproute2's inverse-normal table: for i in 0..16384, the last x of the loop
    `for (x = -10.0; x < 10.05; x += .00005)` with rint(16384 Φ(x)) == i."""
    steps = np.full(int(20.05 / 0.00005) + 2, 0.00005)
    steps[0] = -10.0
    x = np.cumsum(steps)  # sequential double additions, as the C loop does
    x = x[x < 10.05]
    index = np.rint(16384 * (0.5 + 0.5 * erf(x / math.sqrt(2.0)))).astype(int)
    table = np.zeros(16385)
    table[index] = x  # later x overwrite earlier ones, as in C
    return table


def _pareto_value(i: int) -> int:
    # pareto.c / paretonormal.c: Pareto(shape 3) at 1 − i/65536, shifted to mean 0, scaled 4/3
    value = (1.0 / (i / 65536) ** (1.0 / 3.0) - 1.5) * (4.0 / 3.0) * SCALE
    return int(np.rint(min(value, 32767.0)))


def _clamp16(value: int) -> int:
    return max(S16_MIN, min(S16_MAX, value))


@cache
def named_table(dist: str) -> tuple[int, ...] | None:
    """iproute2's table of a named distribution (None for uniform: netem needs none)."""
    if dist == "uniform":
        return None
    if dist == "pareto":
        return tuple(_pareto_value(i) for i in range(65536, 0, -16))
    x = _normal_x_table()
    normal = [int(np.rint(x[i] * SCALE)) for i in range(0, 16384, 4)]
    if dist == "normal":
        return tuple(_clamp16(v) for v in normal)
    if dist == "paretonormal":
        pareto = [_pareto_value(65536 - 4 * i) for i in range(0, 16384, 4)]
        # C's integer division truncates towards zero
        return tuple(_clamp16(int((n + 3 * p) / 4)) for n, p in zip(normal, pareto, strict=True))
    raise ValueError(f"unknown jitter distribution {dist!r}")


def cdf_table(points: delaycdf.Points, size: int = TABLE_SIZE) -> tuple[int, int, tuple[int, ...] | None]:
    """(mu_ns, sigma_ns, table) for netem to draw from a link's empirical delay CDF."""
    q = [delaycdf.quantile(points, (i + 0.5) / size) for i in range(size)]
    lo, hi = min(q), max(q)
    mu = round((lo + hi) / 2)
    half = max(hi - mu, mu - lo)
    if half < 1:  # a constant delay: no table, no jitter
        return mu, 0, None
    sigma = math.ceil(half * SCALE / S16_MAX)
    if sigma > S32_MAX:
        raise ValueError(
            f"delay_cdf spans {(hi - lo) / 1e9:.1f} s; netem's table holds at most about 17 s of spread"
        )
    return mu, sigma, tuple(_clamp16(round((v - mu) * SCALE / sigma)) for v in q)


def tabledist(mu: int, sigma: int, t: int) -> int:
    """The delay (ns) the kernel's tabledist() gives for table entry t (integer arithmetic as in C)."""

    def cdiv(a: int, b: int) -> int:  # C division: truncate towards zero
        return -(-a // b) if (a < 0) != (b < 0) else a // b

    x = (sigma % SCALE) * t
    x = x + SCALE // 2 if x >= 0 else x - SCALE // 2
    return cdiv(x, SCALE) + (sigma // SCALE) * t + mu


def pack(table: tuple[int, ...]) -> bytes:
    """TCA_NETEM_DELAY_DIST's payload: the entries as host-order s16."""
    return struct.pack(f"={len(table)}h", *table)


class options(sched_netem.options):  # pyroute2 looks the plugin's class up as `options`
    """sched_netem.options with the delay distribution and the 64-bit latency and jitter."""

    nla_map = (
        ("TCA_NETEM_UNSPEC", "none"),
        ("TCA_NETEM_CORR", "netem_corr"),
        ("TCA_NETEM_DELAY_DIST", "cdata"),
        ("TCA_NETEM_REORDER", "netem_reorder"),
        ("TCA_NETEM_CORRUPT", "netem_corrupt"),
        ("TCA_NETEM_LOSS", "none"),
        ("TCA_NETEM_RATE", "netem_rate"),
        ("TCA_NETEM_ECN", "uint32"),
        ("TCA_NETEM_RATE64", "uint64"),
        ("TCA_NETEM_PAD", "none"),
        ("TCA_NETEM_LATENCY64", "int64"),
        ("TCA_NETEM_JITTER64", "int64"),
    )


def install() -> None:
    """Let pyroute2's tcmsg encode (and decode) netem options with this class."""
    if getattr(tc_plugins.get("netem"), "options", None) is not options:
        tc_plugins["netem"] = types.SimpleNamespace(
            options=options, get_parameters=sched_netem.get_parameters, parent=sched_netem.parent
        )
