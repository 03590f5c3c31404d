#!/usr/bin/env bash
# Size and speed of the HTML report on a long run: a 10-minute run at 5,000 req/s against a
# local nginx (`punctual run --json --html`), then
#   - the HTML's size, which must stay under 1 MB (1,000,000 bytes): the page inlines every
#     chart, and its series are decimated so that a long run does not grow it much;
#   - the time `punctual report RUN.json --html OUT.html` takes to write it again from the
#     JSON, which must stay under 200 ms (median of 10 runs, with hyperfine when installed,
#     else a loop of `date +%s%N`).
# It prints one PASS/FAIL line per figure, writes bench/results/html-<UTC timestamp>.json and
# exits 1 if any figure failed. Not part of the test suite: the default run takes ~11 minutes.
#
# Usage: bench/html_report.sh                 (10-minute run, ~11 min in all)
#        QUICK=1 bench/html_report.sh         (60 s run)
#        DURATION=5s bench/html_report.sh     (any duration, e.g. to see that the script works)
# Environment (all optional):
#   PUNCTUAL=path     the binary to test (default build/punctual; this script builds nothing)
#   PORT=18482        nginx port on 127.0.0.1
#   RATE=5000 THREADS=2 CONNECTIONS=50
#   RESULTS_DIR=dir   where html-<timestamp>.json goes (default bench/results)
#   SERVER_CPU=0      the CPU nginx is pinned to (taskset), as in run-bench.sh; punctual is not
#                     pinned: its two threads need the machine's other CPU(s)
#   KEEP_RAW=1        keep the run's JSON and HTML in the scratch dir instead of deleting them
# nginx is started from bench/nginx.conf.template, as bench/run-bench.sh does, on 127.0.0.1 only.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/.." && pwd)

PUNCTUAL=${PUNCTUAL:-$repo/build/punctual}
port=${PORT:-18482}
rate=${RATE:-5000}
threads=${THREADS:-2}
conns=${CONNECTIONS:-50}
server_cpu=${SERVER_CPU:-0}
results_dir=${RESULTS_DIR:-$here/results}
if [[ -n ${DURATION:-} ]]; then
  duration=$DURATION
elif [[ ${QUICK:-0} == 1 ]]; then
  duration=60s
else
  duration=600s
fi
max_bytes=1000000
max_ms=200
timing_runs=10

log() { printf '[html-bench %(%H:%M:%S)T] %s\n' -1 "$*" >&2; }
die() { log "error: $*"; exit 1; }
have() { command -v "$1" >/dev/null 2>&1; }

