#!/usr/bin/env bash
# Precision with claims, on the wire: ROUNDS rounds of `punctual run -t2 -c10 -R2000 -d10s`
# (fine mode) against a local nginx on CPU 0, each with claims and with --no-claims, every
# request captured on lo with tcpdump. For each run: p99 of |gap - 500 us| between consecutive
# requests on the wire (bench/wire_gaps.py), punctual's own send lag p99, and how many requests
# one worker sent for a paused other. The target is a wire p99 within 200 us and a send lag p99
# within 300 us in every run with claims.
#
#   ROUNDS=3 PORT=18484 bash bench/claims_precision.sh      # needs root (tcpdump), ~80 s
#   ARGS="--pin" bash bench/claims_precision.sh              # more options for every run
#
# Not part of `make test`. Results go to bench/results/claims-precision-<time>/.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
punctual="${PUNCTUAL:-$here/../build/punctual}"
rounds="${ROUNDS:-3}"
port="${PORT:-18484}"
read -r -a extra <<<"${ARGS:-}"
out="$here/results/claims-precision-$(date -u +%Y%m%dT%H%M%SZ)"
mkdir -p "$out/nginx"
[[ -x $punctual ]] || { echo "claims_precision: $punctual is not an executable" >&2; exit 2; }
command -v nginx >/dev/null || { echo "claims_precision: nginx is required" >&2; exit 2; }
command -v tcpdump >/dev/null || { echo "claims_precision: tcpdump is required" >&2; exit 2; }

sed -e "s|@DIR@|$out/nginx|g" -e "s|@PORT@|$port|g" "$here/nginx.conf.template" >"$out/nginx/nginx.conf"
taskset -c "${SERVER_CPU:-0}" nginx -p "$out/nginx" -c "$out/nginx/nginx.conf" 2>"$out/nginx/stderr" &
nginx_pid=$!
tcpdump_pid=""
trap '[[ -n $tcpdump_pid ]] && kill -INT $tcpdump_pid 2>/dev/null; kill -QUIT $nginx_pid 2>/dev/null || true; wait 2>/dev/null || true' EXIT
for _ in $(seq 50); do
  (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && break
  sleep 0.1
done

echo "claims_precision: $rounds rounds of 'punctual run -t2 -c10 -R2000 -d10s ${extra[*]}'; load $(cut -d' ' -f1-3 /proc/loadavg)"
declare -A met
for round in $(seq "$rounds"); do
  for mode in claims no-claims; do
    name="$mode-$round"
    flags=()
    [[ $mode == no-claims ]] && flags=(--no-claims)
    tcpdump -i lo -s 128 -B 65536 --time-stamp-precision=nano -w "$out/$name.pcap" \
      "tcp dst port $port and tcp[tcpflags] & tcp-push != 0" 2>"$out/$name.tcpdump" &
    tcpdump_pid=$!
    for _ in $(seq 50); do grep -q 'listening on' "$out/$name.tcpdump" 2>/dev/null && break; sleep 0.1; done
    set +e
    "$punctual" run -q -t2 -c10 -R2000 -d10s "${flags[@]}" "${extra[@]}" --json "$out/$name.json" \
      "http://127.0.0.1:$port/" >/dev/null 2>"$out/$name.err"
    rc=$?
    set -e
    sleep 1  # tcpdump drops what is still in its ring buffer on SIGINT
    kill -INT "$tcpdump_pid"; wait "$tcpdump_pid" 2>/dev/null || true; tcpdump_pid=""
    python3 "$here/wire_gaps.py" --rate 2000 --port "$port" --skip-ms 500 --keep-ms 9000 \
      "$out/$name.pcap" >"$out/$name.wire.json"
    rm -f "$out/$name.pcap"
    line="$(python3 - "$out/$name.json" "$out/$name.wire.json" <<'PY'
import json, sys
run, wire = (json.load(open(p)) for p in sys.argv[1:3])
lag = run["latency"]["send_lag"]["percentiles_ns"]["99"] / 1e3
gap = wire["abs_gap_error_ns"]["99"] / 1e3
ok = gap <= 200 and lag <= 300
print(f"{'met' if ok else 'missed'} wire p99 |gap - 500us| {gap:.0f}us; send lag p99 {lag:.0f}us;"
      f" sent for a paused worker {run['generator'].get('sent_for_others', 0)}")
PY
)"
    [[ $line == met* ]] && met[$mode]=$((${met[$mode]:-0} + 1))
    echo "round $round, $mode: exit $rc; $line"
  done
done
echo "claims_precision: target met in ${met[claims]:-0} of $rounds runs with claims, ${met[no-claims]:-0} of $rounds without; results in $out"
