"""Real OpenSSH servers in network namespaces, one per "remote host", for tests and benchmarks.

    hub namespace: a bridge; root namespace: one veth into it with 198.18.K.254/24
    host i: namespace with eth0 198.18.K.i/24 on the bridge, its own sshd (port 2222)
    a jump-only host: its sshd listens only on a private link 198.19.K.0/30 to the bastion
      (the root namespace has no route there), but its data address is on the bridge.

Every namespace, link and process made here is recorded on creation and removed by close();
only those: sshd pids we started, their session children, and processes inside our namespaces.
Not /run/sshd: sshd's privilege-separation directory (an empty root-owned directory that the
openssh-server package creates too) is made if missing and left in place, since the sshd of another
SshNet, test session or the system may need it for its next connection.
"""

from __future__ import annotations

import contextlib
import os
import random
import secrets
import shutil
import signal
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

from tests.helpers.processes import command_line
from tests.helpers.timing import wait_until
from vnetbench.providers.ssh.doctor import HostCheck, run_checks
from vnetbench.providers.ssh.loop import LoopThread
from vnetbench.spec.inventory import parse_inventory_data

SSHD = "/usr/sbin/sshd"
PORT = 2222
PRIVSEP_DIR = "/run/sshd"  # compiled into sshd: it chroots there for every connection


def skip_reason() -> str | None:
    if os.geteuid() != 0:
        return "needs root: network namespaces and sshd"
    for tool in (SSHD, shutil.which("ssh-keygen"), shutil.which("ip"), shutil.which("iperf3")):
        if not tool or not os.path.exists(tool):
            return f"missing tool {tool or 'ssh-keygen/ip/iperf3'} (apt-get install openssh-server iproute2 iperf3)"
    if not os.path.isdir("/run/netns") and not os.access("/run", os.W_OK):
        return "cannot create network namespaces (/run not writable)"
    return None


def _ip(*args: str) -> None:
    subprocess.run(["ip", *args], check=True, capture_output=True, text=True)


def _in_ns(ns: str, *argv: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["ip", "netns", "exec", ns, *argv], check=check, capture_output=True, text=True)


@dataclass
class SshHost:
    name: str
    ns: str
    address: str  # data address (on the bridge)
    ssh_address: str  # where its sshd listens
    jump: str | None = None
    sshd: subprocess.Popen[bytes] | None = None


