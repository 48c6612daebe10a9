#!/usr/bin/env bash
# vnb-probe benchmarks, over a veth pair between two network namespaces (default) or loopback.
#
#   sudo probe/scripts/veth-bench.sh [--loopback] [--reps N] [--duration S] [--out DIR] [--only LIST]
#
# LIST is a comma list of: accuracy, maxrate, cpu (default: all three).
#   accuracy  achieved rate vs target at 1K/10K/100K pps (18-byte payloads) and send lateness
#   maxrate   highest offered rate of 18-byte payloads received with < 1 % loss, vnb-probe vs
#             iperf3 -u -l 18 (a rate passes when the sender reached >= 99 % of it AND the
#             receiver lost < 1 %)
#   cpu       sender CPU time for 100 Mbit/s of 1472-byte payloads, vnb-probe vs iperf3
#             (getrusage of the child: user + system)
# VNB_SEND_EXTRA="--max-spin-us 0" adds flags to every vnb-probe send, VNB_RECV_EXTRA="--busy-poll"
# to every vnb-probe recv. RATES, MAXRATE_DURATION,
# CPU_DURATION override the maxrate rates (pps list), its run length and the cpu run length (s).
# Every run's raw JSON is kept in DIR (default: a new /tmp/vnbp-bench.XXXX); a summary with the
# median and the spread (min..max) over the repetitions is printed at the end and written to
# DIR/summary.txt.
#
# Creates only: namespaces vnbpA and vnbpB, the veth pair vnbpa0/vnbpb0 (198.18.0.1/24 and
# 198.18.0.2/24). Refuses to run if they already exist; deletes exactly them on exit (trap).
set -euo pipefail

MODE=veth
REPS=3
DUR=5
OUT=""
ONLY="accuracy,maxrate,cpu"
while [ $# -gt 0 ]; do
  case "$1" in
    --loopback) MODE=loopback ;;
    --reps) REPS="$2"; shift ;;
    --duration) DUR="$2"; shift ;;
    --out) OUT="$2"; shift ;;
    --only) ONLY="$2"; shift ;;
    -h|--help) sed -n '2,23p' "$0"; exit 0 ;;
    *) echo "unknown argument: $1" >&2; exit 2 ;;
  esac
  shift
done

HERE="$(cd "$(dirname "$0")/.." && pwd)"
PROBE="${VNB_PROBE:-$HERE/target/release/vnb-probe}"
if [ ! -x "$PROBE" ]; then
  (cd "$HERE" && cargo build --release -q)
fi
command -v iperf3 >/dev/null || { echo "iperf3 is missing: apt-get install iperf3" >&2; exit 1; }
[ -n "$OUT" ] || OUT="$(mktemp -d /tmp/vnbp-bench.XXXX)"
mkdir -p "$OUT"

NSA=vnbpA
NSB=vnbpB
CREATED=0
PIDS=()

cleanup() {
  for p in "${PIDS[@]:-}"; do
    [ -n "$p" ] && kill "$p" 2>/dev/null || true
  done
  if [ "$CREATED" = 1 ]; then
    ip netns del "$NSA" 2>/dev/null || true
    ip netns del "$NSB" 2>/dev/null || true
  fi
}
trap cleanup EXIT INT TERM

if [ "$MODE" = veth ]; then
  [ "$(id -u)" = 0 ] || { echo "veth mode needs root (or use --loopback)" >&2; exit 1; }
  for n in "$NSA" "$NSB"; do
    if ip netns list | grep -qw "$n"; then
      echo "namespace $n exists already; not ours, refusing to touch it" >&2; exit 1
    fi
  done
  CREATED=1
  ip netns add "$NSA"
  ip netns add "$NSB"
  ip -n "$NSA" link add vnbpa0 type veth peer name vnbpb0 netns "$NSB"
  ip -n "$NSA" addr add 198.18.0.1/24 dev vnbpa0
  ip -n "$NSB" addr add 198.18.0.2/24 dev vnbpb0
  ip -n "$NSA" link set lo up
  ip -n "$NSB" link set lo up
  ip -n "$NSA" link set vnbpa0 up
  ip -n "$NSB" link set vnbpb0 up
  INA=(ip netns exec "$NSA")
  INB=(ip netns exec "$NSB")
  DST=198.18.0.2
else
  INA=()
  INB=()
  DST=127.0.0.1
