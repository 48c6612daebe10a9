"""Can a campaign run on these hosts? Checked on all of them at once (`vnetbench doctor`, cli/doctor.py).

Per host, over the same kept-open SSH connections the provider uses: reachable (and why not),
root or password-less sudo, kernel and architecture, iperf3 / ping / vnb-probe present and their
versions, clock offset to this machine (RTT-compensated: the best of several echo exchanges,
± half that round trip), and the path MTU to the next host's data address (ping with DF set).
Says what is missing with the command that installs it; `--install-probe` copies vnb-probe over.
"""

from __future__ import annotations

import asyncio
import platform
import secrets
import shutil
import sys
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import asyncssh
import yaml

from vnetbench.drivers.iperf3 import congestion_note
from vnetbench.drivers.iperf3 import version as iperf3_version
from vnetbench.drivers.ping import version as ping_version
from vnetbench.providers.base import ProviderError
from vnetbench.providers.ssh import remote
from vnetbench.providers.ssh.connect import HostUnreachable, Pool
from vnetbench.providers.ssh.loop import LoopThread
from vnetbench.providers.ssh.provider import INSTALL_HINT
from vnetbench.spec.errors import SpecError, SpecInvalid
from vnetbench.spec.inventory import Inventory, ResolvedHost, load_inventory
from vnetbench.spec.loader import load_spec

TOOLS = {"iperf3": "--version", "ping": "-V", "vnb-probe": "--version"}
REQUIRED = {"iperf3", "ping"}  # vnb-probe only for the measurements that use it
CLOCK_SAMPLES = 8
DEFAULT_PROBE_PATH = "/usr/local/bin/vnb-probe"

FACTS = r"""echo "uid $(id -u)"
echo "user $(id -un)"
if [ "$(id -u)" != 0 ]; then if sudo -n true 2>/dev/null; then echo "sudo yes"; else echo "sudo no"; fi; fi
echo "kernel $(uname -r)"
echo "arch $(uname -m)"
echo "congestion $(cat /proc/sys/net/ipv4/tcp_congestion_control 2>/dev/null)"
echo "congestion_available $(cat /proc/sys/net/ipv4/tcp_available_congestion_control 2>/dev/null)"
while [ $# -gt 1 ]; do
  t=$1; f=$2; shift 2
  if p=$(command -v "$t" 2>/dev/null); then
    printf 'tool\t%s\t%s\t%s\n' "$t" "$p" "$("$p" "$f" 2>&1 | head -n 1)"
  else
    printf 'missing\t%s\n' "$t"
  fi
done
"""

CLOCK = r"""while read -r _; do date +%s%N; done"""

# $1 the address measured to: the largest of (outgoing interface MTU, 1500, 1280) that passes with DF.
PATH_MTU = r"""dev=$(ip route get "$1" 2>/dev/null | sed -n 's/.* dev \([^ ]*\).*/\1/p' | head -n 1)
m=$(cat "/sys/class/net/$dev/mtu" 2>/dev/null || echo 1500)
for s in "$m" 1500 1280; do
  if ping -M do -c 1 -W 1 -s $((s - 28)) "$1" >/dev/null 2>&1; then echo "$s"; exit 0; fi
done
echo 0
"""


@dataclass
class HostCheck:
    name: str
    reachable: bool = False
    reason: str = ""
    user: str = ""
    root: bool = False
    sudo: bool | None = None  # password-less sudo works (None: root, or not checked)
    sudo_wanted: bool = False  # the inventory's `sudo: true`: tools run under `sudo -n`
    kernel: str = ""
    arch: str = ""
    congestion: str = ""  # TCP congestion control a measurement without `congestion:` gets
    congestion_available: list[str] = field(default_factory=list)
    tools: dict[str, str] = field(default_factory=dict)  # tool -> version
    paths: dict[str, str] = field(default_factory=dict)
    missing: list[str] = field(default_factory=list)
    clock_offset_ns: int | None = None
    clock_error_ns: int | None = None
    mtu_peer: str | None = None
    path_mtu: int | None = None
    installed: str | None = None
    seconds: float = 0.0

    @property
    def privileged(self) -> bool:
        return self.root or bool(self.sudo)


async def check_host(pool: Pool, host: ResolvedHost) -> HostCheck:
    """Every check of one host that needs only its connection (facts, tools, sudo)."""
    check = HostCheck(host.name, sudo_wanted=host.sudo)
    started = time.monotonic()
    try:
        await pool.connection(host.name)
    except HostUnreachable as err:
        check.reason = err.reason
        return check
    check.reachable = True
    args = [a for tool, flag in TOOLS.items() for a in (host.tool(tool), flag)]
    try:
        facts = await pool.run(host.name, remote.sh(FACTS, *args), 20)
        _parse_facts(check, str(facts.stdout), host)
        if not check.user:  # no line of FACTS ran: the login shell runs no commands (nologin, a menu)
            said = (str(facts.stdout).strip() or str(facts.stderr).strip()).splitlines()[:1]
            check.reason = (
                f"logged in as {host.user or 'the current user'}, but commands do not run (exit "
                f"{facts.exit_status}{': ' + repr(said[0][:200]) if said else ''}); log in as a user "
                "whose login shell runs commands (e.g. /bin/sh)"
            )
    except ProviderError as err:
        check.reason = str(err)
    check.seconds = time.monotonic() - started
    return check


