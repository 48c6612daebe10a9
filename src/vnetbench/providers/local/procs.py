"""Tools started inside a node: fork, enter the namespace and cgroup, (wait at the gate), exec.

The child is forked by hand rather than by subprocess.Popen: Popen waits until its child has
exec'd, which a child held at a start gate has not. The child only makes system calls between
fork and exec (setns, write, dup2, read, execve), like Popen's preexec_fn would.

stdout and stderr go to unlinked temporary files, never pipes: a tool writing megabytes of JSON
cannot block on a full pipe. Each child leads a new session, so its process group is killed whole.

A Gate is a pipe: gated children block reading it; release() writes one byte per child so all
start at once, and each child reports time.clock_gettime_ns(CLOCK_REALTIME) through a second pipe
right before exec.
"""

from __future__ import annotations

import contextlib
import math
import os
import select
import signal
import struct
import tempfile
import threading
import time
from collections.abc import Callable
from typing import IO

from vnetbench.providers import procnet
from vnetbench.providers.base import Finished, Gate, ProviderError, ToolProcess
from vnetbench.providers.local import kernel, signals

REPORT = struct.Struct("=iq")  # pid, UTC ns just before exec
EXIT_SETUP_FAILED = 126
EXIT_EXEC_FAILED = 127
EXIT_GATE_CLOSED = 125
_DEFAULT_SIGNALS = (signal.SIGPIPE, signal.SIGINT, signal.SIGTERM, signal.SIGQUIT, signal.SIGHUP)


