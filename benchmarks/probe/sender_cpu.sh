#!/usr/bin/env bash
# Proof (b) of issue 3 with UDP GSO and with the receive path moved off the sender: the CPU of a
# sender of 100 Mbit/s of 1472-byte datagrams (8 492 packets/s), 10 s per run, side by side in one
# run, REPS repetitions, the order rotating with the repetition:
#   iperf3 -u -l 1472 -b 100M
#   vnb-probe --pacing-quantum-us 1000, --pacing-quantum-us 5000
#   vnb-probe --gso --pacing-quantum-us 1000, --gso --pacing-quantum-us 5000
# each over two receive paths (two veth pairs between the same two namespaces):
#   plain   vgas0 -> vgar0 (198.18.0.1 -> .2): veth hands the skb to the peer's backlog and the
#           receive softirq runs on return from the sender's syscall, in the sender's context;
#           this kernel has no IRQ_TIME_ACCOUNTING, so it is charged to the sender (bc.sh's method)
#   napi    vgas1 -> vgar1 (198.18.1.1 -> .2): the receiving veth in threaded NAPI
#           (ethtool -K vgar1 gro on rx-udp-gro-forwarding on; echo 1 > .../threaded): the
#           receive path runs in the kernel thread napi/vgar1-N, whose CPU (utime + stime from
#           /proc/PID/stat) is recorded per run, so sender + receive path stays visible
# CPU of a sender = getrusage(RUSAGE_CHILDREN) of lib.sh's wrapper, the same for both tools.
# Every run also keeps the achieved rate (sender) and the receiver's count and loss, and the CPU
# of ksoftirqd/* over the run (machine-wide: other work on the machine adds to it).
#
#   benchmarks/probe/sender_cpu.sh [REPS=5] [OUT_DIR=benchmarks/probe/results-cpu]   (root)
#
# Creates only the namespaces vgaS/vgaR and the veth pairs vgas0/vgar0, vgas1/vgar1; refuses to
# run if a namespace of that name exists; deletes exactly them on exit.
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
REPS="${1:-5}"
OUT="${2:-$HERE/results-cpu}"
PROBE="${VNB_PROBE:-$ROOT/.venv/bin/vnb-probe}"
CDUR="${CPU_DURATION:-10}"
# shellcheck source=lib.sh
. "$HERE/lib.sh"
need_root_and_iperf3
command -v ethtool >/dev/null || { echo "ethtool is missing: apt-get install ethtool" >&2; exit 1; }
NSS=vgaS
NSR=vgaR
trap cleanup EXIT INT TERM
make_namespaces "$NSS" "$NSR"
rm -rf "$OUT/raw"
mkdir -p "$OUT/raw"
for i in 0 1; do
  ip -n "$NSS" link add "vgas$i" type veth peer name "vgar$i" netns "$NSR"
  ip -n "$NSS" addr add "198.18.$i.1/24" dev "vgas$i"
  ip -n "$NSR" addr add "198.18.$i.2/24" dev "vgar$i"
  ip -n "$NSS" link set "vgas$i" up
  ip -n "$NSR" link set "vgar$i" up
done
for n in "$NSS" "$NSR"; do ip -n "$n" link set lo up; done
INA=(ip netns exec "$NSS")
INB=(ip netns exec "$NSR")
"${INB[@]}" ethtool -K vgar1 gro on rx-udp-gro-forwarding on
"${INB[@]}" sh -c 'echo 1 > /sys/class/net/vgar1/threaded'
PORT=47200
TCK="$(getconf CLK_TCK)"

# PIDs of kernel threads whose name starts with $1 (napi/vgar1-, ksoftirqd/)
threads_named() {
  local p c
  for p in /proc/[0-9]*; do
    c="$(cat "$p/comm" 2>/dev/null)" || continue
    case "$c" in "$1"*) echo "${p#/proc/}" ;; esac
  done
}
# utime + stime of the given PIDs, clock ticks
ticks() {
  local sum=0 p v
  for p in "$@"; do
    v="$(awk '{print $14 + $15}' "/proc/$p/stat" 2>/dev/null)" || v=0
    sum=$((sum + ${v:-0}))
  done
  echo "$sum"
}
mapfile -t NAPI_PIDS < <(threads_named "napi/vgar1-")
mapfile -t SOFTIRQ_PIDS < <(threads_named "ksoftirqd/")
[ "${#NAPI_PIDS[@]}" -gt 0 ] || { echo "no napi/vgar1-* thread: threaded NAPI did not start" >&2; exit 1; }

write_cpu_wrapper
conditions_start
{
  echo "napi threads: $(for p in "${NAPI_PIDS[@]}"; do cat "/proc/$p/comm"; done | tr '\n' ' ')"
  echo "vgar1: $("${INB[@]}" ethtool -k vgar1 | grep -E '^(generic-receive-offload|rx-udp-gro-forwarding):' | tr '\n' ' ')"
  echo "vgar1 threaded: $("${INB[@]}" cat /sys/class/net/vgar1/threaded)"
} >>"$OUT/conditions.txt"

run_case() { # setup (plain|napi), case, rep
  local setup="$1" c="$2" rep="$3" f="$OUT/raw/$1-$2-$3" n0 s0
  if [ "$setup" = plain ]; then DST=198.18.0.2; else DST=198.18.1.2; fi
  n0="$(ticks "${NAPI_PIDS[@]}")"
  s0="$(ticks "${SOFTIRQ_PIDS[@]}")"
  case "$c" in
    iperf3) iperf_run "$f" -l 1472 -b 100M -t "$CDUR" ;;
    q1) vnb_send_cpu "$f" "" --pacing-quantum-us 1000 ;;
    q5) vnb_send_cpu "$f" "" --pacing-quantum-us 5000 ;;
    gso1) vnb_send_cpu "$f" "" --gso --pacing-quantum-us 1000 ;;
    gso5) vnb_send_cpu "$f" "" --gso --pacing-quantum-us 5000 ;;
  esac
  awk -v n="$(($(ticks "${NAPI_PIDS[@]}") - n0))" -v s="$(($(ticks "${SOFTIRQ_PIDS[@]}") - s0))" \
    -v t="$TCK" 'BEGIN { printf "NAPI %.2f\nKSOFTIRQD %.2f\n", n / t, s / t }' >"$f.threads"
}

CASES=(iperf3 q1 q5 gso1 gso5)
for rep in $(seq 1 "$REPS"); do
  if [ $((rep % 2)) = 1 ]; then SETUPS=(plain napi); else SETUPS=(napi plain); fi
  for setup in "${SETUPS[@]}"; do
    for i in 0 1 2 3 4; do
      run_case "$setup" "${CASES[$(((i + rep) % 5))]}" "$rep"
    done
  done
  echo "rep=$rep done $(date -u +%T) load $(cut -d' ' -f1 /proc/loadavg)"
done
conditions_end
"$ROOT/.venv/bin/python" "$HERE/sender_cpu_figure.py" "$OUT" | tee "$OUT/table.md"
# the compact summary kept in git (raw/ is not)
"$ROOT/.venv/bin/python" "$HERE/runs_csv.py" "$OUT/raw" >"$OUT/runs.csv"