async def path_mtu(pool: Pool, host: ResolvedHost, check: HostCheck, peer: ResolvedHost) -> None:
    """The largest packet that reaches `peer`'s data address from host with DF set."""
    check.mtu_peer = peer.name
    try:
        done = await pool.run(host.name, remote.sh(PATH_MTU, peer.data_address), 20)
    except ProviderError as err:
        check.reason = str(err)
        return
    value = str(done.stdout).strip()
    check.path_mtu = int(value) if value.isdigit() else None


def _parse_facts(check: HostCheck, text: str, host: ResolvedHost) -> None:
    names = {host.tool(t): t for t in TOOLS}
    for line in text.splitlines():
        if line.startswith("tool\t"):
            _, tool, path, first = [*line.split("\t"), "", "", ""][:4]
            name = names.get(tool, tool)
            check.paths[name] = path
            parse = {"iperf3": iperf3_version, "ping": ping_version}.get(name, lambda s: s.strip())
            check.tools[name] = parse(first)
        elif line.startswith("missing\t"):
            check.missing.append(names.get(line.split("\t", 1)[1], line.split("\t", 1)[1]))
        else:
            key, _, value = line.partition(" ")
            if key == "uid":
                check.root = value.strip() == "0"
            elif key == "user":
                check.user = value.strip()
            elif key == "sudo":
                check.sudo = value.strip() == "yes"
            elif key == "kernel":
                check.kernel = value.strip()
            elif key == "arch":
                check.arch = value.strip()
            elif key == "congestion":
                check.congestion = value.strip()
            elif key == "congestion_available":
                check.congestion_available = value.split()


