"""The few fixed shell scripts run on remote hosts, and the argv that carries them.

Every command sent over SSH is built as an argv list and joined with shlex.join: the scripts
below are constants and every variable part (paths, pids, ports, the tool's own argv) reaches
them as a quoted positional parameter, never spliced into script text.
"""

from __future__ import annotations

import ipaddress
import shlex

# A process's start time in clock ticks since boot (/proc/PID/stat field 22; empty without /proc):
# with the pid it names one process for good, so a recycled pid is never killed.
_STARTTIME = r"""st() {
  read -r s < "/proc/$1/stat" 2>/dev/null || return 0
  s=${s##*) }; set -- $s; shift 19; echo "$1"
}
"""

# $1: a fifo path to wait on (the start barrier) or '-'; the rest: the tool's argv.
# Prints its pid and start time first (exec keeps both: they are the tool's), then, after the
# gate, the wall-clock time it starts the tool.
# At the gate it holds its fifo open read-write (a release's write is never lost and never blocks)
# and reads it GATE_POLL_S at a time; between tries it prints "vnb-wait". A wrapper whose spawn was
# cut off by an interrupt is known to no one, so no kill reaches it: once the SSH session that
# started it has gone, that write fails (EPIPE) and it removes its fifo and exits, instead of
# waiting at the gate for ever as an orphan (a CI run under load found one, 2026-11-29).
GATE_POLL_S = 1
SPAWN = (
    _STARTTIME
    + rf"""g=$1; shift
if [ "$g" != - ]; then mkfifo -m 600 "$g" || exit 125; exec 3<>"$g"; fi
echo "vnb-pid $$ $(st $$)"
if [ "$g" != - ]; then
  trap '' PIPE
  until timeout {GATE_POLL_S} sh -c 'read -r _ <&3'; do echo vnb-wait || {{ rm -f "$g"; exit 125; }}; done
  trap - PIPE
  exec 3<&-; rm -f "$g"
fi
echo "vnb-start $(date +%s%N)"
exec "$@"
"""
)

# Write every gate fifo at once. A tool killed at its gate (teardown after an interrupt, racing
# the release) no longer holds its fifo open, and a writer would block in open() for ever, an
# orphan on the host once the session closes: each writer gives up after RELEASE_WAIT_S (a live
# wrapper holds its fifo open from before its pid is reported, so its writer opens at once).
RELEASE_WAIT_S = 5
RELEASE = rf"""for f; do timeout {RELEASE_WAIT_S} sh -c 'echo go > "$1"' vnb "$f" & done; wait"""

# $1 pid, $2 port (4 hex digits, upper case), $3 state (0A tcp listen, 07 udp), $4 tries, $5 proto
LISTENING = r"""i=0
while [ "$i" -lt "$4" ]; do
  kill -0 "$1" 2>/dev/null || exit 3
  cat /proc/net/"$5" /proc/net/"$5"6 2>/dev/null |
    grep -Eq "^ *[0-9]+: [0-9A-F]+:$2 [0-9A-F]+:[0-9A-F]+ $3 " && exit 0
  sleep 0.005
  i=$((i + 1))
done
exit 2
"""

# $1 signal, the rest: PID:STARTTIME recorded at spawn. Only those processes, never a pattern;
# a pid whose start time changed is another process now and is left alone.
KILL = (
    _STARTTIME
    + r"""s=$1; shift
for p; do
  pid=${p%%:*}; want=${p#*:}
  if [ -n "$want" ] && [ "$(st "$pid")" != "$want" ]; then continue; fi
  kill "-$s" "$pid" 2>/dev/null
done
exit 0
"""
)

# $1 the run directory (recorded before it is made), the rest: tools; prints the missing ones.
PREPARE = r"""d=$1; shift
mkdir -p -m 700 "$d" || exit 1
for t; do command -v "$t" >/dev/null || echo "$t"; done
"""

# Telemetry, one round trip per host per reading. $1: 1 to dump the qdiscs (tc), the rest:
# /proc/PID/stat paths. One grep prints every file's lines prefixed "PATH:" (fewer processes than a
# cat per file; the long intr/softirq lines of /proc/stat are left out); a process that has gone
# prints nothing. Then, after a "@@vnb tc" line, the qdiscs as JSON ("@@vnb notc" without tc).
TELEMETRY = r"""q=$1; shift
grep -H -v -e '^intr ' -e '^softirq ' /proc/stat /proc/net/softnet_stat /proc/net/snmp \
  /proc/net/netstat /proc/net/dev "$@" 2>/dev/null
if [ "$q" = 1 ]; then
  if command -v tc >/dev/null 2>&1; then echo "@@vnb tc"; tc -s -j qdisc show; else echo "@@vnb notc"; fi
fi
exit 0
"""

