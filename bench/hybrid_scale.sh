#!/usr/bin/env bash
# The hybrid model at scale, against `punctual serve` on 127.0.0.1 (not part of the test suite):
#   memory: peak RSS with ~10,000 and ~1,000 users in progress at the same request rate (arrivals
#           of 2000 users/s, two steps each, a think time of 5 s or 0.5 s between them), and
#           (RSS at 10,000 - RSS at 1,000) / 9,000 per user;
#   CPU:    CPU time per step of those runs against the open model's CPU per request at the same
#           request rate (4000 req/s), all in one go so the machine's state is shared.
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

scenario() {  # FILE THINK
  cat >"$1" <<EOF
target: http://127.0.0.1:$port
phases:
  - {duration: ${seconds}s, arrival_rate: 2000}
graceful_stop: 0s
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
  /usr/bin/time -f "%M %U %S" -o "$work/$name.time" taskset -c 1 "$punctual" run -t1 -c64 \
    --json "$work/$name.json" "$@" >/dev/null 2>&1 || true
  read -r rss user sys < <(tail -n 1 "$work/$name.time")  # after any "Command exited" line
  local steps
  steps=$(python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print(d['outcomes']['ok'])" \
    "$work/$name.json")
  echo "$name $rss $(python3 -c "print($user + $sys)") $steps"
}

scenario "$work/long.yaml" 5s
scenario "$work/short.yaml" 500ms
{
  measure users_10k --scenario "$work/long.yaml"
  measure users_1k --scenario "$work/short.yaml"
  measure open -R 4000 -d "${seconds}s" "http://127.0.0.1:$port/a"
} | tee "$work/table"

python3 - "$work/table" <<'EOF'
import sys
rows = {l.split()[0]: [float(x) for x in l.split()[1:]] for l in open(sys.argv[1]) if l.strip()}
(rss10, cpu10, n10), (rss1, cpu1, n1), (_, cpuo, no) = rows["users_10k"], rows["users_1k"], rows["open"]
print(f"RSS growth per concurrent user: {(rss10 - rss1) * 1024 / 9000:.0f} bytes "
      f"(target <= 16384)")
for name, cpu, n in (("users_10k", cpu10, n10), ("users_1k", cpu1, n1)):
    print(f"{name}: {cpu / n * 1e6:.1f} us CPU per ok step; open model {cpuo / no * 1e6:.1f} us per "
          f"request: ratio {(cpu / n) / (cpuo / no):.2f} (target <= 1.3)")
EOF
