"""Userspace Open vSwitch, one instance per host namespace that has an OVS switch.

The kernel here has no openvswitch module, so each instance runs the userspace datapath
(`datapath_type=netdev`): its own ovsdb-server and ovs-vswitchd, started inside the host's
namespace (and the host's cgroup: the switch spends the emulated host's CPU), with database,
sockets, pidfiles and logs under /run/vnetbench/<campaign_id>/ovs-<host>/ — nothing of the
system's Open vSwitch (/var/run/openvswitch, /etc/openvswitch) is touched.
The daemons are not detached: they are our children, recorded with pid and start time.
"""

from __future__ import annotations

import os
import socket
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from vnetbench.providers.base import ProviderError
from vnetbench.providers.local.procs import LocalToolProcess

SCHEMA_PATHS = ("/usr/share/openvswitch/vswitch.ovsschema", "/usr/local/share/openvswitch/vswitch.ovsschema")
TOOLS = ("ovsdb-tool", "ovsdb-server", "ovs-vswitchd", "ovs-vsctl")
START_TIMEOUT_S = 15.0

# spawn(argv, role, env) -> process started in the host namespace and cgroup, already recorded
Spawner = Callable[[list[str], str, dict[str, str]], LocalToolProcess]


def accepts_connections(path: str) -> bool:
    """True once a server listens on the Unix socket at path.

    The socket's file appears at the daemon's bind(), before its listen(): a client connecting
    in between is refused (a busy CI machine hit that window at ovs-vsctl's first call), so
    wait for a connection to succeed, not for the file.
    """
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as probe:
        try:
            probe.connect(path)
        except (FileNotFoundError, ConnectionRefusedError):
            return False
    return True


def schema_path() -> str | None:
    """Open vSwitch's vswitch.ovsschema where its package installed it (None: not installed)."""
    return next((p for p in SCHEMA_PATHS if os.path.exists(p)), None)


@dataclass
class OvsInstance:
    host_ns: str
    rundir: str
    procs: list[LocalToolProcess] = field(default_factory=list)

    @property
    def db(self) -> str:
        return f"unix:{self.rundir}/db.sock"

    def env(self) -> dict[str, str]:
        return {
            **os.environ,
            "OVS_RUNDIR": self.rundir,
            "OVS_LOGDIR": self.rundir,
            "OVS_DBDIR": self.rundir,
            "OVS_SYSCONFDIR": self.rundir,
        }

    def vsctl(self, *args: str, wait: bool = True) -> str:
        argv = ["ovs-vsctl", f"--db={self.db}", "--timeout=30", *([] if wait else ["--no-wait"]), *args]
        result = subprocess.run(argv, capture_output=True, text=True, env=self.env(), timeout=60)
        if result.returncode != 0:
            raise ProviderError(
                f"ovs-vsctl failed in {self.host_ns}: {result.stderr.strip() or result.stdout.strip()}"
                f" (logs in {self.rundir})"
            )
        return result.stdout

    def start(self, spawn: Spawner) -> None:
        schema = schema_path()
        if schema is None:
            raise ProviderError(
                "Open vSwitch's schema vswitch.ovsschema is missing: apt-get install openvswitch-switch"
            )
        os.makedirs(self.rundir, exist_ok=True)
        conf = f"{self.rundir}/conf.db"
        if not os.path.exists(conf):
            result = subprocess.run(["ovsdb-tool", "create", conf, schema], capture_output=True, text=True)
            if result.returncode != 0:
                raise ProviderError(f"ovsdb-tool create failed: {result.stderr.strip()}")
        env = self.env()
        self.procs.append(
            spawn(
                [
                    "ovsdb-server",
                    conf,
                    f"--remote=punix:{self.rundir}/db.sock",
                    f"--unixctl={self.rundir}/ovsdb-server.ctl",
                    f"--pidfile={self.rundir}/ovsdb-server.pid",
                    f"--log-file={self.rundir}/ovsdb-server.log",
                    "--no-chdir",
                ],
                "ovsdb-server",
                env,
            )
        )
        self._wait_for(f"{self.rundir}/db.sock", self.procs[-1])
        self.vsctl("init", wait=False)
        self.procs.append(
            spawn(
                [
                    "ovs-vswitchd",
                    self.db,
                    f"--unixctl={self.rundir}/ovs-vswitchd.ctl",
                    f"--pidfile={self.rundir}/ovs-vswitchd.pid",
                    f"--log-file={self.rundir}/ovs-vswitchd.log",
                    "--no-chdir",
                ],
                "ovs-vswitchd",
                env,
            )
        )
        self._wait_for(f"{self.rundir}/ovs-vswitchd.ctl", self.procs[-1])

    def _wait_for(self, path: str, proc: LocalToolProcess) -> None:
        """Wait until the daemon accepts connections on its Unix socket at path."""
        deadline = time.monotonic() + START_TIMEOUT_S
        while not accepts_connections(path):
            if proc.poll() is not None:
                fin = proc.finished()
                raise ProviderError(
                    f"{proc.argv[0]} exited with {fin.returncode} in {self.host_ns}: "
                    f"{(fin.stderr or fin.stdout).strip()[-500:]} (logs in {self.rundir})"
                )
            if time.monotonic() > deadline:
                raise ProviderError(
                    f"{proc.argv[0]} did not start within {START_TIMEOUT_S:.0f} s in {self.host_ns}"
                )
            time.sleep(0.005)

    def add_bridge(self, name: str, ports: list[str]) -> None:
        args = ["--", "add-br", name, "--", "set", "bridge", name, "datapath_type=netdev"]
        for k, port in enumerate(ports):
            # Without a QoS row ovs-vswitchd deletes a port's root qdisc when it adds the port,
            # which silently removed the link's shaper (tbf/htb); linux-noop leaves tc alone.
            args += ["--", "add-port", name, port, "--", "set", "port", port, f"qos=@noop{k}"]
            args += ["--", f"--id=@noop{k}", "create", "qos", "type=linux-noop"]
        self.vsctl(*args)

    def stop(self) -> list[LocalToolProcess]:
        """Kill the daemons (vswitchd first) and reap them; returns those stopped."""
        stopped = []
        for proc in reversed(self.procs):
            proc.kill()
            stopped.append(proc)
        self.procs = []
        return stopped
