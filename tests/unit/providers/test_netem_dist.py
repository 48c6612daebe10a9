"""netem's delay distribution at the netlink-message level (this machine's kernel has no sch_netem,
so nothing here reaches netem): the tables of the named distributions, the table of an empirical
`delay_cdf`, and the encoded RTM_NEWQDISC request, decoded back and evaluated the way the kernel's
tabledist() does."""

from __future__ import annotations

import struct
from pathlib import Path

import numpy as np
import pytest
from pyroute2.netlink.rtnl.tcmsg import tcmsg

from vnetbench.layout import Interface, Netem, Shaper
from vnetbench.providers.local import netemdist, netlink, shaping
from vnetbench.spec import delaycdf

GENI = ((0.0, 24_700_000), (0.9, 26_200_000), (0.97, 40_000_000), (1.0, 375_000_000))
TCA_NETEM_DELAY_DIST = 2


def _decode(op: netlink.Op) -> tuple[bytes, dict]:
    data = netlink.encode(op, 1)
    msg = tcmsg(data)
    msg.decode()
    opts = msg.get_attr("TCA_OPTIONS")
    return data, {name: value for name, value in opts["attrs"]} | {k: opts[k] for k in ("delay", "jitter")}


def _netem_op(netem: Netem, shaper: Shaper | None = None) -> netlink.Op:
    (op,) = [
        o
        for o in shaping.qdisc_ops(Interface("ns", "eth0", 1500, shaper=shaper, netem=netem), 3)
        if dict(o.attrs)["TCA_KIND"] == "netem"
    ]
    return op


def test_named_tables_are_iproute2s() -> None:
    normal = np.array(netemdist.named_table("normal"))
    # the first line of iproute2's normal.dist
    assert list(normal[:8]) == [-32768, -28307, -26871, -25967, -25298, -24765, -24320, -23937]
    for name, mean, sd, median in (
        ("normal", 0.0, 1.0, 0.0),
        ("pareto", -0.033, 0.82, -0.320),  # the figures the delay node's closed form is tested on
        ("paretonormal", -0.025, 0.834, -0.240),
    ):
        t = np.array(netemdist.named_table(name)) / netemdist.SCALE
        assert len(t) == 4096 and t.min() >= -4.0 and t.max() < 4.0
        assert list(t) == sorted(t), name  # an inverse CDF
        assert abs(t.mean() - mean) < 0.005 and abs(t.std() - sd) < 0.005, (name, t.mean(), t.std())
        assert abs(np.median(t) - median) < 0.005, (name, np.median(t))
    assert netemdist.named_table("uniform") is None


@pytest.mark.parametrize("dist", ["normal", "pareto", "paretonormal"])
def test_named_tables_equal_the_dist_files_iproute2_installs(dist: str) -> None:
    path = Path(f"/usr/lib/x86_64-linux-gnu/tc/{dist}.dist")  # Debian's iproute2
    if not path.exists():
        pytest.skip(f"{path} is not installed (apt-get install iproute2)")
    shipped = [
        int(v) for line in path.read_text().splitlines() if not line.startswith("#") for v in line.split()
    ]
    assert tuple(shipped) == netemdist.named_table(dist)


def test_tabledist_is_the_kernels_integer_arithmetic() -> None:
    # mu + sigma * t / 8192 rounded half away from zero, in C's truncating integer division
    assert netemdist.tabledist(1000, 8192, 5) == 1005
    assert netemdist.tabledist(1000, 8192 + 4096, -3) == 1000 - 3 - 2  # -1.5 rounds to -2
    assert netemdist.tabledist(50_000_000, 10_000_000, -32768) == 50_000_000 - 40_000_000


def test_empirical_cdf_table_fits_s16_and_reproduces_the_cdf() -> None:
    mu, sigma, table = netemdist.cdf_table(GENI)
    assert table is not None and len(table) == netemdist.TABLE_SIZE
    assert min(table) >= -32768 and max(table) <= 32767 and max(abs(min(table)), max(table)) >= 32760
    # mu: the middle of the table's range (the quantiles at 0.5/4096 and 4095.5/4096)
    lo, hi = delaycdf.quantile(GENI, 0.5 / 4096), delaycdf.quantile(GENI, 4095.5 / 4096)
    assert mu == round((lo + hi) / 2) and abs(sigma - (hi - lo) / 2 * 8192 / 32767) < 2
    delays = np.sort([netemdist.tabledist(mu, sigma, t) for t in table])
    resolution = sigma / netemdist.SCALE  # one table step, ns (~5 µs here)
    assert resolution < 6_000
    # every configured point: the decoded table's CDF within one entry (1/4096) of the configured
    for p, d in GENI[1:-1]:
        f = np.searchsorted(delays, d + resolution, side="right") / len(delays)
        assert abs(f - p) <= 1 / 4096 + 1e-9, (p, f)
    # every entry within one step of the configured quantile it stands for
    want = [delaycdf.quantile(GENI, (i + 0.5) / 4096) for i in range(4096)]
    assert np.max(np.abs(delays - want)) <= resolution
    assert delays[0] >= GENI[0][1] - resolution and delays[-1] <= GENI[-1][1] + resolution


def test_a_constant_cdf_needs_no_table() -> None:
    assert netemdist.cdf_table(((0.0, 20_000_000), (1.0, 20_000_000))) == (20_000_000, 0, None)


def test_the_netem_request_carries_the_cdf_table_and_64_bit_latency() -> None:
    netem = Netem(None, None, None, delay_cdf=GENI, link="wan")
    data, attrs = _decode(_netem_op(netem, Shaper("tbf", 100_000_000, 625_000, 12_500)))
    mu, sigma, table = netemdist.cdf_table(GENI)
    assert attrs["TCA_NETEM_LATENCY64"] == mu and attrs["TCA_NETEM_JITTER64"] == sigma
    raw = attrs["TCA_NETEM_DELAY_DIST"]
    assert len(raw) == 2 * 4096 and struct.unpack("=4096h", raw) == table
    # the attribute's own header in the message: length 4 + 8192, type 2
    assert struct.pack("=HH", 4 + 8192, TCA_NETEM_DELAY_DIST) + raw[:8] in data
    # netem's queue holds what 100 Mbit/s carries during the largest delay (375 ms) + the shaper's
    opts = dict(_netem_op(netem, Shaper("tbf", 100_000_000, 625_000, 12_500)).attrs)["TCA_OPTIONS"]
    assert opts["limit"] == -(-(12_500_000 * 0.375 + 625_000) // 1514)


@pytest.mark.parametrize("dist", ["normal", "pareto", "paretonormal"])
def test_named_jitter_distributions_reach_netem(dist: str) -> None:
    netem = Netem(25_700_000, 1_500_000, None, jitter_distribution=dist)
    _, attrs = _decode(_netem_op(netem))
    assert attrs["TCA_NETEM_LATENCY64"] == 25_700_000 and attrs["TCA_NETEM_JITTER64"] == 1_500_000
    assert struct.unpack("=4096h", attrs["TCA_NETEM_DELAY_DIST"]) == netemdist.named_table(dist)


def test_uniform_jitter_sends_no_table() -> None:
    _, attrs = _decode(_netem_op(Netem(20_000_000, 1_000_000, None)))
    assert "TCA_NETEM_DELAY_DIST" not in attrs
    assert attrs["TCA_NETEM_JITTER64"] == 1_000_000 and attrs["jitter"] > 0
