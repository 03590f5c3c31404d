#!/usr/bin/env bash
# The hybrid model at scale, against `punctual serve` on 127.0.0.1 (not part of the test suite):
#   memory: peak RSS with ~10,000 and ~1,000 users in progress at the same request rate (arrivals
#           of 2000 users/s, two steps each, a think time of 5 s or 0.5 s between them), and
#           (RSS at 10,000 - RSS at 1,000) / 9,000 per user;
#   CPU:    CPU time per step of those runs against the open model's CPU per request at the same
#           request rate (4000 req/s), all in one go so the machine's state is shared.
# Both with connection: per_user (the default: 10,000 users hold 10,000 connections) and with
# connection: pool (64 shared connections).
# Usage: PUNCTUAL=build/punctual bash bench/hybrid_scale.sh   (prints a table; writes nothing)
set -euo pipefail
punctual=${PUNCTUAL:-build/punctual}
port=${PORT:-18490}
seconds=${SECONDS_RUN:-8}
work=$(mktemp -d /tmp/punctual-hybrid-scale.XXXXXX)
trap 'kill "$serve_pid" 2>/dev/null || true; rm -rf "$work"' EXIT

taskset -c 0 "$punctual" serve --port "$port" --duration 300s >/dev/null 2>&1 &
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

measure() {  # NAME ARGS...: prints "NAME rss_kb cpu_s steps"
  local name=$1
  shift
  /usr/bin/time -f "%M %U %S" -o "$work/$name.time" taskset -c 1 "$punctual" run -t1 \
    --json "$work/$name.json" "$@" >/dev/null 2>&1 || true
  read -r rss user sys < <(tail -n 1 "$work/$name.time")  # after any "Command exited" line
  local steps
  steps=$(python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print(d['outcomes']['ok'])" \
    "$work/$name.json")
  echo "$name $rss $(python3 -c "print($user + $sys)") $steps"
}

for mode in per_user pool; do
  scenario "$work/long-$mode.yaml" 5s "$mode"
  scenario "$work/short-$mode.yaml" 500ms "$mode"
done
{
  measure open -c64 -R 4000 -d "${seconds}s" "http://127.0.0.1:$port/a"
  measure per_user_10k --scenario "$work/long-per_user.yaml"
  measure per_user_1k --scenario "$work/short-per_user.yaml"
  measure pool_10k -c64 --scenario "$work/long-pool.yaml"
  measure pool_1k -c64 --scenario "$work/short-pool.yaml"
} | tee "$work/table"

python3 - "$work/table" <<'EOF'
import sys
rows = {l.split()[0]: [float(x) for x in l.split()[1:]] for l in open(sys.argv[1]) if l.strip()}
_, cpuo, no = rows["open"]
for mode in ("per_user", "pool"):
    (rss10, cpu10, n10), (rss1, cpu1, n1) = rows[f"{mode}_10k"], rows[f"{mode}_1k"]
    print(f"{mode}: RSS growth per concurrent user: {(rss10 - rss1) * 1024 / 9000:.0f} bytes "
          f"(target <= 16384)")
    for name, cpu, n in ((f"{mode}_10k", cpu10, n10), (f"{mode}_1k", cpu1, n1)):
        print(f"  {name}: {cpu / n * 1e6:.1f} us CPU per ok step; open model {cpuo / no * 1e6:.1f} us "
              f"per request: ratio {(cpu / n) / (cpuo / no):.2f} (target <= 1.3)")
EOF
