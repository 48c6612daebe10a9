#!/usr/bin/env bash
# The done-when proofs of issue 3, side by side in one run (vnb-probe and iperf3 alternate at
# every rate and repetition), over a veth pair between two network namespaces:
#   (a) highest offered rate of 18-byte payloads received with < 1 % loss, vnb-probe vs iperf3
#   (b) sender CPU for 100 Mbit/s of 1472-byte datagrams, vnb-probe vs iperf3
#   (c) achieved rate vs target at 1K/10K/100K pps and send lateness p99 at 10K pps, at normal
#       priority and again with the sender at SCHED_FIFO 1 (rt-probe.sh)
#   and (b) again with vnb-probe's pacing quantum at 5 ms (q5-probe.sh, results/raw-q5/)
# It drives probe/scripts/veth-bench.sh (which creates and deletes exactly the namespaces
# vnbpA/vnbpB) with the vnb-probe installed in .venv, keeps every run's raw JSON under
# results/raw/ and results/raw-rt/, the summaries in results/summary*.txt, the machine's load
# (vmstat every 5 s) in results/vmstat.txt, and draws results/probe-bench.png.
#
#   sudo benchmarks/probe/issue3_run.sh [REPS] [DURATION_S]
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
REPS="${1:-5}"
DUR="${2:-5}"
RES="$HERE/results"
rm -rf "$RES/raw" "$RES/raw-rt" "$RES/raw-q5"
mkdir -p "$RES/raw" "$RES/raw-rt" "$RES/raw-q5"
export RATES="${RATES:-25000 50000 75000 100000 125000 150000 200000 250000 300000}"
vmstat -t 5 >"$RES/vmstat.txt" &
VMSTAT=$!
trap 'kill $VMSTAT 2>/dev/null || true' EXIT
{ date -u +%FT%TZ; uptime; } >"$RES/conditions.txt"
VNB_PROBE="$ROOT/.venv/bin/vnb-probe" "$ROOT/probe/scripts/veth-bench.sh" --reps "$REPS" --duration "$DUR" \
  --out "$RES/raw" >"$RES/log.txt" 2>&1
VNB_PROBE="$HERE/rt-probe.sh" "$ROOT/probe/scripts/veth-bench.sh" --reps "$REPS" --duration "$DUR" \
  --only accuracy --out "$RES/raw-rt" >"$RES/log-rt.txt" 2>&1
# (b) once more with vnb-probe's pacing quantum at 5 ms (q5-probe.sh: "vnb" = 5 ms, "vnbq" = 1 ms),
# the lowest-CPU pacing, beside iperf3 again
VNB_PROBE="$HERE/q5-probe.sh" CPU_DURATION=10 "$ROOT/probe/scripts/veth-bench.sh" --reps "$REPS" --only cpu \
  --out "$RES/raw-q5" >"$RES/log-q5.txt" 2>&1
{ date -u +%FT%TZ; uptime; } >>"$RES/conditions.txt"
rm -f "$RES/raw/cpu_of.py" "$RES/raw-rt/cpu_of.py" "$RES/raw-q5/cpu_of.py"  # a helper, not a result
cp "$RES/raw/summary.txt" "$RES/summary.txt"
cp "$RES/raw-rt/summary.txt" "$RES/summary-rt.txt"
cp "$RES/raw-q5/summary.txt" "$RES/summary-q5.txt"
for r in raw raw-rt raw-q5; do  # the compact summaries kept in git (raw*/ are not)
  "$ROOT/.venv/bin/python" "$HERE/runs_csv.py" "$RES/$r" >"$RES/runs${r#raw}.csv"
done
"$ROOT/.venv/bin/python" "$HERE/figure.py" "$RES/raw" "$RES/raw-rt" "$RES/probe-bench.png" "$RES/raw-q5" |
  tee "$RES/table.md"
# (b) as it is met today: --gso and the receiver in threaded NAPI beside iperf3 (sender_cpu.sh, its
# own results directory and figure; benchmarks/probe/README.md, first section)
"$HERE/sender_cpu.sh" "$REPS"