def starttime(pid: int) -> int | None:
    """Field 22 of /proc/PID/stat (clock ticks after boot): with the pid, identifies a process."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            data = f.read()
    except OSError:
        return None
    try:
        return int(data[data.rindex(b")") + 2 :].split()[19])
    except (ValueError, IndexError):
        return None


class LocalGate(Gate):
    def __init__(self) -> None:
        self.gate_r, self.gate_w = os.pipe()
        self.report_r, self.report_w = os.pipe()
        self.procs: list[LocalToolProcess] = []
        self.released = False
        self.closed = False

    def release(self, timeout_s: float = 10.0) -> list[int]:
        if self.released or self.closed:
            raise ProviderError("this gate was already released or closed")
        self.released = True
        os.close(self.report_w)  # only the children hold it now: EOF once all exec'd or died
        self.report_w = -1
        fallback = time.time_ns()
        if self.procs:
            os.write(self.gate_w, b"g" * len(self.procs))
        stamps: dict[int, int] = {}
        buf = b""
        deadline = time.monotonic() + timeout_s
        # poll, not select: select() cannot watch a descriptor numbered 1024 or above, which a
        # campaign of 1,000 nodes reaches (one descriptor per namespace).
        poller = select.poll()
        poller.register(self.report_r, select.POLLIN)
        while len(stamps) < len(self.procs):
            left = deadline - time.monotonic()
            if left <= 0 or not poller.poll(max(1, math.ceil(left * 1000))):
                break
            chunk = os.read(self.report_r, 4096)
            if not chunk:
                break
            buf += chunk
            while len(buf) >= REPORT.size:
                pid, stamp = REPORT.unpack_from(buf)
                stamps[pid] = stamp
                buf = buf[REPORT.size :]
        self.close()
        # A child that died before the gate (its failure is in its stderr and exit code) gets
        # the parent's release time, so the list stays in spawn order.
        out = []
        for proc in self.procs:
            stamp = stamps.get(proc.pid, fallback)
            proc.started_utc_ns = stamp
            out.append(stamp)
        return out

    def close(self) -> None:
        if self.closed:
            return
        self.closed = True
        for fd in (self.gate_r, self.gate_w, self.report_r, self.report_w):
            if fd >= 0:
                with contextlib.suppress(OSError):
                    os.close(fd)
        self.gate_r = self.gate_w = self.report_r = self.report_w = -1


class LocalToolProcess(ToolProcess):
    def __init__(
        self,
        node: str,
        argv: list[str],
        pid: int,
        stdout: IO[bytes],
        stderr: IO[bytes],
        started_utc_ns: int,
        on_reaped: Callable[[LocalToolProcess], None] | None = None,
    ) -> None:
        self.node = node
        self.argv = argv
        self.pid = pid
        self.stdout_file = stdout
        self.stderr_file = stderr
        self.started_utc_ns = started_utc_ns
        self.ended_utc_ns = 0
        self.returncode: int | None = None
        self.reaped = False
        self.timed_out = False
        self.starttime = starttime(pid)
        self.object_id: int | None = None
        self._output: tuple[str, str] | None = None
        self._output_lock = threading.Lock()  # the reaper thread and the caller both read output
        self._on_reaped = on_reaped
        try:
            self._pidfd: int | None = os.pidfd_open(pid)
        except (OSError, AttributeError):
            self._pidfd = None

    # ------------------------------------------------------------------ state

    def _reap(self, status: int) -> None:
        self.returncode = os.waitstatus_to_exitcode(status)
        self.ended_utc_ns = time.time_ns()
        self.reaped = True
        if self._pidfd is not None:
            with contextlib.suppress(OSError):
                os.close(self._pidfd)
            self._pidfd = None
        if self._on_reaped:
            self._on_reaped(self)

    def poll(self) -> int | None:
        if self.reaped:
            return self.returncode
        try:
            pid, status = os.waitpid(self.pid, os.WNOHANG)
        except ChildProcessError:
            self._reap(0)
            return self.returncode
        if pid:
            self._reap(status)
        return self.returncode

    def _wait_exit(self, timeout_s: float) -> bool:
        """True once the process has exited (reaped), False if timeout_s passed first."""
        deadline = time.monotonic() + max(0.0, timeout_s)
        while self.poll() is None:
            left = deadline - time.monotonic()
            if left <= 0:
                return False
            if self._pidfd is not None:
                poller = select.poll()
                poller.register(self._pidfd, select.POLLIN)
                poller.poll(max(1, int(left * 1000)))
            else:
                time.sleep(min(left, 0.005))
        return True

    def _kill_group(self) -> None:
        # Only while the leader is not reaped: its pid cannot be reused while it is a zombie.
        if self.reaped:
            return
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.pid, signal.SIGKILL)
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(self.pid, signal.SIGKILL)

    # ------------------------------------------------------------------ interface

    def wait(self, timeout_s: float) -> Finished:
        if not self._wait_exit(timeout_s):
            self._kill_group()
            self._wait_exit(5.0)
            self.timed_out = True
        return self.finished()

    def kill(self) -> None:
        if self.reaped:
            return
        self._kill_group()
        self._wait_exit(5.0)

    def output(self) -> tuple[str, str]:
        """stdout and stderr so far; once the process is reaped, read once and the files closed."""
        with self._output_lock:
            if self._output is not None:
                return self._output
            out = (_read(self.stdout_file), _read(self.stderr_file))
            if self.reaped:
                self._output = out
                self.stdout_file.close()
                self.stderr_file.close()
            return out

    def finished(self) -> Finished:
        stdout, stderr = self.output()
        return Finished(
            returncode=None if self.timed_out else self.returncode,
            stdout=stdout,
            stderr=stderr,
            started_utc_ns=self.started_utc_ns,
            ended_utc_ns=self.ended_utc_ns,
            timed_out=self.timed_out,
        )


def _read(f: IO[bytes]) -> str:
    """Everything the child wrote so far. pread, not seek + read: no shared file position to race on."""
    try:
        fd = f.fileno()
        chunks, offset = [], 0
        while chunk := os.pread(fd, 1 << 20, offset):
            chunks.append(chunk)
            offset += len(chunk)
        return b"".join(chunks).decode("utf-8", errors="replace")
    except (OSError, ValueError):
        return ""


def spawn(
    node: str,
    argv: list[str],
    ns_fd: int,
    cgroup_procs: str | None,
    gate: LocalGate | None = None,
    env: dict[str, str] | None = None,
    on_reaped: Callable[[LocalToolProcess], None] | None = None,
    register: Callable[[LocalToolProcess], None] | None = None,
) -> LocalToolProcess:
    """Fork a child that enters the namespace at ns_fd and the cgroup, then execs argv.

    register(proc) is called before any signal handler can run after the fork, so an interrupt
    never leaves a child nobody knows about.
    """
    if not argv:
        raise ProviderError("empty command")
    path = argv[0] if "/" in argv[0] else _which(argv[0])
    if gate is not None and (gate.released or gate.closed):
        raise ProviderError("cannot spawn behind a gate that was already released or closed")
    env = dict(os.environ if env is None else env)
    env.setdefault("LC_ALL", "C")
    stdout = tempfile.TemporaryFile(prefix="vnb-out-")  # noqa: SIM115 (kept by the process object)
    stderr = tempfile.TemporaryFile(prefix="vnb-err-")  # noqa: SIM115
    cg_fd = os.open(cgroup_procs, os.O_WRONLY | os.O_CLOEXEC) if cgroup_procs else -1
    devnull = os.open(os.devnull, os.O_RDONLY | os.O_CLOEXEC)
    # Ungated: a CLOEXEC pipe that reaches EOF at exec, or carries the reason setup failed.
    # Gated: the failure shows in the process's exit code and stderr after release().
    err_r, err_w = os.pipe() if gate is None else (-1, -1)
    started = time.time_ns()
    with signals.deferred():
        try:
            pid = os.fork()
            if pid == 0:  # child: system calls only, never returns
                _child(path, argv, env, ns_fd, cg_fd, devnull, stdout.fileno(), stderr.fileno(), err_w, gate)
        finally:
            for fd in (cg_fd, devnull, err_w):
                if fd >= 0:
                    os.close(fd)
        proc = LocalToolProcess(node, list(argv), pid, stdout, stderr, started, on_reaped)
        if register is not None:
            register(proc)
        if gate is not None:
            gate.procs.append(proc)
    if gate is not None:
        return proc
    try:
        message = b""
        while chunk := os.read(err_r, 4096):  # returns at exec (CLOEXEC) or after a failure
            message += chunk
    finally:
        os.close(err_r)
    if message:
        proc.wait(5.0)
        raise ProviderError(f"could not start {argv[0]} on {node}: {message.decode(errors='replace')}")
    return proc


def _which(name: str) -> str:
    path = os.environ.get("PATH", "/usr/local/bin:/usr/bin:/bin").split(":")
    for directory in [*path, "/usr/local/sbin", "/usr/sbin", "/sbin"]:
        candidate = os.path.join(directory or ".", name)
        if os.path.isfile(candidate) and os.access(candidate, os.X_OK):
            return candidate
    raise ProviderError(f"{name}: command not found (install it, e.g. the Debian package {package_of(name)})")


PACKAGES = {
    "iperf3": "iperf3",
    "ping": "iputils-ping",
    "ethtool": "ethtool",
    "ovs-vswitchd": "openvswitch-switch",
    "ovsdb-server": "openvswitch-switch",
    "ovs-vsctl": "openvswitch-switch",
    "ovsdb-tool": "openvswitch-switch",
    "tcpdump": "tcpdump",
}


def package_of(tool: str) -> str:
    """The Debian package that installs a tool."""
    return PACKAGES.get(tool, tool)


def _child(
    path: str,
    argv: list[str],
    env: dict[str, str],
    ns_fd: int,
    cg_fd: int,
    devnull: int,
    out_fd: int,
    err_fd: int,
    err_w: int,
    gate: LocalGate | None,
) -> None:
    step = "setsid"
    try:
        os.setsid()
        step = "join the cgroup"
        if cg_fd >= 0:
            os.write(cg_fd, str(os.getpid()).encode())
        step = "enter the node's network namespace"
        kernel.setns_net(ns_fd)
        step = "redirect stdio"
        os.dup2(devnull, 0)
        os.dup2(out_fd, 1)
        os.dup2(err_fd, 2)
        if gate is not None:
            step = "wait at the gate"
            os.close(gate.gate_w)
            os.close(gate.report_r)
            if os.read(gate.gate_r, 1) != b"g":
                os._exit(EXIT_GATE_CLOSED)  # the gate was closed without release: do not run
            os.write(gate.report_w, REPORT.pack(os.getpid(), time.clock_gettime_ns(time.CLOCK_REALTIME)))
        step = f"execute {path}"
        for sig in _DEFAULT_SIGNALS:  # the tool gets default dispositions, as Popen gives it
            signal.signal(sig, signal.SIG_DFL)
        os.execve(path, argv, env)
    except BaseException as err:
        message = f"{step}: {err}".encode(errors="replace")
        with contextlib.suppress(BaseException):
            os.write(2, b"vnetbench: " + message + b"\n")
        if err_w >= 0:
            with contextlib.suppress(BaseException):
                os.write(err_w, message)
        os._exit(EXIT_EXEC_FAILED if step.startswith("execute") else EXIT_SETUP_FAILED)
    os._exit(EXIT_SETUP_FAILED)


def _sockets(pid: int, files: tuple[str, ...]) -> list[list[str]] | None:
    """The rows of /proc/PID/net/<file> (that pid's namespace's sockets); None if pid is gone."""
    rows: list[list[str]] = []
    seen_any = False
    for name in files:
        try:
            with open(f"/proc/{pid}/net/{name}") as f:
                text = f.read()
        except FileNotFoundError:
            continue
        except ProcessLookupError:
            return None
        seen_any = True
        rows += procnet.socket_rows(text)
    return rows if seen_any else None


def listening(pid: int, port: int, proto: str) -> bool | None:
    """Whether a socket in pid's network namespace listens on port (tcp: LISTEN, udp: bound).

    Reads /proc/PID/net/{tcp,tcp6} or {udp,udp6}, which show that pid's namespace. None if pid is gone.
    """
    proto = proto.lower()
    files = ("tcp", "tcp6") if proto.startswith("tcp") else ("udp", "udp6")
    want_state = "0A" if proto.startswith("tcp") else None  # TCP_LISTEN; UDP: any bound socket
    rows = _sockets(pid, files)
    if rows is None:
        return None
    hex_port = f"{port:04X}"
    return any(
        local.rsplit(":", 1)[-1] == hex_port and (want_state is None or state == want_state)
        for _, local, _, state, *_ in rows
    )


def udp_connected_to(pid: int, port: int) -> bool | None:
    """Whether a UDP socket in pid's namespace is connected to remote port `port`. None if pid is gone."""
    rows = _sockets(pid, ("udp", "udp6"))
    return None if rows is None else procnet.connected_to_port(rows, port)


def udp_datagrams_in(pid: int) -> int | None:
    """UDP datagrams that reached a socket in pid's namespace (procnet.udp_datagrams), from
    /proc/PID/net/snmp. None if pid is gone or it is unreadable."""
    try:
        with open(f"/proc/{pid}/net/snmp") as f:
            return procnet.udp_datagrams(f.read())
    except (FileNotFoundError, ProcessLookupError):
        return None
