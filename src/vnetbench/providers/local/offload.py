"""ethtool features (`ethtool -K`) with pyroute2's ethtool ioctl interface: TX checksum offload off
around userspace OVS, and a veth receive queue of its own behind network shaping (netshaping.py).

A userspace OVS datapath (netdev) reads and writes frames through AF_PACKET sockets and never
completes a checksum the kernel left for the "hardware" to fill in; on veths that hardware is
the peer's receive path, so TCP segments arrive with bad checksums and stall (while ping, whose
checksum is computed in software, works). Turning TX checksumming off on the veths around the
switch makes the kernel compute every checksum before the frame leaves.

The ioctl acts on the namespace of the socket it is issued on, so the socket is opened inside the
interface's namespace (pyroute2's IoctlEthtool opens its socket when constructed).
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Mapping

from pyroute2.ethtool.ioctl import IoctlEthtool, NotSupportedError

from vnetbench.providers.base import ProviderError
from vnetbench.providers.local import kernel

TX_CHECKSUM_PREFIX = "tx-checksum-"


Want = Callable[[str], bool | None]  # an ethtool feature's name -> the state wanted (None: leave it)


def no_tx_checksum(name: str) -> bool | None:
    return False if name.startswith(TX_CHECKSUM_PREFIX) else None


def no_tso(name: str) -> bool | None:
    """TCP segmentation offload off: veth then hands forwarded frames to the peer's own receive
    queue (veth_skb_is_eligible_for_gro) instead of the CPU's backlog (netshaping.py)."""
    return False if name.startswith("tx-tcp") and name.endswith("segmentation") else None


def gro(name: str) -> bool | None:
    """GRO on: a veth receives in its own NAPI queue (aggregation is capped apart, netshaping.py)."""
    return True if name == "rx-gro" else None


def set_features(ns_fd: int, ns: str, wants: Mapping[str, list[Want]]) -> None:
    """Set ethtool features of interfaces of a namespace (ethtool -K IF ...): each interface's
    features the wants ask for; raises ProviderError naming any that did not take."""

    def wanted(name: str, of: list[Want]) -> bool | None:
        return next((w for w in (want(name) for want in of) if w is not None), None)

    def work() -> None:
        # Errors are turned into ProviderError here, in the thread: an exception raised in the
        # caller by a signal (the runner's Interrupted) must pass through unchanged.
        try:
            eth = IoctlEthtool()
        except OSError as err:
            raise ProviderError(f"could not open an ethtool socket in {ns}: {err}") from err
        try:
            for ifname, of in wants.items():
                eth.change_ifname(ifname)
                features = eth.get_features()
                change = {
                    name: want
                    for name, *_ in features
                    if (want := wanted(name, of)) is not None
                    and features.is_available(name)
                    and bool(features.is_active(name)) != want
                }
                if not change:
                    continue
                for name, want in change.items():
                    features[name] = want
                # SFEATURES returns a positive "wish" flag when dependent features (TSO ...) changed
                # too, which pyroute2 takes for a failure: check the result instead.
                with contextlib.suppress(NotSupportedError):
                    eth.set_features(features)
                left = [
                    name
                    for name, enable, *_ in eth.get_features()
                    if name in change and enable != change[name]
                ]
                if left:
                    raise ProviderError(f"{', '.join(left)} of {ifname} did not change")
        except Exception as err:
            raise ProviderError(
                f"could not set ethtool features of {', '.join(wants)} in {ns}: {err}"
            ) from err
        finally:
            eth.close()

    kernel.in_netns(ns_fd, work)


def tx_checksum_state(ns_fd: int, ifname: str) -> dict[str, bool]:
    """The interface's tx-checksum-* features (name -> enabled), as `ethtool -k` shows them."""

    def work() -> dict[str, bool]:
        eth = IoctlEthtool(ifname)
        try:
            return {
                name: bool(enable)
                for name, enable, *_ in eth.get_features()
                if name.startswith(TX_CHECKSUM_PREFIX)
            }
        finally:
            eth.close()

    return kernel.in_netns(ns_fd, work)
