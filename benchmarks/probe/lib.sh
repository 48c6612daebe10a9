# Shared by bc.sh and sender_cpu.sh (sourced, not run): root check, namespaces that are ours only,
# clean-up on exit, the CPU wrapper, run conditions, vnb-probe's receiver and an iperf3 run.
#
# The caller sets OUT (results directory), PROBE (vnb-probe binary), PORT, CDUR (seconds of a
# CPU run), and before each start_recv / iperf_run / vnb_send_cpu: INA / INB (command prefixes
# into the sender's / receiver's namespace) and DST (the receiver's address).

PIDS=()
VMSTAT=""
MADE_NS=()
CPU_OF=""

need_root_and_iperf3() {
  [ "$(id -u)" = 0 ] || { echo "needs root (namespaces, chrt, ethtool)" >&2; exit 1; }
  command -v iperf3 >/dev/null || { echo "iperf3 is missing: apt-get install iperf3" >&2; exit 1; }
}

# Create the named namespaces; refuse (exit 1) if any exists already: it is not ours.
make_namespaces() {
  local n
  for n in "$@"; do
    if ip netns list | grep -qw "$n"; then
      echo "namespace $n exists already; not ours, refusing to touch it" >&2
      exit 1
    fi
  done
  for n in "$@"; do
    ip netns add "$n"
    MADE_NS+=("$n")
  done
}

# Kill what we started, delete exactly the namespaces we made (their veths go with them).
cleanup() {
  local p n
  for p in "${PIDS[@]:-}"; do
    [ -n "$p" ] && kill "$p" 2>/dev/null || true
  done
  [ -n "$VMSTAT" ] && kill "$VMSTAT" 2>/dev/null || true
  for n in "${MADE_NS[@]:-}"; do
    [ -n "$n" ] && ip netns del "$n" 2>/dev/null || true
  done
  [ -n "$CPU_OF" ] && rm -f "$CPU_OF"
}

# CPU of a sender = user + system time of that process from getrusage(RUSAGE_CHILDREN) of this
# small wrapper, the same for every tool: `python3 "$CPU_OF" CMD...` prints "CPU user system"
# (seconds) on stderr and passes CMD's stdout and exit code through.
write_cpu_wrapper() {
  CPU_OF="$OUT/raw/.cpu_of.py"
  cat >"$CPU_OF" <<'PY'
import resource, subprocess, sys
p = subprocess.run(sys.argv[1:], stdout=subprocess.PIPE)
sys.stdout.buffer.write(p.stdout)
r = resource.getrusage(resource.RUSAGE_CHILDREN)
sys.stderr.write("CPU %.6f %.6f\n" % (r.ru_utime, r.ru_stime))
sys.exit(p.returncode)
PY
}

# conditions.txt (uptime, kernel, tool versions) and vmstat every 5 s; conditions_end appends.
conditions_start() {
  {
    echo "start $(date -u +%FT%TZ) $(uptime)"
    echo "kernel $(uname -r) cpus $(nproc) $(iperf3 --version | head -1)"
    echo "probe $PROBE $("$PROBE" --version 2>/dev/null || true)"
  } >"$OUT/conditions.txt"
  vmstat -t 5 >"$OUT/vmstat.txt" &
  VMSTAT=$!
}

conditions_end() {
  echo "end $(date -u +%FT%TZ) $(uptime)" >>"$OUT/conditions.txt"
}

start_recv() { # outfile, duration, extra recv args...
  local out="$1" dur="$2"
  shift 2
  "${INB[@]}" "$PROBE" recv --bind "$DST:$PORT" --expect-streams 1 --duration "$dur" --trace-bin-us 0 \
    --json "$@" >"$out" 2>"$out.err" &
  RPID=$!
  PIDS+=("$RPID")
  for _ in $(seq 1 300); do
    grep -q '^READY' "$out.err" 2>/dev/null && return 0
    sleep 0.01
  done
  echo "recv did not become ready: $(cat "$out.err")" >&2
  exit 1
}

iperf_run() { # file prefix, client args...
  local f="$1"; shift
  "${INB[@]}" iperf3 -s -1 -J -B "$DST" -p $((PORT + 1)) >"$f.server.json" 2>&1 &
  local sp=$!
  PIDS+=("$sp")
  sleep 0.3
  "${INA[@]}" python3 "$CPU_OF" iperf3 -c "$DST" -p $((PORT + 1)) -u -J "$@" >"$f.client.json" 2>"$f.cpu" || true
  wait "$sp" || true
}

vnb_send_cpu() { # file prefix, recv extra ("" or --busy-poll), extra send args...
  local f="$1" rx="$2"
  shift 2
  # shellcheck disable=SC2086  # $rx is empty or one flag
  start_recv "$f.recv.json" $((CDUR + 20)) $rx
  "${INA[@]}" python3 "$CPU_OF" "$PROBE" send --dst "$DST:$PORT" --rate 100M --size 1472 \
    --duration "$CDUR" --json "$@" >"$f.send.json" 2>"$f.cpu"
  wait "$RPID" || true
}
