#!/usr/bin/env bash
# Proofs (b) and (c) of issue 3 again, side by side with iperf3 in one run, after the pacing
# rework (adaptive default: every packet at its own slot up to 20K pps, 50 µs batches above):
#   (b) sender CPU for 100 Mbit/s of 1472-byte datagrams (8 492 packets/s), 10 s per run:
#       iperf3 -u -l 1472 -b 100M, vnb-probe default, --pacing-quantum-us 1000 (iperf3's own
#       1 ms pacing timer) and --pacing-quantum-us 5000 (also with the receiver busy-polling),
#       in a rotating order per repetition
#   (c) achieved rate vs target at 1K/10K/100K packets/s of 18-byte payloads and send lateness,
#       5 s per run: vnb-probe default at normal priority, vnb-probe default at SCHED_FIFO 1, and
#       iperf3 -u -l 18 -b (its achieved rate only; it reports no lateness)
# CPU of a sender = user + system time of that process from getrusage(RUSAGE_CHILDREN) of a
# small wrapper, the same for both tools (= the scheduler's sum_exec_runtime: this kernel has
# no IRQ_TIME_ACCOUNTING, so softirq work run in the sender's context - on veth the peer's
# receive path - is charged to the sender for both tools alike; softirq deferred to ksoftirqd
# is charged to neither).
#
#   benchmarks/probe/bc.sh [REPS] [OUT_DIR]      (root: namespaces, chrt)
#
# Creates only the namespaces vnbqA/vnbqB joined by the veth pair vnbqa0/vnbqb0
# (198.18.0.1/24 <-> 198.18.0.2/24); refuses to run if they exist; deletes exactly them on exit.
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
REPS="${1:-5}"
OUT="${2:-$HERE/results-bc}"
PROBE="${VNB_PROBE:-$ROOT/.venv/bin/vnb-probe}"
CDUR="${CPU_DURATION:-10}"
ADUR="${ACC_DURATION:-5}"
# shellcheck source=lib.sh
. "$HERE/lib.sh"
need_root_and_iperf3
NSA=vnbqA
NSB=vnbqB
trap cleanup EXIT INT TERM
make_namespaces "$NSA" "$NSB"
rm -rf "$OUT/raw"
mkdir -p "$OUT/raw"
ip -n "$NSA" link add vnbqa0 type veth peer name vnbqb0 netns "$NSB"
ip -n "$NSA" addr add 198.18.0.1/24 dev vnbqa0
ip -n "$NSB" addr add 198.18.0.2/24 dev vnbqb0
for n in "$NSA" "$NSB"; do ip -n "$n" link set lo up; done
ip -n "$NSA" link set vnbqa0 up
ip -n "$NSB" link set vnbqb0 up
INA=(ip netns exec "$NSA")
INB=(ip netns exec "$NSB")
DST=198.18.0.2
PORT=47100

write_cpu_wrapper
conditions_start

vnb_cpu() { # name, recv extra ("" or --busy-poll), extra send args...
  local name="$1"
  shift
  vnb_send_cpu "$OUT/raw/cpu-$name-$rep" "$@"
}

# vnbq5bp: the 5 ms quantum with the receiver polling (recv --busy-poll) - a receiver-side
# change iperf3's server cannot make, shown apart: it measures how much of the sender's CPU is
# waking (and yielding to) the receiver
CPU_CASES=(iperf3 vnb vnbq1 vnbq5 vnbq5bp)
for rep in $(seq 1 "$REPS"); do
  # (b): rotate the order so no tool always runs first after the accuracy runs
  for i in 0 1 2 3 4; do
    c="${CPU_CASES[$(((i + rep) % 5))]}"
    case "$c" in
      iperf3) iperf_run "$OUT/raw/cpu-iperf3-$rep" -l 1472 -b 100M -t "$CDUR" ;;
      vnb) vnb_cpu vnb "" ;;
      vnbq1) vnb_cpu vnbq1 "" --pacing-quantum-us 1000 ;;
      vnbq5) vnb_cpu vnbq5 "" --pacing-quantum-us 5000 ;;
      vnbq5bp) vnb_cpu vnbq5bp --busy-poll --pacing-quantum-us 5000 ;;
    esac
  done
  echo "cpu rep=$rep done $(date -u +%T) load $(cut -d' ' -f1 /proc/loadavg)"
  # (c)
  for pps in 1000 10000 100000; do
    f="$OUT/raw/acc-vnb-$pps-$rep"
    start_recv "$f.recv.json" $((ADUR + 20))
    "${INA[@]}" "$PROBE" send --dst "$DST:$PORT" --pps "$pps" --size 18 --duration "$ADUR" --json >"$f.send.json"
    wait "$RPID" || true
    f="$OUT/raw/acc-vnbrt-$pps-$rep"
    start_recv "$f.recv.json" $((ADUR + 20))
    "${INA[@]}" chrt -f 1 "$PROBE" send --dst "$DST:$PORT" --pps "$pps" --size 18 --duration "$ADUR" --json >"$f.send.json"
    wait "$RPID" || true
    iperf_run "$OUT/raw/acc-iperf3-$pps-$rep" -l 18 -b $((pps * 18 * 8)) -t "$ADUR"
  done
  echo "accuracy rep=$rep done $(date -u +%T) load $(cut -d' ' -f1 /proc/loadavg)"
done
conditions_end
"$ROOT/.venv/bin/python" "$HERE/bc_figure.py" "$OUT" | tee "$OUT/table.md"
# the compact summary kept in git (raw/ is not)
"$ROOT/.venv/bin/python" "$HERE/runs_csv.py" "$OUT/raw" >"$OUT/runs.csv"
