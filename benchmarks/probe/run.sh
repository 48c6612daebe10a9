#!/usr/bin/env bash
# The done-when proofs of issue 3, side by side in one run (vnb-probe and iperf3 alternate at
# every rate and repetition), over a veth pair between two namespaces:
#   (a) highest offered rate of 18-byte payloads received with < 1 % loss, vnb-probe vs iperf3
#   (b) sender CPU for 100 Mbit/s of 1472-byte datagrams, vnb-probe vs iperf3
#   (c) achieved rate vs target at 1K/10K/100K pps and send lateness p99 at 10K pps
# It drives probe/scripts/veth-bench.sh (which creates and deletes exactly the namespaces
# vnbpA/vnbpB) with the vnb-probe installed in .venv, keeps every run's raw JSON under
# results/raw/, the summary in results/summary.txt, and draws results/probe-bench.png.
#
#   sudo benchmarks/probe/run.sh [REPS] [DURATION_S]
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
REPS="${1:-3}"
DUR="${2:-5}"
OUT="$HERE/results/raw"
rm -rf "$OUT"
mkdir -p "$OUT"
export VNB_PROBE="${VNB_PROBE:-$ROOT/.venv/bin/vnb-probe}"
export RATES="${RATES:-100000 125000 150000 175000 200000 250000 300000 350000 400000}"
{ date -u +%FT%TZ; uptime; } >"$HERE/results/conditions.txt"
"$ROOT/probe/scripts/veth-bench.sh" --reps "$REPS" --duration "$DUR" --out "$OUT" >"$HERE/results/log.txt" 2>&1
rm -f "$OUT/cpu_of.py"  # a helper the script writes, not a result
cp "$OUT/summary.txt" "$HERE/results/summary.txt"
{ date -u +%FT%TZ; uptime; } >>"$HERE/results/conditions.txt"
"$ROOT/.venv/bin/python" "$HERE/figure.py" "$OUT" "$HERE/results/probe-bench.png" | tee "$HERE/results/table.md"
