"""The few system calls Python 3.11's os module lacks (unshare, setns, mount, umount2), via libc,
and the one ioctl whose argument points at more memory (SIOCETHTOOL).

Network namespaces are per thread: a thread may unshare or setns CLONE_NEWNET without touching the
rest of the process, which is how the provider enters namespaces without forking.
"""

from __future__ import annotations

import ctypes
import fcntl
import os
import socket
import struct
from collections.abc import Callable
from typing import TypeVar

from vnetbench.providers.local import signals

CLONE_NEWNET = 0x40000000
MS_BIND = 4096
MNT_DETACH = 2
SIOCETHTOOL = 0x8946

_libc = ctypes.CDLL(None, use_errno=True)
_libc.mount.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_ulong, ctypes.c_void_p]
_libc.umount2.argtypes = [ctypes.c_char_p, ctypes.c_int]
_libc.unshare.argtypes = [ctypes.c_int]
_libc.setns.argtypes = [ctypes.c_int, ctypes.c_int]

T = TypeVar("T")


def _check(result: int, what: str) -> None:
    if result != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"{what}: {os.strerror(err)}")


def unshare_net() -> None:
    """Move the calling thread into a new network namespace."""
    _check(_libc.unshare(CLONE_NEWNET), "unshare(CLONE_NEWNET)")


def setns_net(fd: int) -> None:
    """Move the calling thread into the network namespace open at fd."""
    _check(_libc.setns(fd, CLONE_NEWNET), "setns(CLONE_NEWNET)")


def bind_mount(source: str, target: str) -> None:
    """mount --bind source target."""
    _check(_libc.mount(source.encode(), target.encode(), None, MS_BIND, None), f"mount --bind {target}")


def umount_detach(target: str) -> None:
    """umount -l target (lazy: detached now, freed when unused)."""
    _check(_libc.umount2(target.encode(), MNT_DETACH), f"umount {target}")


def in_netns(fd: int, fn: Callable[[], T]) -> T:
    """Run fn in a short-lived thread that has entered the namespace at fd; return its result.

    Sockets created inside fn stay bound to that namespace after the thread ends.
    """
    box: dict[str, object] = {}

    def work() -> None:
        try:
            setns_net(fd)
            box["value"] = fn()
        except BaseException as err:  # handed to the caller
            box["error"] = err

    signals.run_thread(work, "vnb-netns")
    if "error" in box:
        raise box["error"]  # type: ignore[misc]
    return box["value"]  # type: ignore[return-value]


def ethtool_value(sock: socket.socket, ifname: str, cmd: int, data: int = 0) -> int:
    """One legacy ethtool command (struct ethtool_value {cmd, data}) on an interface of the socket's
    namespace; returns data as the kernel left it. Any socket will do (the ioctl falls through to
    the namespace's devices), so a build's open netlink socket serves without entering the namespace."""
    value = ctypes.create_string_buffer(struct.pack("=II", cmd, data), 8)
    ifreq = struct.pack("16sP", ifname.encode(), ctypes.addressof(value)).ljust(40, b"\0")
    fcntl.ioctl(sock.fileno(), SIOCETHTOOL, ifreq)
    return struct.unpack("=II", value.raw)[1]
