"""What this kernel can build, found by trying it in a throwaway network namespace.

A thread unshares a fresh namespace (never mounted: it disappears with the thread), creates a veth
pair, a bridge and a VXLAN device there, and puts each qdisc kind on the veth. The answer does not
depend on module lists (a feature may be built in, or loadable on demand). Cached per process.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable
from dataclasses import dataclass, field

from vnetbench.layout import Interface, Netem, Shaper
from vnetbench.providers.local import kernel, netshaping, shaping, signals
from vnetbench.providers.local.netlink import Batch, NetlinkFailure, Op, qdisc_op
from vnetbench.providers.local.netns import netlink_socket

LINK_KINDS = ("veth", "bridge", "vxlan")
QDISC_KINDS = ("tbf", "htb", "bfifo", "netem")
SHAPING_KINDS = ("ifb", "redirect")  # what `shaping: network` needs (netshaping.py)
KERNEL_OPTION = {
    "veth": "CONFIG_VETH (module veth)",
    "bridge": "CONFIG_BRIDGE (module bridge)",
    "vxlan": "CONFIG_VXLAN (module vxlan)",
    "tbf": "CONFIG_NET_SCH_TBF (module sch_tbf)",
    "htb": "CONFIG_NET_SCH_HTB (module sch_htb)",
    "bfifo": "CONFIG_NET_SCH_FIFO",
    "netem": "CONFIG_NET_SCH_NETEM (module sch_netem)",
    "ifb": "CONFIG_IFB (module ifb)",
    "redirect": "clsact, u32 and mirred: CONFIG_NET_SCH_INGRESS, CONFIG_NET_CLS_U32, CONFIG_NET_ACT_MIRRED",
}


@dataclass
class Features:
    netns: bool
    error: str | None = None  # why namespaces could not be created
    kinds: dict[str, bool] = field(default_factory=dict)

    def has(self, kind: str) -> bool:
        return self.kinds.get(kind, False)


_cache: Features | None = None
_lock = threading.Lock()


def _qdisc_op(kind: str, index: int) -> Op:
    if kind == "tbf":
        options = shaping.tbf_options(Shaper("tbf", 10_000_000, 100_000, 3_000))
    elif kind == "htb":
        options = {"attrs": [["TCA_HTB_INIT", {"version": 3, "rate2quantum": 10, "defcls": 1}]]}
    elif kind == "bfifo":
        options = {"limit": 10_000}
    else:
        options = shaping.netem_options(Netem(1_000_000, None, None), None, 1500, None)
    return qdisc_op(f"{kind} qdisc", index, 0x10000, 0xFFFFFFFF, kind, options)


def _redirect_works(attempt: Callable[[Op], bool]) -> bool:
    """`shaping: network`'s clsact + u32 + mirred redirect, from a veth (index 10) to the IFB (30)."""
    iface = Interface("probe", "vnbprobe10", 1500, shaper=Shaper("tbf", 10**7, 10**5, 3000, "network"))
    return all(attempt(op) for op in netshaping.redirect_ops(iface, 10, 30))


def _probe() -> Features:
    box: dict[str, Features] = {}

    def work() -> None:
        try:
            kernel.unshare_net()
            sock = netlink_socket()
        except OSError as err:
            box["f"] = Features(netns=False, error=str(err))
            return
        found = Features(netns=True)
        try:

            def attempt(op: Op) -> bool:
                batch = Batch("probe", sock)
                batch.add(op)
                try:
                    batch.commit()
                    return True
                except NetlinkFailure:
                    return False

            def link(kind: str, index: int, data: list | None = None, peer: dict | None = None) -> Op:
                info: list = [["IFLA_INFO_KIND", kind]]
                if peer is not None:
                    info.append(["IFLA_INFO_DATA", {"attrs": [["VETH_INFO_PEER", peer]]}])
                elif data:
                    info.append(["IFLA_INFO_DATA", {"attrs": data}])
                return Op(
                    f"{kind} link",
                    "link",
                    index,
                    create=True,
                    attrs=[["IFLA_IFNAME", f"vnbprobe{index}"], ["IFLA_LINKINFO", {"attrs": info}]],
                )

            found.kinds["veth"] = attempt(
                link("veth", 2, peer={"index": 3, "attrs": [["IFLA_IFNAME", "vnbprobe3"]]})
            )
            found.kinds["bridge"] = attempt(link("bridge", 4))
            found.kinds["vxlan"] = attempt(
                link("vxlan", 5, data=[["IFLA_VXLAN_ID", 1], ["IFLA_VXLAN_PORT", 4789]])
            )
            for i, kind in enumerate(QDISC_KINDS):
                # each qdisc kind as the root of a veth of its own (lo if there are no veths)
                idx = 10 + 2 * i
                peer = {"index": idx + 1, "attrs": [["IFLA_IFNAME", f"vnbprobe{idx + 1}"]]}
                target = idx if found.kinds["veth"] and attempt(link("veth", idx, peer=peer)) else 1
                found.kinds[kind] = attempt(_qdisc_op(kind, target))
            found.kinds["ifb"] = attempt(link("ifb", 30))
            found.kinds["redirect"] = found.kinds["ifb"] and _redirect_works(attempt)
        finally:
            with contextlib.suppress(OSError):
                sock.close()
        box["f"] = found

    signals.run_thread(work, "vnb-probe")
    return box["f"]


def probe(refresh: bool = False) -> Features:
    """What this kernel can build, tried once per process (refresh: try again)."""
    global _cache
    with _lock:
        if _cache is None or refresh:
            _cache = _probe()
        return _cache
