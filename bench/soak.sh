#!/usr/bin/env bash
# Validity soak: RUNS consecutive default runs (`punctual run -c10 -d10s -R2000 URL`, exactly what
# a new user types) against a local nginx, and how many of them exit 0. A healthy run on a noisy
# host must be valid: a wake-up the hypervisor delays moves only the tail of the send lag, which
# warns. Every run that is not valid is listed with the gating checks it failed.
#
#   PUNCTUAL=build/punctual RUNS=20 PORT=18481 bash bench/soak.sh
#   ARGS="-R1000 -d3s --slo p99<=100ms" bash bench/soak.sh     # other run options
#   ARGS="-c10 -d10s -R2000 --no-claims" bash bench/soak.sh    # a paused worker's requests wait
#   SERVER_CPU=none bash bench/soak.sh                         # nginx unpinned (default: CPU 0)
#
# Each run's line also says how many due requests one worker sent for another that was paused
# (claims) and the longest a claimed request had waited past its intended time.
#
# Not part of `make test` (it takes RUNS x ~11 s). Results go to bench/results/soak-<time>/.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
punctual="${PUNCTUAL:-$here/../build/punctual}"
runs="${RUNS:-20}"
read -r -a args <<<"${ARGS:--c10 -d10s -R2000}"
port="${PORT:-18481}"
out="$here/results/soak-$(date -u +%Y%m%dT%H%M%SZ)"
mkdir -p "$out/nginx"

[[ -x $punctual ]] || { echo "soak: $punctual is not an executable (make build first)" >&2; exit 2; }
command -v nginx >/dev/null || { echo "soak: nginx is required" >&2; exit 2; }

sed -e "s|@DIR@|$out/nginx|g" -e "s|@PORT@|$port|g" "$here/nginx.conf.template" >"$out/nginx/nginx.conf"
# nginx on one CPU, as in bench/run-bench.sh; punctual keeps its default threads, unpinned.
server_cpu="${SERVER_CPU:-0}"
pin_server=()
[[ $server_cpu == none ]] || pin_server=(taskset -c "$server_cpu")
"${pin_server[@]}" nginx -p "$out/nginx" -c "$out/nginx/nginx.conf" 2>"$out/nginx/stderr" &
nginx_pid=$!
trap 'kill -QUIT $nginx_pid 2>/dev/null || true; wait $nginx_pid 2>/dev/null || true' EXIT
for _ in $(seq 50); do
  (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && break
  sleep 0.1
done

url="http://127.0.0.1:$port/"
echo "soak: $runs runs of 'punctual run ${args[*]} $url'; load $(cut -d' ' -f1-3 /proc/loadavg)"
# The host's steal time on all CPUs so far, in ms (/proc/stat counts in USER_HZ): time the
# hypervisor ran something else while a vCPU wanted to run. A run that fails while the host
# stole from both vCPUs at once is one that claims could not have saved.
steal_ms() {
  awk -v hz="$(getconf CLK_TCK)" '$1 ~ /^cpu[0-9]+$/ { s += $9 } END { printf "%d", s * 1000 / hz }' /proc/stat
}
valid=0
for i in $(seq "$runs"); do
  stolen=$(steal_ms)
  set +e
  "$punctual" run "${args[@]}" --json "$out/run-$i.json" "$url" >"$out/run-$i.txt" 2>&1
  rc=$?
  set -e
  stolen=$(($(steal_ms) - stolen))
  summary="$(python3 - "$out/run-$i.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
checks = {c["name"]: c for c in r["validity"]["checks"]}
failed = [n for n, c in checks.items() if c["level"] == "gating" and not c["pass"]]
warned = [n for n, c in checks.items() if c["level"] == "warning" and not c["pass"]]
lag = r["latency"]["send_lag"]["percentiles_ns"]
claimed = r["generator"].get("sent_for_others", 0)
# Each worker's longest wake-up past the instant it asked for: when every worker shows a long
# one, they may have been paused together, which no claim can cover.
wakes = "/".join(f"{w.get('longest_wake_lateness_ns', 0) / 1e6:.1f}" for w in r["generator"]["workers"])
print(f"send lag p99 {lag['99'] / 1e3:.0f}us p99.9 {lag['99.9'] / 1e3:.0f}us max {lag['100'] / 1e3:.0f}us;"
      f" sent for a paused worker {claimed}; longest wake-up lateness per worker {wakes} ms; failed {failed or '-'}; warned {warned or '-'}")
PY
)"
  [[ $rc -eq 0 ]] && valid=$((valid + 1))
  echo "run $i: exit $rc; host stole ${stolen} ms; $summary"
done
echo "soak: $valid of $runs runs exited 0 (valid); reports in $out"