@dataclass
class SshNet:
    root: Path
    count: int
    jump_hosts: int = 1  # the last N hosts are reachable only through host 0
    tag: str = field(default_factory=lambda: secrets.token_hex(3))
    octet: int = 0
    hosts: list[SshHost] = field(default_factory=list)
    namespaces: list[str] = field(default_factory=list)
    root_links: list[str] = field(default_factory=list)

    # ------------------------------------------------------------------ setup

    def start(self) -> SshNet:
        try:
            self._network()
            self._keys()
            for host in self.hosts:
                self.start_sshd(host)
            for host in self.hosts:
                self._wait_port(host)
        except BaseException:
            self.close()
            raise
        return self

    def _pick_octet(self) -> int:
        used = subprocess.run(["ip", "-4", "route"], capture_output=True, text=True).stdout
        for _ in range(50):
            k = random.randint(200, 249)
            if f"198.18.{k}." not in used and f"198.19.{k}." not in used:
                return k
        raise RuntimeError("no free 198.18.K.0/24 test subnet in the root namespace's routes")

    def _netns(self, name: str) -> str:
        self.namespaces.append(name)  # recorded before it is made
        _ip("netns", "add", name)
        _in_ns(name, "ip", "link", "set", "lo", "up")
        return name

    def _network(self) -> None:
        self.octet = k = self._pick_octet()
        hub = self._netns(f"vnbs{self.tag}hub")
        _in_ns(hub, "ip", "link", "add", "br0", "type", "bridge")
        _in_ns(hub, "ip", "link", "set", "br0", "up")
        root_if = f"vnbs{self.tag}r"
        self.root_links.append(root_if)
        _ip("link", "add", root_if, "type", "veth", "peer", "name", "up0", "netns", hub)
        _ip("addr", "add", f"198.18.{k}.254/24", "dev", root_if)
        _ip("link", "set", root_if, "up")
        _in_ns(hub, "ip", "link", "set", "up0", "master", "br0", "up")
        for i in range(self.count):
            ns = self._netns(f"vnbs{self.tag}h{i}")
            _ip(
                "link",
                "add",
                f"vnbs{self.tag}p{i}",
                "netns",
                hub,
                "type",
                "veth",
                "peer",
                "name",
                "eth0",
                "netns",
                ns,
            )
            _in_ns(hub, "ip", "link", "set", f"vnbs{self.tag}p{i}", "master", "br0", "up")
            address = f"198.18.{k}.{i + 1}"
            _in_ns(ns, "ip", "addr", "add", f"{address}/24", "dev", "eth0")
            _in_ns(ns, "ip", "link", "set", "eth0", "up")
            self.hosts.append(SshHost(f"h{i}", ns, address, address))
        bastion = self.hosts[0]
        for j, host in enumerate(self.hosts[self.count - self.jump_hosts :] if self.jump_hosts else []):
            a, b = f"198.19.{k}.{4 * j + 1}", f"198.19.{k}.{4 * j + 2}"
            _ip(
                "link",
                "add",
                "jb",
                "netns",
                bastion.ns,
                "type",
                "veth",
                "peer",
                "name",
                "ja",
                "netns",
                host.ns,
            )
            _in_ns(bastion.ns, "ip", "link", "set", "jb", "name", f"j{j}")
            _in_ns(bastion.ns, "ip", "addr", "add", f"{a}/30", "dev", f"j{j}")
            _in_ns(bastion.ns, "ip", "link", "set", f"j{j}", "up")
            _in_ns(host.ns, "ip", "addr", "add", f"{b}/30", "dev", "ja")
            _in_ns(host.ns, "ip", "link", "set", "ja", "up")
            host.ssh_address, host.jump = b, bastion.name

    def _keys(self) -> None:
        self.root.mkdir(parents=True, exist_ok=True)
        self.user_key = self.root / "id_ed25519"
        subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(self.user_key)], check=True)
        (self.root / "authorized_keys").write_text((self.root / "id_ed25519.pub").read_text())
        lines = []
        for host in self.hosts:
            key = self.root / f"{host.name}_host_key"
            subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(key)], check=True)
            pub = " ".join(Path(f"{key}.pub").read_text().split()[:2])
            lines.append(f"[{host.ssh_address}]:{PORT} {pub}")
            (self.root / f"{host.name}_sshd_config").write_text(
                f"Port {PORT}\nListenAddress {host.ssh_address}\nHostKey {key}\nPidFile none\n"
                f"AuthorizedKeysFile {self.root}/authorized_keys\nPermitRootLogin prohibit-password\n"
                # also for users other than root, who cannot read it under pytest's private tmp dir
                f"AuthorizedKeysCommand /bin/cat {self.root}/authorized_keys\nAuthorizedKeysCommandUser root\n"
                "PasswordAuthentication no\nKbdInteractiveAuthentication no\nUsePAM no\nStrictModes no\n"
                "AllowTcpForwarding yes\nMaxStartups 200\nLogLevel ERROR\nUseDNS no\n"
                "Subsystem sftp internal-sftp\nMaxSessions 64\n"
            )
        self.known_hosts = self.root / "known_hosts"
        self.known_hosts.write_text("\n".join(lines) + "\n")

    def restart_sshd(self, host: SshHost, max_sessions: int) -> None:
        """Restart a host's sshd with another MaxSessions (channels per connection)."""
        self.kill_sshd(host)
        config = self.root / f"{host.name}_sshd_config"
        lines = [ln for ln in config.read_text().splitlines() if not ln.startswith("MaxSessions ")]
        config.write_text("\n".join([*lines, f"MaxSessions {max_sessions}"]) + "\n")
        self.start_sshd(host)
        self._wait_port(host)

    def start_sshd(self, host: SshHost) -> None:
        # never removed (see the module's docstring); exist_ok: another session may make it now
        os.makedirs(PRIVSEP_DIR, mode=0o755, exist_ok=True)
        config = self.root / f"{host.name}_sshd_config"
        log = open(self.root / f"{host.name}_sshd.log", "ab")  # noqa: SIM115
        # root's ~/.bashrc on this machine (pyenv init) costs 0.2-0.6 s per SSH command: bash sources
        # it for commands run by sshd. The test hosts stand for lean servers, so sshd gets a private
        # mount namespace with an empty file over it (each exec keeps the pid: it is sshd's).
        empty = self.root / "empty_bashrc"
        empty.touch()
        bashrc = Path(os.path.expanduser("~root/.bashrc"))
        argv = [SSHD, "-D", "-e", "-f", str(config)]
        if bashrc.exists() and shutil.which("unshare"):
            script = 'mount --bind "$1" "$2" && shift 2 && exec "$@"'
            argv = [
                "unshare",
                "-m",
                "--propagation",
                "private",
                "sh",
                "-c",
                script,
                "sh",
                str(empty),
                str(bashrc),
                *argv,
            ]
        host.sshd = subprocess.Popen(
            ["ip", "netns", "exec", host.ns, *argv],
            stdout=log,
            stderr=log,
            start_new_session=True,
        )
        log.close()

    def _wait_port(self, host: SshHost, timeout_s: float = 10.0) -> None:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            out = _in_ns(host.ns, "cat", "/proc/net/tcp", check=False).stdout
            if f":{PORT:04X} 00000000:0000 0A" in out:
                return
            if host.sshd is not None and host.sshd.poll() is not None:
                log = (self.root / f"{host.name}_sshd.log").read_text()
                raise RuntimeError(f"sshd on {host.name} exited: {log[-500:]}")
            time.sleep(0.02)
        raise RuntimeError(f"sshd on {host.name} did not listen within {timeout_s} s")

    # ------------------------------------------------------------------ the inventory

    def inventory(self, names: dict[str, str] | None = None, **extra: object) -> dict[str, object]:
        """An inventory for these hosts; `names` renames hosts (hostile-name fuzzing)."""
        names = names or {}
        hosts = []
        for i, host in enumerate(self.hosts):
            entry: dict[str, object] = {
                "name": names.get(host.name, host.name),
                "address": host.ssh_address,
                "data_address": host.address,
                "site": "site-a" if (i // 2) % 2 == 0 else "site-b",
                "physical_host": f"ph{i // 2}",
            }
            if host.jump:
                entry["jump"] = names.get(host.jump, host.jump)
            hosts.append(entry)
        return {
            "defaults": {"user": "root", "port": PORT, "key": str(self.user_key)},
            "known_hosts": str(self.known_hosts),
            "hosts": hosts,
            **extra,
        }

    # ------------------------------------------------------------------ failure and teardown

    def kill_sshd(self, host: SshHost) -> None:
        """Kill a host's sshd and its session processes: connections drop, new ones are refused."""
        if host.sshd is None:
            return
        for pid in [*self._descendants(host.sshd.pid), host.sshd.pid]:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        host.sshd.wait(10)
        host.sshd = None

    @staticmethod
    def _descendants(pid: int) -> list[int]:
        out: list[int] = []
        stack = [pid]
        while stack:
            parent = stack.pop()
            try:
                with open(f"/proc/{parent}/task/{parent}/children") as f:
                    kids = [int(x) for x in f.read().split()]
            except OSError:
                kids = []
            out.extend(kids)
            stack.extend(kids)
        return out

    def processes_in_our_namespaces(self) -> list[int]:
        inodes = set()
        for ns in self.namespaces:
            with contextlib.suppress(OSError):
                inodes.add(os.stat(f"/run/netns/{ns}").st_ino)
        found = []
        for entry in os.listdir("/proc"):
            if entry.isdigit():
                with contextlib.suppress(OSError):
                    if os.stat(f"/proc/{entry}/ns/net").st_ino in inodes:
                        found.append(int(entry))
        return found

    def close(self) -> None:
        for host in self.hosts:
            self.kill_sshd(host)
        for _ in range(50):
            pids = self.processes_in_our_namespaces()
            if not pids:
                break
            for pid in pids:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
            time.sleep(0.02)
        for name in reversed(self.namespaces):
            subprocess.run(["ip", "netns", "del", name], capture_output=True)
        self.namespaces.clear()
        for link in self.root_links:
            subprocess.run(["ip", "link", "del", link], capture_output=True)
        self.root_links.clear()


def checks_for(inventory: dict[str, object], **kwargs: object) -> dict[str, HostCheck]:
    loop = LoopThread()
    try:
        found = loop.run(run_checks(parse_inventory_data(inventory), **kwargs), 60)  # type: ignore[arg-type]
    finally:
        loop.stop()
    return {c.name: c for c in found}


def leftovers(net: SshNet, timeout_s: float = 15.0) -> list[str]:
    """Processes in our namespaces that are not sshd (ours) or its session children, once none is
    left or timeout_s has passed: a killed remote process can still be exiting when the campaign's
    command returns (a make test-stress run beside stress-ng saw one pid there, 2026-11-26). Each is
    described by pid, parent, state and command line, so a failure says what was left."""

    def left() -> list[int]:
        sshd = set()
        for host in net.hosts:
            if host.sshd is not None:
                sshd |= {host.sshd.pid, *net._descendants(host.sshd.pid)}
        return [p for p in net.processes_in_our_namespaces() if p not in sshd]

    return [
        _describe_process(pid) for pid in wait_until(left, lambda pids: pids == [], timeout_s, interval=0.2)
    ]


def _describe_process(pid: int) -> str:
    """'pid (ppid P, state S, started T ticks after boot): argv' from /proc, or 'pid (gone)'."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            stat = f.read()
    except OSError:
        return f"{pid} (gone)"
    argv = command_line(pid) or ""
    fields = stat[stat.rindex(")") + 2 :].split()  # after "pid (comm) "
    return f"{pid} (ppid {fields[1]}, state {fields[0]}, started {fields[19]} ticks after boot): {argv}"
