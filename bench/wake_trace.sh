#!/usr/bin/env bash
# Why a run's workers woke late: runs one command (a punctual run) under ftrace's scheduler and
# timer events and sorts each late wake-up of a worker into host lateness (the vCPU was not
# running when the worker's timer was due) and guest lateness (another thread held the CPU),
# with bench/wake_trace.py. Needs root and tracefs. Not part of `make test`.
#
#   bash bench/wake_trace.sh build/punctual run -c10 -d10s -R2000 http://127.0.0.1:18481/
#   THRESHOLD_US=1000 bash bench/wake_trace.sh ...   # count wake-ups later than 1 ms (default 500 us)
#
# The trace is kept in bench/results/wake-trace-<time>/trace.txt.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
[[ $# -gt 0 ]] || { echo "usage: wake_trace.sh COMMAND..." >&2; exit 2; }
tracing=/sys/kernel/tracing
[[ -e $tracing/trace ]] || mount -t tracefs nodev "$tracing" 2>/dev/null ||
  { echo "wake_trace: tracefs is not available (root is required)" >&2; exit 2; }
out="$here/results/wake-trace-$(date -u +%Y%m%dT%H%M%SZ)"
mkdir -p "$out"

echo 0 >"$tracing/tracing_on"
echo >"$tracing/trace"
echo mono >"$tracing/trace_clock"
echo 65536 >"$tracing/buffer_size_kb"
echo >"$tracing/set_event"
for e in sched:sched_switch timer:hrtimer_start timer:hrtimer_expire_entry timer:hrtimer_cancel; do
  echo "$e" >>"$tracing/set_event"
done
trap 'echo 0 >"$tracing/tracing_on"; echo >"$tracing/set_event"' EXIT
echo 1 >"$tracing/tracing_on"
set +e
"$@"
rc=$?
set -e
echo 0 >"$tracing/tracing_on"
cat "$tracing/trace" >"$out/trace.txt"
echo "wake_trace: the command exited $rc; trace in $out/trace.txt"
python3 "$here/wake_trace.py" "$out/trace.txt" "${THRESHOLD_US:-500}"