fi
PORT=47000

# Start `vnb-probe recv` in B and wait for its READY line; sets RPID. Args: outfile, extra args...
start_recv() {
  local out="$1"; shift
  "${INB[@]}" "$PROBE" recv ${VNB_RECV_EXTRA:-} --bind "$DST:$PORT" --json "$@" >"$out" 2>"$out.err" &
  RPID=$!
  PIDS+=("$RPID")
  for _ in $(seq 1 300); do
    grep -q '^READY' "$out.err" 2>/dev/null && return 0
    sleep 0.01
  done
  echo "recv did not become ready: $(cat "$out.err")" >&2
  exit 1
}

# cpu_of CMD...: runs CMD, passes its stdout through, writes "CPU <user+system seconds>" to stderr
CPU_OF="$OUT/cpu_of.py"
cat >"$CPU_OF" <<'PY'
import resource, subprocess, sys
p = subprocess.run(sys.argv[1:], stdout=subprocess.PIPE)
sys.stdout.buffer.write(p.stdout)
r = resource.getrusage(resource.RUSAGE_CHILDREN)
sys.stderr.write("CPU %.6f\n" % (r.ru_utime + r.ru_stime))
sys.exit(p.returncode)
PY

echo "mode=$MODE reps=$REPS duration=${DUR}s out=$OUT probe=$PROBE" | tee "$OUT/meta.txt"
uname -r >>"$OUT/meta.txt"; nproc >>"$OUT/meta.txt"; iperf3 --version | head -1 >>"$OUT/meta.txt"

if [[ ",$ONLY," == *",accuracy,"* ]]; then
  for pps in 1000 10000 100000; do
    for rep in $(seq 1 "$REPS"); do
      f="$OUT/accuracy-$pps-$rep"
      start_recv "$f.recv.json" --expect-streams 1 --duration $((DUR + 20))
      "${INA[@]}" "$PROBE" send ${VNB_SEND_EXTRA:-} --dst "$DST:$PORT" --pps "$pps" --size 18 --duration "$DUR" --json >"$f.send.json"
      wait "$RPID" || true
      echo "accuracy pps=$pps rep=$rep done"
    done
  done
fi

if [[ ",$ONLY," == *",maxrate,"* ]]; then
  RATES="${RATES:-100000 200000 300000 400000 500000 600000 700000 800000 1000000 1200000 1500000}"
  MDUR="${MAXRATE_DURATION:-3}"
  for rep in $(seq 1 "$REPS"); do
    for r in $RATES; do
      f="$OUT/maxrate-vnb-$r-$rep"
      start_recv "$f.recv.json" --expect-streams 1 --duration $((MDUR + 20)) --trace-bin-us 0
      "${INA[@]}" "$PROBE" send ${VNB_SEND_EXTRA:-} --dst "$DST:$PORT" --pps "$r" --size 18 --duration "$MDUR" --json >"$f.send.json"
      wait "$RPID" || true
      f="$OUT/maxrate-vnbbp-$r-$rep"
      start_recv "$f.recv.json" --expect-streams 1 --duration $((MDUR + 20)) --trace-bin-us 0 --busy-poll
      "${INA[@]}" "$PROBE" send ${VNB_SEND_EXTRA:-} --dst "$DST:$PORT" --pps "$r" --size 18 --duration "$MDUR" --json >"$f.send.json"
      wait "$RPID" || true
      f="$OUT/maxrate-iperf3-$r-$rep"
      "${INB[@]}" iperf3 -s -1 -J -B "$DST" -p $((PORT + 1)) >"$f.server.json" 2>&1 &
      sp=$!
      PIDS+=("$sp")
      sleep 0.3
      "${INA[@]}" iperf3 -c "$DST" -p $((PORT + 1)) -u -l 18 -b $((r * 18 * 8)) -t "$MDUR" -J >"$f.client.json" 2>&1 || true
      wait "$sp" || true
      echo "maxrate rate=$r rep=$rep done"
    done
  done
fi

