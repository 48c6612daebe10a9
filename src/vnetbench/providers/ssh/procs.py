"""Tools running on remote hosts: spawned over a kept-open SSH connection, gated, collected, killed by pid.

A tool runs under the fixed wrapper in remote.py: it prints its pid (kept by exec: it is the
tool's), waits on its own fifo when gated, prints its start time and execs the tool. The gate
opens every fifo of a step at once, one command per host, all hosts in parallel.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections import defaultdict
from collections.abc import Callable

import asyncssh

from vnetbench.providers.base import Finished, Gate, ProviderError, ToolProcess
from vnetbench.providers.ssh import remote
from vnetbench.providers.ssh.connect import HostUnreachable, Pool, _describe
from vnetbench.providers.ssh.loop import LoopThread
from vnetbench.store.records import now_utc_ns

PID_TIMEOUT_S = 15.0


class SshToolProcess(ToolProcess):
    def __init__(
        self, loop: LoopThread, pool: Pool, host: str, node: str, argv: list[str], sudo: bool
    ) -> None:
        self.loop, self.pool, self.host, self.node, self.argv, self.sudo = loop, pool, host, node, argv, sudo
        self.pid = 0
        self.starttime: int | None = None  # clock ticks since the host booted (/proc/PID/stat)
        self.object_id: int | None = None
        self.started_utc_ns = now_utc_ns()
        self.ended_utc_ns = 0
        self.remote_start_ns: int | None = None
        self.fifo: str | None = None
        self._proc: asyncssh.SSHClientProcess | None = None
        self._conn: asyncssh.SSHClientConnection | None = None
        self._out: list[str] = []
        self._err: list[str] = []
        self._pid_seen: asyncio.Event | None = None
        self._start_seen: asyncio.Event | None = None
        self._done: asyncio.Task[int | None] | None = None
        self.lost: str | None = None  # the connection dropped while it ran
        self.killed = False
        self.on_gone: Callable[[SshToolProcess], None] | None = None
        self._starting = False  # start() is under way (its caller may have stopped waiting: an interrupt)

    # ------------------------------------------------------------------ on the loop

    async def start(self, fifo: str | None) -> None:
        self._starting = True
        try:
            await self._start(fifo)
        finally:
            self._starting = False

    async def until_started(self, timeout_s: float) -> None:
        """Wait (bounded) for a start under way to report its pid or fail: teardown must not miss
        a process whose spawn an interrupt stopped waiting for (it runs on here, unrecorded)."""
        deadline = asyncio.get_running_loop().time() + timeout_s
        while self._starting and not self.pid and asyncio.get_running_loop().time() < deadline:
            await asyncio.sleep(0.02)

    async def _start(self, fifo: str | None) -> None:
        self.fifo = fifo
        self._pid_seen, self._start_seen = asyncio.Event(), asyncio.Event()
        conn = await self.pool.channel(self.host)
        self._conn = conn
        command = remote.spawn_command(self.argv, fifo, self.sudo)
        try:
            async with self.pool.sem:
                self._proc = await conn.create_process(command, encoding="utf-8", errors="replace")
        except (OSError, asyncssh.Error) as err:
            self.pool.release(conn)
            raise HostUnreachable(self.host, _describe(err)) from None
        self._done = asyncio.ensure_future(self._collect())
        waiter = asyncio.ensure_future(self._pid_seen.wait())
        await asyncio.wait({waiter, self._done}, timeout=PID_TIMEOUT_S, return_when=asyncio.FIRST_COMPLETED)
        waiter.cancel()
        if not self.pid:
            detail = "".join(self._err).strip()[-300:] or self.lost or "no pid reported"
            raise ProviderError(f"could not start {self.argv[0]} on {self.host}: {detail}")

    async def _collect(self) -> int | None:
        assert self._proc is not None
        stderr = asyncio.ensure_future(self._read_stderr())
        try:
            async for line in self._proc.stdout:
                if not self.pid and line.startswith("vnb-pid "):
                    fields = line.split()
                    self.starttime = int(fields[2]) if len(fields) > 2 and fields[2].isdigit() else None
                    self.pid = int(fields[1])
                    assert self._pid_seen is not None
                    self._pid_seen.set()
                elif self.remote_start_ns is None and line.startswith("vnb-wait"):
                    continue  # still at the gate (remote.SPAWN): not the tool's output
                elif self.remote_start_ns is None and line.startswith("vnb-start "):
                    value = line.split()[1]
                    self.remote_start_ns = int(value) if value.isdigit() else now_utc_ns()
                    assert self._start_seen is not None
                    self._start_seen.set()
                else:
                    self._out.append(line)
            await self._proc.wait_closed()
        except (OSError, asyncssh.Error) as err:
            self.lost = _describe(err)
        with contextlib.suppress(Exception):
            await stderr
        self.ended_utc_ns = now_utc_ns()
        if self._conn is not None:
            self.pool.release(self._conn)  # the session slot is free again
            self._conn = None
        if self._start_seen is not None:
            self._start_seen.set()  # nobody waits for a start that will never come
        status = self._proc.exit_status
        if status is None or status < 0:
            if not self.pool.is_open(self.host) and not self.killed:
                self.lost = self.pool.reasons.get(self.host) or "connection lost"
            status = None
        if self.on_gone:
            self.on_gone(self)
        return status

    async def _read_stderr(self) -> None:
        assert self._proc is not None
        async for chunk in self._proc.stderr:
            self._err.append(chunk)

    async def _kill(self) -> None:
        if self._done is None or self._done.done():
            return
        self.killed = True
        if self.pid and self.pool.is_open(self.host):
            with contextlib.suppress(ProviderError):
                await self.pool.run(
                    self.host, remote.kill_command([(self.pid, self.starttime)], "KILL", self.sudo), 10
                )
        if self._proc is not None:
            self._proc.close()
        with contextlib.suppress(asyncio.TimeoutError, Exception):
            await asyncio.wait_for(asyncio.shield(self._done), 5)

    async def _wait(self, timeout_s: float) -> bool:
        assert self._done is not None
        try:
            await asyncio.wait_for(asyncio.shield(self._done), timeout_s)
            return True
        except TimeoutError:
            return False

    # ------------------------------------------------------------------ the ToolProcess interface

    def poll(self) -> int | None:
        if self._done is None or not self._done.done():
            return None
        status = self._done.result()
        return status if status is not None else -9

    def wait(self, timeout_s: float) -> Finished:
        finished = self.loop.run(self._wait(timeout_s))
        if not finished:
            self.kill()
        if self.lost and not self.killed:
            raise HostUnreachable(self.host, f"{self.lost} while {self.argv[0]} ran on {self.node}")
        assert self._done is not None
        status = self._done.result() if self._done.done() else None
        return Finished(
            returncode=status if finished else None,
            stdout="".join(self._out),
            stderr="".join(self._err),
            started_utc_ns=self.remote_start_ns or self.started_utc_ns,
            ended_utc_ns=self.ended_utc_ns or now_utc_ns(),
            timed_out=not finished,
        )

    def kill(self) -> None:
        self.loop.run(self._kill(), 30)


class SshGate(Gate):
    """A start barrier across hosts: each gated tool waits on its own fifo until release()."""

    def __init__(self, loop: LoopThread, pool: Pool, rundirs: dict[str, str], sudo: dict[str, bool]) -> None:
        self.loop, self.pool, self.rundirs, self.sudo = loop, pool, rundirs, sudo
        self.procs: list[SshToolProcess] = []
        self._n = 0
        self._open = True

    def fifo_for(self, host: str) -> str:
        self._n += 1
        return f"{self.rundirs[host]}/gate-{id(self):x}-{self._n}"

    def release(self) -> list[int]:
        return self.loop.run(self._release(), 60)

    async def _release(self) -> list[int]:
        by_host: dict[str, list[str]] = defaultdict(list)
        for proc in self.procs:
            if proc.fifo:
                by_host[proc.host].append(proc.fifo)
        self._open = False
        results = await asyncio.gather(
            *(
                self.pool.run(host, remote.sh(remote.RELEASE, *fifos, sudo=self.sudo[host]), 30)
                for host, fifos in by_host.items()
            ),
            return_exceptions=True,
        )
        errors = [r for r in results if isinstance(r, BaseException)]
        if errors:
            raise errors[0] if isinstance(errors[0], ProviderError) else ProviderError(str(errors[0]))
        for proc in self.procs:
            if proc._start_seen is not None:
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(proc._start_seen.wait(), 10)
        return [p.remote_start_ns or now_utc_ns() for p in self.procs]

    def close(self) -> None:
        if self._open:  # never released: the gated tools must not start later
            self._open = False
            for proc in self.procs:
                proc.kill()
