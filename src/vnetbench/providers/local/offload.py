"""ethtool settings the build makes: TX checksum offload off around userspace OVS (`ethtool -K IF tx
off`, with pyroute2's ethtool ioctl interface), TSO off and GRO on around network shapers (below).

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
import socket
from collections.abc import Iterable

from pyroute2.ethtool.ioctl import IoctlEthtool, NotSupportedError

from vnetbench.providers.base import ProviderError
from vnetbench.providers.local import kernel

TX_CHECKSUM_PREFIX = "tx-checksum-"
# (set, get, name) of the legacy one-flag commands: one ioctl per interface, on the build's open
# netlink socket of its namespace (the features interface reads the kernel's whole feature string
# set per interface, ~1.4 ms each, and needs a thread in the namespace)
TSO = (0x1F, 0x1E, "TSO")  # ETHTOOL_STSO / GTSO: every tx-tcp*-segmentation (NETIF_F_ALL_TSO)
GRO = (0x2C, 0x2B, "GRO")  # ETHTOOL_SGRO / GGRO


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


def set_flag(sock: socket.socket, ns: str, ifname: str, flag: tuple[int, int, str], on: bool) -> None:
    """Turn TSO or GRO on or off on an interface of the namespace sock was opened in."""
    set_cmd, get_cmd, name = flag
    what = f"turn {name} {'on' if on else 'off'} on {ifname} in {ns}"
    try:
        kernel.ethtool_value(sock, ifname, set_cmd, int(on))
        now = bool(kernel.ethtool_value(sock, ifname, get_cmd))
    except OSError as err:
        raise ProviderError(f"could not {what}: {err}") from err
    if now != on:
        raise ProviderError(f"could not {what}: the kernel left it {'on' if now else 'off'}")
