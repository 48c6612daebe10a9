"""Named network namespaces, created without forking.

`ip netns add` and pyroute2's `netns.create` fork a child per namespace (~10 ms each). Instead, one
worker thread unshares CLONE_NEWNET (allowed per thread), bind-mounts /proc/thread-self/ns/net onto
/run/netns/NAME, opens the namespace's fd and a netlink socket inside it, and moves on to the next;
the rest of the process never changes namespace. Removing a namespace is an unmount + unlink: the
kernel then destroys it, and every link in it, asynchronously once nothing holds it (no process,
open fd or socket).
"""

from __future__ import annotations

import contextlib
import errno
import os
import socket
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from vnetbench.providers.local import kernel, signals

NETNS_DIR = "/run/netns"
THREAD_NS = "/proc/thread-self/ns/net"
SOL_NETLINK = 270
NETLINK_CAP_ACK = 10
SO_RCVBUFFORCE = 33  # socket.h: SO_RCVBUF beyond net.core.rmem_max (CAP_NET_ADMIN)
NETLINK_EXT_ACK = 11
# Nodes speak IPv4 only (the layout's 198.18.0.0/15). With IPv6 off, bringing links up sends no
# router solicitations, MLD reports or DAD probes onto measured links, and is cheaper too.
# One write: the kernel's addrconf_disable_ipv6() copies `all` into `default` too, so interfaces
# created later in the namespace start with IPv6 off (a second write cost ~0.3 ms per namespace).
NS_SYSCTLS = {
    "net/ipv6/conf/all/disable_ipv6": "1",
}


@dataclass
class Namespace:
    name: str
    path: str
    fd: int  # O_RDONLY on the namespace: for setns (spawn, telemetry) and IFLA_NET_NS_FD
    nl: socket.socket | None  # rtnetlink socket bound inside the namespace, while the build needs it
    closed: bool = field(default=False)

    def close_netlink(self) -> None:
        """The build is done with this namespace's netlink socket: one descriptor less per namespace."""
        if self.nl is not None:
            with contextlib.suppress(OSError):
                self.nl.close()
            self.nl = None

    def close(self) -> None:
        if self.closed:
            return
        self.closed = True
        self.close_netlink()
        with contextlib.suppress(OSError):
            os.close(self.fd)


def path_of(name: str) -> str:
    """Where a named network namespace is mounted."""
    return f"{NETNS_DIR}/{name}"


def netlink_socket() -> socket.socket:
    """An rtnetlink socket in the calling thread's namespace (SOCK_DGRAM: asyncio/pyroute2 accept it)."""
    sock = socket.socket(socket.AF_NETLINK, socket.SOCK_DGRAM, socket.NETLINK_ROUTE)
    with contextlib.suppress(OSError):
        sock.setsockopt(SOL_NETLINK, NETLINK_EXT_ACK, 1)  # error messages from the kernel
        sock.setsockopt(SOL_NETLINK, NETLINK_CAP_ACK, 1)  # acks without the request echoed
    with contextlib.suppress(OSError):  # room for a chunk's acks (each ~1 KB of skb); root only
        sock.setsockopt(socket.SOL_SOCKET, SO_RCVBUFFORCE, 4 << 20)
    sock.bind((0, 0))
    return sock


def _write_sysctls() -> None:
    for key, value in NS_SYSCTLS.items():
        with contextlib.suppress(OSError), open(f"/proc/sys/{key}", "w") as f:
            f.write(value)


def create(names: Iterable[str], on_created: Callable[[Namespace], None]) -> None:
    """Create each namespace in turn; on_created(ns) is called as soon as one exists (for teardown).

    Raises the first error (FileExistsError when the name is taken); the namespaces created
    before it have been handed to on_created.
    """
    names = list(names)
    os.makedirs(NETNS_DIR, exist_ok=True)
    box: dict[str, BaseException] = {}

    def work() -> None:
        try:
            for name in names:
                path = path_of(name)
                os.close(os.open(path, os.O_RDONLY | os.O_CREAT | os.O_EXCL, 0o444))
                try:
                    kernel.unshare_net()
                    kernel.bind_mount(THREAD_NS, path)
                except BaseException:
                    with contextlib.suppress(OSError):
                        os.unlink(path)
                    raise
                fd = -1
                try:
                    fd = os.open(THREAD_NS, os.O_RDONLY | os.O_CLOEXEC)
                    nl = netlink_socket()
                except BaseException:
                    if fd >= 0:
                        os.close(fd)
                    remove(path)
                    raise
                on_created(Namespace(name, path, fd, nl))
                _write_sysctls()
        except BaseException as err:
            box["error"] = err

    # The thread ends in the last namespace it made; the thread's namespace goes with the thread.
    signals.run_thread(work, "vnb-netns-create")
    if "error" in box:
        raise box["error"]


def remove(path: str) -> bool:
    """Unmount and unlink a named namespace; False if it was not there. Idempotent."""
    try:
        kernel.umount_detach(path)
    except OSError as err:
        if err.errno not in (errno.EINVAL, errno.ENOENT):  # EINVAL: not a mount point
            raise
    try:
        os.unlink(path)
    except FileNotFoundError:
        return False
    return True


def identity(path: str) -> tuple[int, int] | None:
    """(st_dev, st_ino) of the namespace mounted at path; None if no namespace is mounted there."""
    try:
        st = os.stat(path)
        if st.st_dev == os.stat(os.path.dirname(path)).st_dev:
            return None  # an unmounted placeholder file
    except OSError:
        return None
    return (st.st_dev, st.st_ino)


def is_mounted(path: str) -> bool:
    """Whether something is mounted at path (a namespace file is)."""
    try:
        return os.stat(path).st_dev != os.stat(os.path.dirname(path)).st_dev
    except OSError:
        return False


def processes_in(identities: set[tuple[int, int]]) -> list[int]:
    """Pids of every process whose network namespace is one of identities (never our own pid)."""
    if not identities:
        return []
    me = os.getpid()
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == me:
            continue
        try:
            st = os.stat(f"/proc/{entry}/ns/net")
        except OSError:
            continue
        if (st.st_dev, st.st_ino) in identities:
            found.append(int(entry))
    return found