# $1 an address: the route to it (JSON, empty if none) and every interface's addresses (JSON).
ROUTE = r"""ip -j route get "$1" 2>/dev/null
echo "@@vnb addr"
ip -j addr show
"""

# The UDP handshake watchdog's view (run/handshake.py), one round trip per host. $1: the client's
# pid or '-', $2: the server's pid or '-'. Each part starts with a marker line; a pid that has gone
# prints "@@vnb gone" instead of its sockets / counters.
UDP_STATE = r"""if [ "$1" != - ]; then
  echo "@@vnb udp"
  d=/proc/$1/net
  if [ -r "$d/udp" ]; then cat "$d/udp" "$d/udp6" 2>/dev/null; else echo "@@vnb gone"; fi
fi
if [ "$2" != - ]; then
  echo "@@vnb snmp"
  if [ -r "/proc/$2/net/snmp" ]; then grep '^Udp:' "/proc/$2/net/snmp"; else echo "@@vnb gone"; fi
fi
exit 0
"""

RMRUNDIR = r"""case "$1" in */vnb-*) rm -rf -- "$1";; *) exit 64;; esac"""


def sh(script: str, *args: str | int, sudo: bool = False) -> str:
    """The command line that runs `script` with positional args (all quoted)."""
    argv = ["sh", "-c", script, "vnb", *(str(a) for a in args)]
    if sudo:
        argv = ["sudo", "-n", "--", *argv]
    return shlex.join(argv)


def spawn_command(argv: list[str], fifo: str | None, sudo: bool) -> str:
    """The shell command that starts argv under the pid-printing wrapper (gated by `fifo` if given)."""
    return sh(SPAWN, fifo or "-", *argv, sudo=sudo)


def listening_command(pid: int, port: int, proto: str, tries: int, sudo: bool) -> str:
    """The shell command that waits until pid listens on port (tcp/udp)."""
    state = "0A" if proto == "tcp" else "07"
    return sh(LISTENING, pid, f"{port:04X}", state, tries, "tcp" if proto == "tcp" else "udp", sudo=sudo)


def kill_command(procs: list[tuple[int, int | None]], signal: str = "KILL", sudo: bool = False) -> str:
    """Kill (pid, start time) pairs; a None start time (no /proc) kills by pid alone."""
    items = [f"{int(pid)}:{'' if start is None else int(start)}" for pid, start in procs]
    return sh(KILL, signal, *items, sudo=sudo)


def telemetry_command(pids: list[int], qdiscs: bool) -> str:
    """Read the host's counters (no sudo: /proc and `tc qdisc show` are readable by anyone)."""
    valid = [int(p) for p in pids]
    if any(p <= 0 for p in valid):
        raise ValueError(f"not a process id: {min(valid)}")
    return sh(TELEMETRY, 1 if qdiscs else 0, *(f"/proc/{p}/stat" for p in valid))


def route_command(address: str) -> str:
    """The shell command that asks a host its route to an address (validated as an IP address)."""
    return sh(ROUTE, str(ipaddress.ip_address(address)))


def udp_state_command(client_pid: int | None, server_pid: int | None, sudo: bool = False) -> str:
    """Print the UDP sockets of client_pid's namespace and the UDP counters of server_pid's (either
    may be None: that part is left out). With sudo where the tools run as root: a process of another
    user may hide its /proc/PID/net."""
    pids = [str(int(p)) if p else "-" for p in (client_pid, server_pid)]
    return sh(UDP_STATE, *pids, sudo=sudo)


def parse_udp_state(text: str) -> dict[str, str | None]:
    """The parts of UDP_STATE's output by name ("udp": the client's sockets, "snmp": the server's
    counters); None for a part whose pid had gone."""
    parts: dict[str, list[str]] = {}
    lines: list[str] | None = None
    for line in text.splitlines():
        if line in ("@@vnb udp", "@@vnb snmp"):
            lines = parts.setdefault(line.split()[1], [])
        elif lines is not None:
            lines.append(line)
    return {name: None if "@@vnb gone" in body else "\n".join(body) for name, body in parts.items()}
