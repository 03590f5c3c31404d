#!/usr/bin/env bash
# Instructions per request on the request path, counted by callgrind (exact and repeatable for
# one binary, whatever else the machine is doing): plain HTTP/1.1 against nginx on 127.0.0.1,
# coarse mode, one thread, 50 connections. Only what worker::run and its callees execute is
# counted (the worker's loop: dispatch, I/O, parsing, recording), not start-up or reports.
#
#   PUNCTUAL=build-bench/punctual bash bench/callgrind.sh          # 4000 req/s for 5 s
#   RATE=100000 PUNCTUAL=build-bench/punctual bash bench/callgrind.sh
#   THREADS=2 RATE=20000 bash bench/callgrind.sh    # two workers: each request taken by a claim
#                                                   # counter's compare-and-swap (engine/claims.hpp)
#   ARGS="--metrics-listen :9464" bash bench/callgrind.sh   # more options for the run
#                                                   # (scrape it meanwhile to count the endpoint)
#
# It prints the instructions collected, the requests completed and their ratio. Under valgrind
# the worker runs ~50x slower, so at high rates the run is late and sends what it can: the
# ratio is per completed request either way.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
punctual=${PUNCTUAL:-build-bench/punctual}
rate=${RATE:-4000}
threads=${THREADS:-1}
duration=${DURATION:-5s}
port=${PORT:-18481}
dir=$(mktemp -d)
trap 'kill -QUIT "$(cat "$dir/nginx.pid" 2>/dev/null)" 2>/dev/null || true; rm -rf "$dir"' EXIT

command -v valgrind >/dev/null || { echo "callgrind.sh: valgrind is required" >&2; exit 1; }
command -v nginx >/dev/null || { echo "callgrind.sh: nginx is required" >&2; exit 1; }
sed -e "s|@DIR@|$dir|g" -e "s|@PORT@|$port|g" "$here/nginx.conf.template" >"$dir/nginx.conf"
nginx -p "$dir" -c "$dir/nginx.conf" 2>"$dir/nginx.stderr" &
for _ in $(seq 50); do python3 "$here/http_ready.py" "$port" 2>/dev/null && break; sleep 0.1; done

valgrind --tool=callgrind --callgrind-out-file="$dir/callgrind.out" \
  --toggle-collect='punctual::engine::worker::run*' \
  "$punctual" run -t"$threads" -c50 -R"$rate" -d"$duration" --precision coarse \
  --json "$dir/run.json" ${ARGS:-} "http://127.0.0.1:$port/" >/dev/null 2>"$dir/valgrind.log" || true
instructions=$(awk '/^summary:/ {print $2}' "$dir/callgrind.out")
completed=$(python3 -c 'import json,sys; o=json.load(open(sys.argv[1]))["outcomes"]; print(o["ok"]+o["http_error"])' "$dir/run.json")
python3 - "$instructions" "$completed" <<'EOF'
import sys
instructions, completed = int(sys.argv[1]), int(sys.argv[2])
print(f"instructions {instructions}  completed {completed}  per request {instructions / completed:.0f}")
EOF
