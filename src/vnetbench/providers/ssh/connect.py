"""SSH connections to inventory hosts: opened once, reused, reopened after a drop, through jump hosts.

Host keys are checked against known_hosts. Only `insecure_accept_new_host_keys` makes a first-seen
key trusted (appended to known_hosts); a key that differs from a known one is always refused.
Authentication is by key file or agent only: no password ever passes through vnetbench.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
from collections.abc import Callable
from typing import Any

import asyncssh

from vnetbench.providers.base import ProviderError
from vnetbench.spec.inventory import Inventory, ResolvedHost

log = logging.getLogger("vnetbench.providers.ssh")
asyncssh.set_log_level(logging.WARNING)

StateCallback = Callable[[str, bool, str], None]  # host, up, reason


class HostUnreachable(ProviderError):
    """A host could not be reached or its connection dropped; its measurements fail, others go on."""

    def __init__(self, host: str, reason: str) -> None:
        super().__init__(f"host {host} unreachable: {reason}")
        self.host = host
        self.reason = reason


class _Client(asyncssh.SSHClient):
    def __init__(self, on_lost: Callable[[Exception | None], None]) -> None:
        self._on_lost = on_lost

    def connection_lost(self, exc: Exception | None) -> None:
        self._on_lost(exc)


class Pool:
    """Connections to inventory hosts, opened on first use and kept open.

    One per host, plus another whenever a host runs more channels at once than its sshd allows
    (`max_sessions`, sshd's MaxSessions): a star of 30 flows from one host still starts at once.
    """

    def __init__(self, inventory: Inventory, on_state: StateCallback | None = None) -> None:
        self.inventory = inventory
        self.hosts = {h.name: inventory.resolved(h) for h in inventory.hosts}
        self.on_state = on_state
        self.state: dict[str, bool] = {}
        self.reasons: dict[str, str] = {}
        self._conns: dict[str, asyncssh.SSHClientConnection] = {}  # the first connection per host
        self._extra: dict[str, list[asyncssh.SSHClientConnection]] = {}
        self._channels: dict[int, int] = {}  # id(connection) -> channels open on it
        self._locks: dict[str, asyncio.Lock] = {}
        self._sem: asyncio.Semaphore | None = None
        self._closing = False

    @property
    def sem(self) -> asyncio.Semaphore:
        if self._sem is None:
            self._sem = asyncio.Semaphore(self.inventory.concurrency)
        return self._sem

    def _set_state(self, host: str, up: bool, reason: str = "") -> None:
        if self.state.get(host) == up and (up or self.reasons.get(host) == reason):
            return
        self.state[host] = up
        self.reasons[host] = reason
        if self.on_state:
            self.on_state(host, up, reason)

    async def connection(self, name: str) -> asyncssh.SSHClientConnection:
        lock = self._locks.setdefault(name, asyncio.Lock())
        async with lock:
            conn = self._conns.get(name)
            if conn is not None:
                return conn
            host = self.hosts[name]
            tunnel = None
            if host.jump is not None:
                try:
                    tunnel = await self.connection(host.jump)
                except HostUnreachable as err:
                    self._set_state(name, False, f"via jump host {host.jump}: {err.reason}")
                    raise HostUnreachable(name, f"via jump host {host.jump}: {err.reason}") from None
            try:
                async with self.sem:
                    conn = await self._connect(host, tunnel)
            except HostUnreachable as err:
                self._set_state(name, False, err.reason)
                raise
            self._conns[name] = conn
            self._set_state(name, True)
            return conn

    async def channel(self, name: str) -> asyncssh.SSHClientConnection:
        """A connection with a free session slot (opened if none has one); give it back with release()."""
        first = await self.connection(name)
        limit = self.inventory.max_sessions
        async with self._locks[name]:
            for conn in [first, *self._extra.get(name, [])]:
                if self._channels.get(id(conn), 0) < limit:
                    self._channels[id(conn)] = self._channels.get(id(conn), 0) + 1
                    return conn
            host = self.hosts[name]
            tunnel = await self.connection(host.jump) if host.jump else None
            async with self.sem:
                conn = await self._connect(host, tunnel)
            self._extra.setdefault(name, []).append(conn)
            self._channels[id(conn)] = 1
            return conn

    def release(self, conn: asyncssh.SSHClientConnection) -> None:
        if self._channels.get(id(conn), 0) > 0:
            self._channels[id(conn)] -= 1

    async def _connect(
        self, host: ResolvedHost, tunnel: asyncssh.SSHClientConnection | None
    ) -> asyncssh.SSHClientConnection:
        known_hosts = self.inventory.known_hosts_path()
        if host.key:  # asyncssh loads it inside create_connection: a bad one was a traceback there
            _check_key(host)
        try:
            return await self._open(host, tunnel, known_hosts)
        except asyncssh.HostKeyNotVerifiable as err:
            if self.inventory.insecure_accept_new_host_keys and not _has_entry(known_hosts, host):
                return await self._trust_first_key(host, tunnel, known_hosts)
            raise HostUnreachable(
                host.name,
                f"host key not verified against {known_hosts} ({err.reason}); check its fingerprint and "
                f"add it with `ssh-keyscan -p {host.port} {host.address} >> {known_hosts}`",
            ) from None
        except asyncssh.PermissionDenied:
            who = f"{host.user}@" if host.user else ""
            how = f"key {host.key}" if host.key else "the SSH agent and default keys"
            raise HostUnreachable(
                host.name, f"permission denied for {who}{host.address}:{host.port} with {how}"
            ) from None
        except (OSError, asyncssh.Error, TimeoutError) as err:
            raise HostUnreachable(host.name, f"{host.address}:{host.port}: {_describe(err)}") from None

    async def _open(
        self, host: ResolvedHost, tunnel: Any, known_hosts: str | None
    ) -> asyncssh.SSHClientConnection:
        name = host.name
        options: dict[str, Any] = {
            "port": host.port,
            "known_hosts": known_hosts if known_hosts is None or os.path.exists(known_hosts) else (),
            "connect_timeout": self.inventory.connect_timeout / 1e9,
            "keepalive_interval": self.inventory.keepalive / 1e9,
            "keepalive_count_max": 3,
            "preferred_auth": "publickey",
        }
        if host.user:
            options["username"] = host.user
        if host.key:
            options["client_keys"] = [host.key]
        if tunnel is not None:
            options["tunnel"] = tunnel
        conn, _client = await asyncio.wait_for(
            asyncssh.create_connection(
                lambda: _Client(lambda exc: self._lost(name, exc)), host.address, **options
            ),
            self.inventory.connect_timeout / 1e9 + 1,
        )
        return conn

    async def _trust_first_key(
        self, host: ResolvedHost, tunnel: Any, known_hosts: str
    ) -> asyncssh.SSHClientConnection:
        conn = await self._open(host, tunnel, None)
        key = conn.get_server_host_key()
        if key is None:
            conn.close()
            raise HostUnreachable(host.name, "the server offered no host key")
        pattern = host.address if host.port == 22 else f"[{host.address}]:{host.port}"
        line = f"{pattern} {key.export_public_key('openssh').decode().strip()}\n"
        os.makedirs(os.path.dirname(known_hosts) or ".", exist_ok=True)
        with open(known_hosts, "a") as f:
            f.write(line)
        log.warning(
            "INSECURE: trusted the first-seen host key of %s (%s) and added it to %s",
            host.name,
            key.get_fingerprint(),
            known_hosts,
        )
        return conn

    def _lost(self, name: str, exc: Exception | None) -> None:
        first = self._conns.pop(name, None)
        extra = self._extra.pop(name, [])
        for conn in [c for c in (first, *extra) if c is not None]:
            self._channels.pop(id(conn), None)
            conn.close()  # a host is up or down as a whole: its other connections go too
        if first is None and not extra:
            return  # already handled (this was one of the connections closed just above)
        if not self._closing:
            self._set_state(
                name, False, f"connection lost: {_describe(exc) if exc else 'closed by the host'}"
            )

    def is_open(self, name: str) -> bool:
        return name in self._conns

    async def run(self, name: str, command: str, timeout_s: float = 30.0) -> asyncssh.SSHCompletedProcess:
        """Run a short command on a host (connecting first if needed)."""
        conn = await self.channel(name)
        try:
            async with self.sem:
                return await conn.run(command, check=False, timeout=timeout_s)
        except asyncssh.TimeoutError as err:
            raise ProviderError(f"host {name}: no answer within {timeout_s:.0f} s") from err
        except (OSError, asyncssh.Error) as err:
            if not self.is_open(name):
                raise HostUnreachable(name, self.reasons.get(name) or _describe(err)) from None
            raise ProviderError(f"host {name}: {_describe(err)}") from None
        finally:
            self.release(conn)

    async def close(self) -> None:
        self._closing = True
        conns = list(self._conns.values()) + [c for extra in self._extra.values() for c in extra]
        self._conns.clear()
        self._extra.clear()
        self._channels.clear()
        for conn in reversed(conns):  # jump hosts were opened first
            conn.close()
        for conn in reversed(conns):
            with contextlib.suppress(Exception):
                await asyncio.wait_for(conn.wait_closed(), 2)
        self._closing = False


def _check_key(host: ResolvedHost) -> None:
    """Raise HostUnreachable naming the inventory's `key` and the fix when it cannot be used."""
    assert host.key is not None
    try:
        asyncssh.read_private_key(host.key)
    except OSError as err:
        why = f"cannot be read ({err.strerror or err})"
        fix = "give the path of a private key in the inventory's `key`, or remove `key` to use the SSH agent"
    except (asyncssh.KeyImportError, asyncssh.KeyEncryptionError) as err:
        if "assphrase" in str(err):  # vnetbench never asks for a passphrase
            why = "is encrypted with a passphrase"
            fix = f"add it to the SSH agent (`ssh-add {host.key}`) and remove `key` from the inventory"
        else:
            why = f"is not a private key ({err})"
            fix = "give the private key's path in the inventory's `key` (not the .pub file)"
    else:
        return
    raise HostUnreachable(host.name, f"key file {host.key} {why}: {fix}")


def _has_entry(known_hosts: str, host: ResolvedHost) -> bool:
    if not os.path.exists(known_hosts):
        return False
    entries = asyncssh.read_known_hosts(known_hosts)
    trusted, ca, *_ = entries.match(host.address, "", host.port)
    return bool(trusted or ca)


def _describe(err: BaseException | None) -> str:
    if err is None:
        return "unknown error"
    if isinstance(err, asyncssh.Error):
        return err.reason or type(err).__name__
    if isinstance(err, TimeoutError | asyncio.TimeoutError):
        return "timed out"
    text = getattr(err, "strerror", None) or str(err) or type(err).__name__
    return text
