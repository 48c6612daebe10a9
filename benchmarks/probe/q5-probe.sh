#!/usr/bin/env bash
# vnb-probe whose `send` paces with a 5 ms quantum unless the caller gives its own quantum: in
# veth-bench.sh's cpu runs, "vnb" then means --pacing-quantum-us 5000 and "vnbq" keeps 1000.
PROBE="$(dirname "$0")/../../.venv/bin/vnb-probe"
if [ "${1:-}" = send ] && [[ " $* " != *" --pacing-quantum-us "* ]]; then
  shift
  exec "$PROBE" send --pacing-quantum-us 5000 "$@"
fi
exec "$PROBE" "$@"
