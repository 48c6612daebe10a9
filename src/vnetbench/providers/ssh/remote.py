"""The few fixed shell scripts run on remote hosts, and the argv that carries them.

Every command sent over SSH is built as an argv list and joined with shlex.join: the scripts
below are constants and every variable part (paths, pids, ports, the tool's own argv) reaches
them as a quoted positional parameter, never spliced into script text.
"""

from __future__ import annotations

import shlex

# $1: a fifo path to wait on (the start barrier) or '-'; the rest: the tool's argv.
# Prints its pid first (exec keeps it: the pid is the tool's), then the start time after the gate.
SPAWN = r"""g=$1; shift
if [ "$g" != - ]; then mkfifo -m 600 "$g" || exit 125; fi
echo "vnb-pid $$"
if [ "$g" != - ]; then read _ < "$g"; rm -f "$g"; fi
echo "vnb-start $(date +%s%N)"
exec "$@"
"""

# Open every gate fifo at once (each open blocks until its reader is there: no lost wake-ups).
RELEASE = r"""for f; do echo go > "$f" & done; wait"""

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

# $1 signal, the rest: pids recorded at spawn. Only those pids, never a pattern.
KILL = r"""s=$1; shift
for p; do kill "-$s" "$p" 2>/dev/null; done
exit 0
"""

# $1 the run directory (recorded before it is made), the rest: tools; prints the missing ones.
PREPARE = r"""d=$1; shift
mkdir -p -m 700 "$d" || exit 1
for t; do command -v "$t" >/dev/null || echo "$t"; done
"""

RMRUNDIR = r"""case "$1" in */vnb-*) rm -rf -- "$1";; *) exit 64;; esac"""


def sh(script: str, *args: str | int, sudo: bool = False) -> str:
    """The command line that runs `script` with positional args (all quoted)."""
    argv = ["sh", "-c", script, "vnb", *(str(a) for a in args)]
    if sudo:
        argv = ["sudo", "-n", "--", *argv]
    return shlex.join(argv)


def spawn_command(argv: list[str], fifo: str | None, sudo: bool) -> str:
    return sh(SPAWN, fifo or "-", *argv, sudo=sudo)


def listening_command(pid: int, port: int, proto: str, tries: int, sudo: bool) -> str:
    state = "0A" if proto == "tcp" else "07"
    return sh(LISTENING, pid, f"{port:04X}", state, tries, "tcp" if proto == "tcp" else "udp", sudo=sudo)


def kill_command(pids: list[int], signal: str = "KILL", sudo: bool = False) -> str:
    return sh(KILL, signal, *(int(p) for p in pids), sudo=sudo)