async def clock_offset(pool: Pool, name: str) -> tuple[int | None, int | None]:
    """Remote clock minus local clock, from the exchange with the shortest round trip (± RTT/2)."""
    try:
        conn = await pool.connection(name)
        proc = await conn.create_process(remote.sh(CLOCK), encoding="utf-8")
    except (asyncssh.Error, OSError, ProviderError):
        return None, None
    best: tuple[int, int] | None = None
    try:
        for _ in range(CLOCK_SAMPLES):
            t0 = time.time_ns()
            proc.stdin.write("x\n")
            line = await asyncio.wait_for(proc.stdout.readline(), 5)
            t1 = time.time_ns()
            if not line.strip().isdigit():
                return None, None
            rtt = t1 - t0
            offset = int(line) - (t0 + t1) // 2
            if best is None or rtt < best[1]:
                best = (offset, rtt)
    except (TimeoutError, asyncssh.Error, OSError):
        return None, None
    finally:
        proc.close()
    return (best[0], best[1] // 2) if best else (None, None)


async def install_probe(pool: Pool, host: ResolvedHost, check: HostCheck, dest: str, local: str) -> str:
    """Copy the local vnb-probe to a host that lacks it; returns what happened, in words."""
    if check.arch and check.arch != platform.machine():
        return f"not copied: the host is {check.arch}, this vnb-probe is {platform.machine()}"
    conn = await pool.connection(host.name)
    tmp = f"/tmp/vnb-probe-{secrets.token_hex(4)}"
    async with conn.start_sftp_client() as sftp:
        await sftp.put(local, tmp)
    script = 'install -D -m 755 "$1" "$2"; s=$?; rm -f "$1"; exit $s'
    done = await pool.run(host.name, remote.sh(script, tmp, dest, sudo=host.sudo and not check.root), 60)
    if done.exit_status != 0:
        return f"copy failed: {str(done.stderr).strip()[-200:]}"
    return f"installed {dest}"


async def run_checks(
    inventory: Inventory, install: bool = False, probe_path: str = DEFAULT_PROBE_PATH
) -> list[HostCheck]:
    """Check every host of the inventory at once; clocks and path MTUs once they are reachable."""
    pool = Pool(inventory)
    hosts = [inventory.resolved(h) for h in inventory.hosts]
    try:
        checks = list(await asyncio.gather(*(check_host(pool, h) for h in hosts)))
        # clocks once the other checks are done (less traffic on the loop: shorter best round trips)
        reachable = [(h, c) for h, c in zip(hosts, checks, strict=True) if c.reachable]
        clocks = await asyncio.gather(*(clock_offset(pool, h.name) for h, _ in reachable))
        for (_, check), (offset, error) in zip(reachable, clocks, strict=True):
            check.clock_offset_ns, check.clock_error_ns = offset, error
        # path MTU from each reachable host to the next reachable one's data address
        ready = [(h, c) for h, c in zip(hosts, checks, strict=True) if c.reachable and "ping" in c.tools]
        if len(ready) > 1:
            await asyncio.gather(
                *(path_mtu(pool, h, c, ready[(i + 1) % len(ready)][0]) for i, (h, c) in enumerate(ready))
            )
        if install:
            lacking = [
                (h, c) for h, c in zip(hosts, checks, strict=True) if c.reachable and "vnb-probe" in c.missing
            ]
            results = await asyncio.gather(
                *(_install(pool, h, c, h.tools.get("vnb-probe", probe_path)) for h, c in lacking),
                return_exceptions=True,
            )
            for (_, check), result in zip(lacking, results, strict=True):
                check.installed = result if isinstance(result, str) else f"copy failed: {result}"
    finally:
        await pool.close()
    return checks


async def _install(pool: Pool, host: ResolvedHost, check: HostCheck, dest: str) -> str:
    beside = Path(sys.executable).parent / "vnb-probe"  # the one pip built into this environment
    local = str(beside) if beside.exists() else shutil.which("vnb-probe")
    if local is None:
        return "not copied: no vnb-probe on this machine (pip install vnetbench builds it)"
    return await install_probe(pool, host, check, dest, local)


def load_any_inventory(path: Path) -> Inventory:
    """An inventory file, or a campaign file with an `inventory:` section."""
    try:
        data = yaml.safe_load(path.read_text())
    except (OSError, yaml.YAMLError, UnicodeDecodeError):  # load_inventory says what is wrong (a binary
        data = None  # file was a UnicodeDecodeError traceback)
    if isinstance(data, dict) and "topology" in data:
        campaign = load_spec(path).campaign
        if campaign.inventory is None:
            raise SpecInvalid(
                [SpecError(str(path), 1, "inventory", "this campaign has no inventory: add one")]
            )
        return campaign.inventory
    return load_inventory(path)


def check_inventory(
    path: Path, install: bool, insecure: bool, probe_path: str | None = None
) -> tuple[list[HostCheck], float]:
    """Check every host of an inventory (or a campaign's) at once; returns the checks and the seconds."""
    inventory = load_any_inventory(path)
    if insecure:
        inventory = inventory.model_copy(update={"insecure_accept_new_host_keys": True})
    loop = LoopThread("vnb-doctor")
    started = time.monotonic()
    try:
        checks = loop.run(run_checks(inventory, install, probe_path or DEFAULT_PROBE_PATH))
    finally:
        loop.stop()
    return checks, time.monotonic() - started


def problems_of(check: HostCheck) -> list[str]:
    """What stops a campaign on this host, each with the fix."""
    if not check.reachable:
        return [f"{check.name}: unreachable — {check.reason}"]
    if not check.user:  # the facts did not run: nothing below is known
        return [f"{check.name}: {check.reason}"]
    out = [f"{check.name}: {tool} missing — install with: {INSTALL_HINT[tool]}" for tool in check.missing]
    if check.sudo_wanted and not check.privileged:  # nothing else needs root on existing hosts
        out.append(
            f"{check.name}: the inventory says `sudo: true`, but `sudo -n` asks {check.user} for a "
            "password: every tool would fail; allow password-less sudo for the user, or set `sudo: false`"
        )
    if check.reason:
        out.append(f"{check.name}: {check.reason}")
    if check.installed:
        out.append(f"{check.name}: vnb-probe {check.installed}")
    return out


def notes_of(check: HostCheck) -> list[str]:
    """What a user should know about a ready host, though nothing stops a campaign there."""
    note = congestion_note(check.congestion, check.congestion_available) if check.congestion else ""
    return [f"{check.name}: {note}"] if note else []


def summary(checks: list[HostCheck], elapsed: float) -> str:
    """The last line of `doctor --inventory`: hosts ready, and why it exits 1 when every host is ready
    but a check of one did not complete (its error is listed above the line)."""
    line = f"{sum(ready(c) for c in checks)}/{len(checks)} hosts ready"
    failed = [c.name for c in checks if ready(c) and c.reason]
    if failed:
        line += f", but a check failed on {', '.join(failed)} (said above)"
    return f"{line}; checked in {elapsed:.2f} s"


def ready(check: HostCheck) -> bool:
    """Reachable with every required tool found there (not merely: none reported missing; a host whose
    tool check did not run reports none), and sudo working where the inventory asks for it."""
    return check.reachable and set(check.tools) >= REQUIRED and (check.privileged or not check.sudo_wanted)


def as_dict(check: HostCheck) -> dict[str, Any]:
    """A check as plain data (JSON)."""
    return asdict(check)
