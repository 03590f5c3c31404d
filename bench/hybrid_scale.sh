#!/usr/bin/env bash
# The hybrid model at scale, against `punctual serve` on 127.0.0.1 (not part of the test suite).
# Users arrive at 2000/s and run two steps with a think time of 5 s (~10,000 users in progress)
# or 0.5 s (~1,000) between them, so every run sends 4000 steps/s once its users have arrived.
#   memory: peak RSS of each, and (RSS at 10,000 - RSS at 1,000) / 9,000 per user;
#   CPU:    CPU time per step in the steady window (from 6 s to 11 s, when 10,000 users are in
#           progress) against the open model's CPU per request at the same 4000 req/s, in the
#           same window of an open run, all in one go so the machine's state is shared. The
#           window leaves out the start and the tail, where the rates differ. CPU time is read
#           from /proc (schedstat: nanoseconds, every thread of the process).
# With connection: per_user (the default: 10,000 users hold 10,000 connections, each opened for
# its user) and connection: pool (64 shared connections); at each --precision in PRECISIONS.
# A connection per two-step user costs a connect and a close per two steps, which keep-alive
# requests do not pay. So the same window is measured for the floor generator
# (bench/floor_generator.cpp) at 4000 req/s with keep-alive and with a connection per request:
# a user's two steps cost at least (keep-alive + one-connection request) / 2 per step, whatever
# the generator, and that floor's ratio to keep-alive is printed beside punctual's.
# Usage: PUNCTUAL=build/punctual bash bench/hybrid_scale.sh   (prints a table; writes nothing)
set -euo pipefail
punctual=${PUNCTUAL:-build/punctual}
port=${PORT:-18490}
threads=${THREADS:-2}
precisions=${PRECISIONS:-fine coarse}
seconds=12
window_from=6
window_to=11
rate=4000  # steps or requests per second in the window
work=$(mktemp -d /tmp/punctual-hybrid-scale.XXXXXX)
trap 'kill "$serve_pid" 2>/dev/null || true; rm -rf "$work"' EXIT
floor=$work/floor_generator
c++ -std=c++20 -O2 -o "$floor" "$(dirname "$0")/floor_generator.cpp" -lssl -lcrypto

taskset -c 0 "$punctual" serve --port "$port" --duration 600s >/dev/null 2>&1 &
serve_pid=$!
sleep 0.3

scenario() {  # FILE THINK CONNECTION
  cat >"$1" <<EOF
target: http://127.0.0.1:$port
phases:
  - {duration: ${seconds}s, arrival_rate: 2000}
graceful_stop: 0s
connection: $3
max_users: 12000
scenarios:
  - name: user
    steps:
      - {name: first, path: /a, think: $2}
      - {name: second, path: /b}
EOF
}

cpu_ns() {  # PID: CPU time of all its threads so far
  cat /proc/"$1"/task/*/schedstat 2>/dev/null | awk '{s += $1} END {printf "%.0f\n", s}'
}

measure() {  # NAME COMMAND...: prints "NAME rss_kb cpu_ns_in_window"
  local name=$1
  shift
  /usr/bin/time -f "%M" -o "$work/$name.time" taskset -c 1 "$@" >/dev/null 2>&1 &
  local time_pid=$! pid=""
  while [ -z "$pid" ]; do pid=$(pgrep -P "$time_pid" || true); done
  sleep "$window_from"
  local before after
  before=$(cpu_ns "$pid")
  sleep $((window_to - window_from))
  after=$(cpu_ns "$pid")
  wait "$time_pid" || true
  echo "$name $(tail -n 1 "$work/$name.time") $((after - before))"
}

for mode in per_user pool; do
  scenario "$work/long-$mode.yaml" 5s "$mode"
  scenario "$work/short-$mode.yaml" 500ms "$mode"
done
for precision in $precisions; do
  {
    run=("$punctual" run -t"$threads" --precision "$precision")
    measure floor "$floor" "$precision" "$port" "$rate" 64 "$seconds"
    measure floor_churn "$floor" "$precision" "$port" "$rate" 64 "$seconds" --no-keepalive
    measure open "${run[@]}" -c64 -R "$rate" -d "${seconds}s" "http://127.0.0.1:$port/a"
    measure per_user_10k "${run[@]}" --scenario "$work/long-per_user.yaml"
    measure per_user_1k "${run[@]}" --scenario "$work/short-per_user.yaml"
    measure pool_10k "${run[@]}" -c64 --scenario "$work/long-pool.yaml"
    measure pool_1k "${run[@]}" -c64 --scenario "$work/short-pool.yaml"
  } >"$work/table"
  python3 - "$work/table" "$precision" "$threads" $((rate * (window_to - window_from))) <<'EOF'
import sys
rows = {l.split()[0]: [float(x) for x in l.split()[1:]] for l in open(sys.argv[1]) if l.strip()}
precision, threads, steps = sys.argv[2], sys.argv[3], int(sys.argv[4])
_, open_ns = rows["open"]
_, floor_ns = rows["floor"]
_, churn_ns = rows["floor_churn"]
floor_user = (floor_ns + churn_ns) / 2
print(f"--precision {precision}, -t{threads}: open model {open_ns / steps / 1e3:.1f} us CPU per request")
print(f"  floor generator: keep-alive {floor_ns / steps / 1e3:.1f} us per request, a connection per "
      f"request {churn_ns / steps / 1e3:.1f} us; a connection per two-step user at least "
      f"{floor_user / steps / 1e3:.1f} us per step, {floor_user / floor_ns:.2f}x keep-alive")
for mode in ("per_user", "pool"):
    (rss10, cpu10), (rss1, cpu1) = rows[f"{mode}_10k"], rows[f"{mode}_1k"]
    print(f"  {mode}: RSS growth per concurrent user {(rss10 - rss1) * 1024 / 9000:.0f} bytes "
          f"(target <= 16384)")
    for name, cpu in ((f"{mode}_10k", cpu10), (f"{mode}_1k", cpu1)):
        print(f"    {name}: {cpu / steps / 1e3:.1f} us CPU per step, "
              f"ratio {cpu / open_ns:.2f} (target <= 1.3"
              + (f"; the floor's own ratio is {floor_user / floor_ns:.2f})" if mode == "per_user" else ")"))
EOF
done