if [[ ",$ONLY," == *",cpu,"* ]]; then
  CDUR="${CPU_DURATION:-10}"
  for rep in $(seq 1 "$REPS"); do
    f="$OUT/cpu-vnb-$rep"
    start_recv "$f.recv.json" --expect-streams 1 --duration $((CDUR + 20)) --trace-bin-us 0
    "${INA[@]}" python3 "$CPU_OF" "$PROBE" send ${VNB_SEND_EXTRA:-} --dst "$DST:$PORT" --rate 100M --size 1472 --duration "$CDUR" --json >"$f.send.json" 2>"$f.cpu"
    wait "$RPID" || true
    f="$OUT/cpu-vnbq-$rep"
    start_recv "$f.recv.json" --expect-streams 1 --duration $((CDUR + 20)) --trace-bin-us 0
    "${INA[@]}" python3 "$CPU_OF" "$PROBE" send ${VNB_SEND_EXTRA:-} --pacing-quantum-us 1000 --dst "$DST:$PORT" --rate 100M --size 1472 --duration "$CDUR" --json >"$f.send.json" 2>"$f.cpu"
    wait "$RPID" || true
    f="$OUT/cpu-iperf3-$rep"
    "${INB[@]}" iperf3 -s -1 -J -B "$DST" -p $((PORT + 1)) >"$f.server.json" 2>&1 &
    sp=$!
    PIDS+=("$sp")
    sleep 0.3
    "${INA[@]}" python3 "$CPU_OF" iperf3 -c "$DST" -p $((PORT + 1)) -u -l 1472 -b 100M -t "$CDUR" -J >"$f.client.json" 2>"$f.cpu" || true
    wait "$sp" || true
    echo "cpu rep=$rep done"
  done
fi

python3 - "$OUT" "$REPS" <<'PY' | tee "$OUT/summary.txt"
import glob, json, os, statistics, sys
out, reps = sys.argv[1], int(sys.argv[2])

def load(p):
    try:
        with open(p) as f:
            return json.load(f)
    except Exception:
        return None

def ms(xs, fmt="{:.4g}"):
    xs = [x for x in xs if x is not None]
    if not xs:
        return "n/a"
    return (fmt + " [" + fmt + " .. " + fmt + "] n={}").format(statistics.median(xs), min(xs), max(xs), len(xs))

print("== accuracy (18-byte payloads): median [min .. max] over repetitions")
for pps in (1000, 10000, 100000):
    S = [load(p) for p in sorted(glob.glob(f"{out}/accuracy-{pps}-*.send.json"))]
    R = [load(p) for p in sorted(glob.glob(f"{out}/accuracy-{pps}-*.recv.json"))]
    S = [s for s in S if s]
    R = [r for r in R if r]
    if not S:
        continue
    print(f"target {pps} pps")
    print("  achieved/target ratio     ", ms([s["achieved_to_target_ratio"] for s in S], "{:.5f}"))
    print("  rate error %              ", ms([abs(s["achieved_to_target_ratio"] - 1) * 100 for s in S], "{:.3f}"))
    print("  missed slots              ", ms([s["missed_slots_packets"] for s in S], "{:.0f}"))
    print("  send lateness p50 us      ", ms([s["send_lateness"]["p50_ns"] / 1e3 for s in S], "{:.2f}"))
    print("  send lateness p99 us      ", ms([s["send_lateness"]["p99_ns"] / 1e3 for s in S], "{:.1f}"))
    print("  send lateness max us      ", ms([s["send_lateness"]["max_ns"] / 1e3 for s in S], "{:.0f}"))
    print("  sender CPU %              ", ms([(s["cpu_user_ns"] + s["cpu_system_ns"]) / s["duration_ns"] * 100 for s in S], "{:.1f}"))
    print("  receiver loss ratio       ", ms([r["totals"]["loss_ratio"] for r in R], "{:.5f}"))

def vnb_ok(r, rep, name="vnb"):
    s = load(f"{out}/maxrate-{name}-{r}-{rep}.send.json")
    v = load(f"{out}/maxrate-{name}-{r}-{rep}.recv.json")
    if not s or not v or not v["streams"]:
        return False, None, None
    st = v["streams"][0]
    return (s["achieved_to_target_ratio"] >= 0.99 and st["loss_ratio"] < 0.01), s["achieved_pps"], st["loss_ratio"]

def iperf_ok(r, rep):
    c = load(f"{out}/maxrate-iperf3-{r}-{rep}.client.json")
    sv = load(f"{out}/maxrate-iperf3-{r}-{rep}.server.json")
    try:
        sent = c["end"]["sum"]["packets"]
        secs = c["end"]["sum"]["seconds"]
        ss = sv["end"]["sum"]
        received = ss["packets"] - ss["lost_packets"]
    except Exception:
        return False, None, None
    loss = 1 - received / sent if sent else 1.0
    ach = sent / secs if secs else 0
    return (ach >= 0.99 * r and loss < 0.01), ach, loss

