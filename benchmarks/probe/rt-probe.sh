#!/usr/bin/env bash
# vnb-probe at the lowest real-time priority (SCHED_FIFO 1): on a loaded machine the sender then
# runs when its slot is due instead of waiting in the run queue. Used for the accuracy runs only.
exec chrt -f 1 "$(dirname "$0")/../../.venv/bin/vnb-probe" "$@"
