"""Turn TX checksum offload off (`ethtool -K IF tx off`) with pyroute2's ethtool ioctl interface.

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
from collections.abc import Iterable

from pyroute2.ethtool.ioctl import IoctlEthtool, NotSupportedError

from vnetbench.providers.base import ProviderError
from vnetbench.providers.local import kernel

TX_CHECKSUM_PREFIX = "tx-checksum-"


def tx_checksum_off(ns_fd: int, ns: str, ifnames: Iterable[str]) -> None:
    """Turn TX checksum offload off on interfaces of a namespace (ethtool -K IF tx off)."""
    ifnames = list(ifnames)

    def work() -> None:
        # Errors are turned into ProviderError here, in the thread: an exception raised in the
        # caller by a signal (the runner's Interrupted) must pass through unchanged.
        try:
            eth = IoctlEthtool()
        except OSError as err:
            raise ProviderError(f"could not open an ethtool socket in {ns}: {err}") from err
        try:
            for ifname in ifnames:
                eth.change_ifname(ifname)
                features = eth.get_features()
                names = [
                    name
                    for name, *_ in features
                    if name.startswith(TX_CHECKSUM_PREFIX)
                    and features.is_active(name)
                    and features.is_available(name)
                ]
                if not names:
                    continue
                for name in names:
                    features[name] = False
                # SFEATURES returns a positive "wish" flag when dependent features (TSO ...) changed
                # too, which pyroute2 takes for a failure: check the result instead.
                with contextlib.suppress(NotSupportedError):
                    eth.set_features(features)
                left = [name for name, enable, *_ in eth.get_features() if name in names and enable]
                if left:
                    raise ProviderError(f"{', '.join(left)} still on")
        except Exception as err:
            raise ProviderError(
                f"could not turn TX checksum offload off on {', '.join(ifnames)} in {ns}: {err}"
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
