"""tc requests for a layout Interface's shaper (tbf or htb) and netem, as netlink Ops.

- tbf: one root qdisc (handle 1:) with rate, burst and limit (bytes) as the layout decided.
- htb: root htb (1:, default class 1:1), class 1:1 at rate = ceil with the layout's burst, and the
  queue limit on a bfifo leaf (2:) under it.
- netem (only where the kernel has sch_netem): alone it is the root qdisc; with a shaper it is the
  shaper's leaf (2: under tbf's or htb's class 1:1), so packets are delayed, then paced. Its
  jitter distribution (normal, pareto, paretonormal) or a link's empirical `delay_cdf` goes with it
  as a table (TCA_NETEM_DELAY_DIST, see netemdist.py), latency and jitter as 64-bit ns.
"""

from __future__ import annotations

import math

from pyroute2.netlink.rtnl import TC_H_ROOT
from pyroute2.netlink.rtnl.tcmsg import plugins as tc_plugins
from pyroute2.netlink.rtnl.tcmsg import sched_htb, sched_netem, sched_pfifo, sched_tbf

from vnetbench.layout import Interface, Netem, Shaper
from vnetbench.providers.local import netemdist
from vnetbench.providers.local.netlink import Op, qdisc_op

# bfifo takes the same options as pfifo (one int: the limit, here in bytes); pyroute2 only names pfifo.
tc_plugins.setdefault("bfifo", sched_pfifo)
netemdist.install()  # netem options with the delay distribution and 64-bit latency/jitter

ROOT = 0x10000  # 1:
CLASS = 0x10001  # 1:1
LEAF = 0x20000  # 2:
TBF_MAX_RATE_BPS = ((1 << 32) - 1) * 8  # tbf's rate field is 32-bit bytes/s (no TCA_TBF_RATE64 here)
NETEM_MIN_LIMIT = 1000  # packets (netem's default)


def _bit(rate_bps: int) -> str:
    return f"{int(rate_bps)}bit"


def tbf_options(shaper: Shaper) -> dict:
    """pyroute2's tbf parameters of a shaper (a link's pps: its minimum packet unit)."""
    options = sched_tbf.get_parameters(
        {"rate": _bit(shaper.rate_bps), "burst": shaper.burst_bytes, "limit": shaper.queue_bytes}
    )
    if shaper.min_frame_bytes:  # a link's pps: each frame costs at least this many bytes
        options["attrs"][0][1]["rate_mpu"] = shaper.min_frame_bytes
    return options


def htb_quantum(shaper: Shaper, mtu: int) -> int:
    """The htb class quantum: about a tenth of a second's bytes at rate, between one frame and 200000."""
    # The kernel's default (rate / r2q) warns and clamps above 200000; one to a few frames is fairer.
    return int(min(200_000, max(mtu + 14, shaper.rate_bps / 8 / 10)))


def netem_delay(netem: Netem) -> tuple[int, int, tuple[int, ...] | None, int]:
    """(latency ns, jitter ns, distribution table or None, largest delay ns) netem is given."""
    if netem.delay_cdf is not None:
        mu, sigma, table = netemdist.cdf_table(netem.delay_cdf)
        return mu, sigma, table, netem.delay_cdf[-1][1]
    delay, jitter = netem.delay_ns or 0, netem.jitter_ns or 0
    table = netemdist.named_table(netem.jitter_distribution) if jitter else None
    # uniform: at most delay + jitter; a table: its largest entry (about +4 jitter)
    return delay, jitter, table, delay + jitter * (max(table) / netemdist.SCALE if table else 1)


def netem_options(netem: Netem, rate_bps: int | None, mtu: int, queue_bytes: int | None) -> dict:
    """pyroute2's netem parameters of a link's delay, jitter and loss (queue sized for its rate)."""
    delay_ns, jitter_ns, table, most_ns = netem_delay(netem)
    limit = NETEM_MIN_LIMIT
    if rate_bps:
        # Hold what the link carries during the largest delay plus the shaper's queue.
        in_flight = rate_bps / 8 * most_ns / 1e9 + (queue_bytes or 0)
        limit = max(limit, math.ceil(in_flight / (mtu + 14)))
    opts = sched_netem.get_parameters(
        {
            "delay": delay_ns // 1000,
            "jitter": jitter_ns // 1000,
            "loss": (netem.loss_ratio or 0.0) * 100,
            "limit": limit,
        }
    )
    # the kernel takes these over the microsecond fields above (kernels before 4.15 ignore them)
    opts["attrs"] += [["TCA_NETEM_LATENCY64", delay_ns], ["TCA_NETEM_JITTER64", jitter_ns]]
    if table is not None:
        opts["attrs"].append(["TCA_NETEM_DELAY_DIST", netemdist.pack(table)])
    return opts


def qdisc_ops(iface: Interface, index: int) -> list[Op]:
    """The tc requests that realise iface's shaper and netem on the interface with this index."""
    where = f"{iface.name} in {iface.ns}"
    shaper, netem = iface.shaper, iface.netem
    ops: list[Op] = []
    if shaper is not None and shaper.kind == "tbf":
        what = f"tbf {_bit(shaper.rate_bps)} on {where}"
        ops.append(qdisc_op(what, index, ROOT, TC_H_ROOT, "tbf", tbf_options(shaper)))
    elif shaper is not None and shaper.kind == "htb":
        root = sched_htb.get_parameters({"default": 1})
        ops.append(qdisc_op(f"htb root on {where}", index, ROOT, TC_H_ROOT, "htb", root))
        params = sched_htb.get_class_parameters(
            {
                "rate": _bit(shaper.rate_bps),
                "ceil": _bit(shaper.rate_bps),
                "burst": shaper.burst_bytes,
                "cburst": shaper.burst_bytes,
                "quantum": htb_quantum(shaper, iface.mtu),
                "mtu": iface.mtu + 14,
            }
        )
        ops.append(
            Op(
                f"htb class {_bit(shaper.rate_bps)} on {where}",
                "class",
                index,
                create=True,
                fields={"handle": CLASS, "parent": ROOT},
                attrs=[["TCA_KIND", "htb"], ["TCA_OPTIONS", params]],
            )
        )
        if netem is None:
            ops.append(
                qdisc_op(
                    f"bfifo {shaper.queue_bytes} B under htb on {where}",
                    index,
                    LEAF,
                    CLASS,
                    "bfifo",
                    {"limit": shaper.queue_bytes},
                )
            )
    if netem is not None:
        rate = shaper.rate_bps if shaper else None
        queue = shaper.queue_bytes if shaper else None
        handle, parent = (LEAF, CLASS) if shaper else (ROOT, TC_H_ROOT)
        options = netem_options(netem, rate, iface.mtu, queue)
        ops.append(qdisc_op(f"netem on {where}", index, handle, parent, "netem", options))
    return ops
