#!/usr/bin/env bash
# Memory soak: one long open-loop run against `punctual serve --service-time exp:200us`, with the
# client's resident set size (VmRSS, and VmHWM, its peak) sampled every INTERVAL seconds. A run's
# memory must stay within the bound in docs/design.md ("Memory bound") whatever its length; the
# curve shows whether anything grows with the run's length.
#
#   PUNCTUAL=build/punctual RATE=2000 DURATION=3600 bash bench/soak-memory.sh
#   NICE=10 RATE=20000 DURATION=3600 bash bench/soak-memory.sh   # yield the CPU to other work
#
# Not part of `make test`. Results go to bench/results/soak-memory-<rate>-<time>/: rss.csv
# (seconds, rss_kb, hwm_kb), run.json, run.txt and a summary line on stdout.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
punctual="${PUNCTUAL:-$here/../build/punctual}"
rate="${RATE:-2000}"
duration="${DURATION:-3600}"
interval="${INTERVAL:-60}"
connections="${CONNECTIONS:-10}"
threads="${THREADS:-2}"
port="${PORT:-18491}"
niceness="${NICE:-0}"
out="${OUT:-$here/results/soak-memory-$rate-$(date -u +%Y%m%dT%H%M%SZ)}"
mkdir -p "$out"

[[ -x $punctual ]] || { echo "soak-memory: $punctual is not an executable" >&2; exit 2; }

nice -n "$niceness" "$punctual" serve --port "$port" --service-time exp:200us >"$out/serve.txt" 2>&1 &
serve_pid=$!
trap 'kill $serve_pid 2>/dev/null || true; wait $serve_pid 2>/dev/null || true' EXIT
for _ in $(seq 50); do python3 "$here/http_ready.py" "$port" 2>/dev/null && break; sleep 0.1; done

nice -n "$niceness" "$punctual" run -q -t "$threads" -c "$connections" -R "$rate" -d "${duration}s" \
  --json "$out/run.json" "http://127.0.0.1:$port/" >"$out/run.txt" 2>&1 &
run_pid=$!
start=$(date +%s)
echo "seconds,rss_kb,hwm_kb" >"$out/rss.csv"
sample() {
  local status="/proc/$run_pid/status"
  [[ -r $status ]] || return 1
  local rss hwm
  rss=$(awk '/^VmRSS:/ {print $2}' "$status" 2>/dev/null) || return 1
  hwm=$(awk '/^VmHWM:/ {print $2}' "$status" 2>/dev/null) || return 1
  [[ -n $rss ]] || return 1
  echo "$(($(date +%s) - start)),$rss,$hwm" >>"$out/rss.csv"
}
# The first samples at 1 s and 10 s show the start-up; then one a minute.
sleep 1 && sample || true
sleep 9 && sample || true
while kill -0 "$run_pid" 2>/dev/null; do
  next=$(( (($(date +%s) - start) / interval + 1) * interval ))
  while (( $(date +%s) - start < next )) && kill -0 "$run_pid" 2>/dev/null; do sleep 1; done
  sample || break
done
set +e
wait "$run_pid"
rc=$?
set -e
echo "soak-memory: rate $rate for ${duration}s (nice $niceness), exit $rc; rss.csv in $out"
tail -n 3 "$out/rss.csv"