[[ -x $PUNCTUAL ]] || die "punctual binary not found: $PUNCTUAL (build it, or set PUNCTUAL)"
PUNCTUAL=$(cd "$(dirname "$PUNCTUAL")" && pwd)/$(basename "$PUNCTUAL")
have nginx || die "nginx is required (Debian: nginx-light)"
have python3 || die "python3 is required (the result file)"
# The run's length in seconds, for the timeout: 600s, 60s, 5s, 2m, 1500ms...
dur_s=$(python3 -c '
import re, sys
m = re.fullmatch(r"([0-9.]+)(ms|s|m|h)?", sys.argv[1])
if not m: sys.exit(1)
print(max(1, round(float(m.group(1)) * {"ms": 1e-3, "s": 1, "m": 60, "h": 3600}[m.group(2) or "s"])))
' "$duration") || die "DURATION: cannot read '$duration' (e.g. 600s, 60s, 5s)"

raw=$(mktemp -d /tmp/punctual-html-bench.XXXXXX)
nginx_pid=""
cleanup() {
  if [[ -n $nginx_pid ]]; then
    kill -QUIT "$nginx_pid" 2>/dev/null || true
    wait "$nginx_pid" 2>/dev/null || true
  fi
  if [[ ${KEEP_RAW:-0} == 1 ]]; then log "raw outputs kept in $raw"; else rm -rf "$raw"; fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# ---------------------------------------------------------------- nginx
pin=()
if have taskset && (( $(nproc) > server_cpu )); then pin=(taskset -c "$server_cpu"); fi
mkdir -p "$raw/nginx"
sed -e "s|@DIR@|$raw/nginx|g" -e "s|@PORT@|$port|g" "$here/nginx.conf.template" >"$raw/nginx/nginx.conf"
"${pin[@]}" nginx -p "$raw/nginx" -c "$raw/nginx/nginx.conf" 2>"$raw/nginx/stderr" &
nginx_pid=$!
up=0
for _ in $(seq 50); do
  if python3 "$here/http_ready.py" "$port" 2>/dev/null; then up=1; break; fi
  kill -0 "$nginx_pid" 2>/dev/null || break
  sleep 0.1
done
if [[ $up != 1 ]]; then
  cat "$raw/nginx/stderr" >&2 || true
  die "nginx did not start on 127.0.0.1:$port (port in use? set PORT)"
fi

# ---------------------------------------------------------------- the run
loadavg_start=$(cut -d' ' -f1-3 /proc/loadavg)
log "punctual run -t$threads -c$conns -R$rate -d$duration against nginx on 127.0.0.1:$port (load average $loadavg_start)"
run_rc=0
timeout $((dur_s + 120)) "$PUNCTUAL" run -t"$threads" -c"$conns" -R"$rate" -d"$duration" \
  --json "$raw/run.json" --html "$raw/run.html" "http://127.0.0.1:$port/" \
  >"$raw/run.out" 2>"$raw/run.err" || run_rc=$?
# 3 and 4 are verdicts (an SLO, the run's validity), not failures to write the reports.
if [[ $run_rc != 0 && $run_rc != 3 && $run_rc != 4 ]]; then
  tail -n 20 "$raw/run.err" >&2
  die "punctual run exited $run_rc"
fi
[[ -s $raw/run.json && -s $raw/run.html ]] || die "punctual run wrote no run.json or run.html"
[[ $run_rc == 0 ]] || log "punctual run exited $run_rc (a verdict); the reports were written"
stop_nginx_pid=$nginx_pid
nginx_pid=""
kill -QUIT "$stop_nginx_pid" 2>/dev/null || true
wait "$stop_nginx_pid" 2>/dev/null || true

# ---------------------------------------------------------------- re-rendering time
report_cmd=("$PUNCTUAL" report "$raw/run.json" --html "$raw/report.html")
"${report_cmd[@]}" >"$raw/report.out" 2>&1 || { cat "$raw/report.out" >&2; die "punctual report --html failed"; }
if have hyperfine; then
  method=hyperfine
  hyperfine --warmup 2 --runs "$timing_runs" --export-json "$raw/hyperfine.json" --style none \
    "$(printf '%q ' "${report_cmd[@]}")" >"$raw/hyperfine.out" 2>&1 ||
    { cat "$raw/hyperfine.out" >&2; die "hyperfine failed"; }
  python3 - "$raw/hyperfine.json" >"$raw/times_ms" <<'EOF'
import json, sys
for t in json.load(open(sys.argv[1]))["results"][0]["times"]:
    print(t * 1000)
EOF
else
  method="date +%s%N loop"
  "${report_cmd[@]}" >/dev/null 2>&1  # warm-up: the binary and the JSON in the page cache
  : >"$raw/times_ms"
  for _ in $(seq "$timing_runs"); do
    t0=$(date +%s%N)
    "${report_cmd[@]}" >/dev/null 2>&1
    t1=$(date +%s%N)
    echo "$(( (t1 - t0) / 1000 ))e-3" >>"$raw/times_ms"
  done
fi
loadavg_end=$(cut -d' ' -f1-3 /proc/loadavg)

# ---------------------------------------------------------------- verdicts and the result file
mkdir -p "$results_dir"
stamp=$(date -u +%Y%m%dT%H%M%SZ)
out_json=$results_dir/html-$stamp.json
python3 - "$raw" "$out_json" "$stamp" "$PUNCTUAL" "$duration" "$rate" "$threads" "$conns" \
  "$run_rc" "$method" "$max_bytes" "$max_ms" "$loadavg_start" "$loadavg_end" <<'EOF'
import json, os, statistics, sys
(raw, out_json, stamp, punctual, duration, rate, threads, conns, run_rc, method, max_bytes, max_ms,
 load_start, load_end) = sys.argv[1:]
max_bytes, max_ms = int(max_bytes), float(max_ms)
report = json.load(open(os.path.join(raw, "run.json")))
times = [float(line) for line in open(os.path.join(raw, "times_ms")) if line.strip()]
html_bytes = os.path.getsize(os.path.join(raw, "run.html"))
report_bytes = os.path.getsize(os.path.join(raw, "report.html"))
median = statistics.median(times)
rows = len((report.get("series") or {}).get("per_second") or [])
checks = {
    "run_html_under_1mb": html_bytes < max_bytes,
    "report_html_under_1mb": report_bytes < max_bytes,
    "report_html_median_under_200ms": median < max_ms,
}
result = {
    "bench": {"kind": "html_report", "timestamp": stamp, "punctual": punctual,
              "loadavg_start": load_start.split(), "loadavg_end": load_end.split(),
              "nproc": os.cpu_count()},
    "run": {"duration": duration, "rate": int(rate), "threads": int(threads),
            "connections": int(conns), "exit_code": int(run_rc),
            "planned": report["schedule"]["planned"], "ok": report["outcomes"]["ok"],
            "series_rows": rows, "valid": (report.get("validity") or {}).get("valid")},
    "sizes_bytes": {"json": os.path.getsize(os.path.join(raw, "run.json")),
                    "html_from_run": html_bytes, "html_from_report": report_bytes,
                    "limit": max_bytes},
    "report_html_time_ms": {"method": method, "runs": len(times), "median": median,
                            "min": min(times), "max": max(times), "all": times,
                            "limit_median": max_ms},
    "checks": checks,
    "pass": all(checks.values()),
}
with open(out_json, "w") as f:
    json.dump(result, f, indent=1)
    f.write("\n")

def line(ok, text):
    print(f"{'PASS' if ok else 'FAIL'}  {text}")

print(f"\npunctual HTML report bench {stamp}: run -t{threads} -c{conns} -R{rate} -d{duration}, "
      f"{report['schedule']['planned']:,} planned, {rows} rows over time, JSON "
      f"{result['sizes_bytes']['json']:,} bytes (load average {load_start} -> {load_end})")
line(checks["run_html_under_1mb"], f"run --html size {html_bytes:,} bytes < {max_bytes:,}")
line(checks["report_html_under_1mb"], f"report --html size {report_bytes:,} bytes < {max_bytes:,}")
line(checks["report_html_median_under_200ms"],
     f"report RUN.json --html: median {median:.1f} ms < {max_ms:g} ms over {len(times)} runs "
     f"(min {min(times):.1f}, max {max(times):.1f}; {method})")
print(f"result written to {out_json}")
sys.exit(0 if result["pass"] else 1)
EOF