rates = sorted({int(os.path.basename(p).split("-")[2]) for p in glob.glob(f"{out}/maxrate-vnb-*.send.json")})
if rates:
    tools = {"vnb-probe": lambda r, rep: vnb_ok(r, rep, "vnb"),
             "vnb-probe --busy-poll": lambda r, rep: vnb_ok(r, rep, "vnbbp"),
             "iperf3": iperf_ok}
    print("== maxrate: 18-byte payloads. (a) highest target rate that passes: sent >= 99 % of it and")
    print("   loss < 1 %; (b) highest rate actually offered (sent pps) that the receiver got with loss < 1 %")
    print("  rate_pps  rep: achieved_pps/loss per tool (FAIL: fails (a))")
    best = {t: [] for t in tools}
    offered = {t: [] for t in tools}
    for rep in range(1, reps + 1):
        b = {t: 0 for t in tools}
        o = {t: 0.0 for t in tools}
        for r in rates:
            cells = []
            for t, fn in tools.items():
                ok, a, l = fn(r, rep)
                if ok:
                    b[t] = max(b[t], r)
                if a is not None and l is not None and l < 0.01:
                    o[t] = max(o[t], a)
                cells.append(f"{t}: " + ("n/a" if a is None else f"{a:.0f}/{l:.4f}{'' if ok else ' FAIL'}"))
            print(f"  {r:>8}  rep {rep}: " + "   ".join(cells))
        for t in tools:
            best[t].append(b[t])
            offered[t].append(o[t])
    for t in tools:
        print(f"  (a) highest passing target, {t}:", ms(best[t], "{:.0f}"))
    for t in tools:
        print(f"  (b) highest offered rate with loss < 1 %, {t}:", ms(offered[t], "{:.0f}"))
    for t in ("vnb-probe", "vnb-probe --busy-poll"):
        ra = [v / i for v, i in zip(best[t], best["iperf3"]) if i]
        rb = [v / i for v, i in zip(offered[t], offered["iperf3"]) if i]
        print(f"  ratio {t} / iperf3: (a)", ms(ra, "{:.2f}"), " (b)", ms(rb, "{:.2f}"))

cpu = {"vnb": [], "vnbq": [], "iperf3": []}
for rep in range(1, reps + 1):
    for name, acc in cpu.items():
        p = f"{out}/cpu-{name}-{rep}.cpu"
        if os.path.exists(p):
            for line in open(p):
                if line.startswith("CPU "):
                    acc.append(float(line.split()[1]))
if any(cpu.values()):
    print("== cpu: sender CPU seconds (user+system) for 100 Mbit/s of 1472-byte payloads")
    print("  vnb-probe (default pacing):      ", ms(cpu["vnb"], "{:.3f}"))
    print("  vnb-probe --pacing-quantum-us 1000:", ms(cpu["vnbq"], "{:.3f}"))
    print("  iperf3 -u -l 1472 -b 100M:       ", ms(cpu["iperf3"], "{:.3f}"))
    for name in ("vnb", "vnbq"):
        r = [a / b for a, b in zip(cpu[name], cpu["iperf3"]) if b]
        print(f"  ratio {name} / iperf3:", ms(r, "{:.3f}"))
    for name in ("vnb", "vnbq"):
        ach, lat = [], []
        for rep in range(1, reps + 1):
            s = load(f"{out}/cpu-{name}-{rep}.send.json")
            if s:
                ach.append(s["achieved_bps"] / 1e6)
                lat.append(s["send_lateness"]["p99_ns"] / 1e3)
        print(f"  {name} achieved Mbit/s:", ms(ach, "{:.2f}"), " lateness p99 us:", ms(lat, "{:.1f}"))
    ach = []
    for rep in range(1, reps + 1):
        c = load(f"{out}/cpu-iperf3-{rep}.client.json")
        try:
            ach.append(c["end"]["sum"]["bits_per_second"] / 1e6)
        except Exception:
            pass
    print("  iperf3 achieved Mbit/s:", ms(ach, "{:.2f}"))
PY
