#!/usr/bin/env bash
# End-to-end benchmark of punctual against h2load and wrk on 127.0.0.1.
#
# nginx (one worker) runs on CPU 0, every load tool on CPU 1, all in this one run, and every
# figure is reported as a ratio against the reference tool measured in the same run: absolute
# numbers on a shared 2-vCPU VM mean little, ratios taken minutes apart mean less.
#
# Usage: bench/run-bench.sh            (~12 min)
#        QUICK=1 bench/run-bench.sh    (~2 min smoke run, shorter durations)
#        SECTIONS=5 bench/run-bench.sh (only the HTTPS section)
# Environment (all optional):
#   PUNCTUAL=path      the binary to test (default: build it in build-bench/, Release)
#   SECTIONS="1 2 3 4 5"  which sections run (spaces or commas)
#   PORT=18480         nginx port on 127.0.0.1
#   TLS_PORT=18443     the HTTPS nginx's port on 127.0.0.1 (section 5)
#   RESULTS_DIR=dir    where <timestamp>.json goes (default bench/results)
#   KEEP_RAW=1         keep every raw output (pcaps included) instead of deleting them
#   NO_INSTALL=1       never call apt-get; missing tools skip their sections
#   CPU_ROUNDS=3       rounds of the section 1 and 5 CPU runs (1 with QUICK)
#   SERVER_CPU=0 TOOL_CPU=1
#   STEAL_LIMIT_MS=N   section 2: the host steal (ms, both CPUs) past which a step is re-run, then void
#                      (default a tenth of the step)
# See bench/README.md for what each figure means.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/.." && pwd)

quick=${QUICK:-0}
port=${PORT:-18480}
tls_port=${TLS_PORT:-18443}
sections=" ${SECTIONS:-1 2 3 4 5} "
sections=${sections//,/ }
server_cpu=${SERVER_CPU:-0}
tool_cpu=${TOOL_CPU:-1}
results_dir=${RESULTS_DIR:-$here/results}
if [[ $quick == 1 ]]; then
  dur=3; long_dur=15; ladder_steps=3; cpu_rounds=${CPU_ROUNDS:-1}
else
  dur=10; long_dur=60; ladder_steps=5; cpu_rounds=${CPU_ROUNDS:-3}
fi
rate1=20000        # section 1: fixed rate
conns1=50
rate3=2000         # sections 3 and 4
conns3=10
rate5=10000        # section 5, HTTPS keep-alive
conns5=50
rate5h=500         # section 5, one TLS connection per request
conns5h=10
# Section 2: punctual's default is an unbounded queue, so "no drops" holds by construction and
# the sent rate (>= 99% of planned) is what catches a generator or server that cannot keep up.
# MAX_QUEUE=N bounds it: then a server hiccup of N / rate seconds already counts as drops.
max_queue=${MAX_QUEUE:-0}

log() { printf '[bench %(%H:%M:%S)T] %s\n' -1 "$*" >&2; }
die() { log "error: $*"; exit 1; }
selected() { [[ $sections == *" $1 "* ]]; }
for s in $sections; do [[ $s == [1-5] ]] || die "SECTIONS: no section '$s' (1 to 5)"; done

# ---------------------------------------------------------------- tools
have() { command -v "$1" >/dev/null 2>&1; }

apt_install() {  # PKG WHY: best effort, never fails
  if [[ ${NO_INSTALL:-0} != 1 && $(id -u) == 0 ]] && have apt-get; then
    log "$2 is missing; installing $1"
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q "$1" >/dev/null 2>&1 ||
      { apt-get update -q >/dev/null 2>&1 &&
        DEBIAN_FRONTEND=noninteractive apt-get install -y -q "$1" >/dev/null 2>&1; } || true
  fi
}

# Installs a Debian package when its command is missing. Returns non-zero (never exits) so a
# missing optional tool only skips the sections that need it.
ensure_tool() {
  local cmd=$1 pkg=$2
  have "$cmd" && return 0
  apt_install "$pkg" "$cmd"
  have "$cmd" && return 0
  log "WARNING: '$cmd' (Debian package $pkg) is not available; sections that need it are skipped"
  return 1
}

ensure_tool python3 python3 || die "python3 is required (results and pcap parsing)"
ensure_tool taskset util-linux || die "taskset is required (CPU pinning)"
[[ -x /usr/bin/time ]] || ensure_tool /usr/bin/time time || die "/usr/bin/time is required (CPU and RSS)"
ensure_tool nginx nginx-light || ensure_tool nginx nginx || die "nginx is required (the target)"
have_h2load=0; ensure_tool h2load nghttp2-client && have_h2load=1
have_wrk=0; ensure_tool wrk wrk && have_wrk=1
have_openssl=0
if selected 5; then
  ensure_tool openssl openssl && have_openssl=1
fi
# The floor generator always links OpenSSL, whichever sections run.
[[ -e /usr/include/openssl/ssl.h ]] || apt_install libssl-dev "OpenSSL's headers"
have_tcpdump=0
if ensure_tool tcpdump tcpdump; then
  if [[ $(id -u) == 0 ]]; then have_tcpdump=1; else
    log "WARNING: tcpdump needs root (CAP_NET_RAW); wire precision is skipped"; fi
fi
(( $(nproc) > tool_cpu && $(nproc) > server_cpu )) ||
  die "needs CPUs $server_cpu and $tool_cpu; this machine has $(nproc)"

if [[ -z ${PUNCTUAL:-} ]]; then
  PUNCTUAL=$repo/build-bench/punctual
  if [[ ! -x $PUNCTUAL ]]; then
    have cmake || die "cmake is missing and PUNCTUAL is not set"
    log "building punctual (Release) in $repo/build-bench"
    # -Wno-error=restrict: GCC 12 reports a false -Wrestrict inside std::string at -O3.
    cmake -S "$repo" -B "$repo/build-bench" -DCMAKE_BUILD_TYPE=Release -DPUNCTUAL_TESTS=OFF \
      -DCMAKE_CXX_FLAGS=-Wno-error=restrict >/dev/null
    cmake --build "$repo/build-bench" --target punctual -j2 >/dev/null
  fi
fi
[[ -x $PUNCTUAL ]] || die "punctual binary not found: $PUNCTUAL"
have c++ || die "c++ is required (bench/floor_generator.cpp)"

# ---------------------------------------------------------------- scratch and cleanup
raw=$(mktemp -d /tmp/punctual-bench.XXXXXX)
nginx_pid=""
tcpdump_pid=""
cleanup() {  # one nginx at a time: section 5 stops the plain one before starting its own
  [[ -n $tcpdump_pid ]] && kill -INT "$tcpdump_pid" 2>/dev/null || true
  [[ -n $nginx_pid ]] && kill -QUIT "$nginx_pid" 2>/dev/null || true
  [[ -n $nginx_pid ]] && wait "$nginx_pid" 2>/dev/null || true
  if [[ ${KEEP_RAW:-0} == 1 ]]; then log "raw outputs kept in $raw"; else rm -rf "$raw"; fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

url=http://127.0.0.1:$port/
floor_bin=$raw/floor_generator
c++ -std=c++20 -O2 -Wall -Wextra -Werror -o "$floor_bin" "$here/floor_generator.cpp" \
  -lssl -lcrypto ||
  die "bench/floor_generator.cpp did not compile (OpenSSL 3's headers: Debian's libssl-dev)"

# ---------------------------------------------------------------- nginx
start_nginx() {  # [TEMPLATE DIR PORT tls]: the plain target by default
  local template=${1:-nginx.conf.template} dir=${2:-$raw/nginx} p=${3:-$port} tls=${4:-}
  mkdir -p "$dir"
  sed -e "s|@DIR@|$dir|g" -e "s|@PORT@|$p|g" "$here/$template" >"$dir/nginx.conf"
  taskset -c "$server_cpu" nginx -p "$dir" -c "$dir/nginx.conf" 2>"$dir/stderr" &
  nginx_pid=$!
  local i
  for i in $(seq 50); do
    if python3 "$here/http_ready.py" "$p" "$tls" 2>/dev/null; then return 0; fi
    kill -0 "$nginx_pid" 2>/dev/null || break
    sleep 0.1
  done
  cat "$dir/stderr" >&2 || true
  die "nginx did not start on 127.0.0.1:$p (port in use?)"
}

stop_nginx() {
  [[ -n $nginx_pid ]] || return 0
  kill -QUIT "$nginx_pid" 2>/dev/null || true
  wait "$nginx_pid" 2>/dev/null || true
  nginx_pid=""
}

# ---------------------------------------------------------------- runners
# timed NAME CMD...: runs CMD on the tool CPU under /usr/bin/time; stdout/stderr go to
# $raw/NAME.out/.err and "elapsed_s user_s sys_s maxrss_kb" to $raw/NAME.time.
timed() {
  local name=$1; shift
  local rc=0
  timeout $((long_dur + dur + 60)) /usr/bin/time -f '%e %U %S %M' -o "$raw/$name.time" \
    taskset -c "$tool_cpu" "$@" >"$raw/$name.out" 2>"$raw/$name.err" || rc=$?
  echo "$rc" >"$raw/$name.rc"
  # punctual's exit codes 3/4 are verdicts, not failures of the run.
  if [[ $rc != 0 && $rc != 3 && $rc != 4 ]]; then
    log "WARNING: $name exited with $rc: $(tail -n 3 "$raw/$name.err" | tr '\n' ' ')"
  fi
}

capture_start() {  # NAME [PORT]
  local name=$1 p=${2:-$port}
  # Only client->server segments that carry data: one per request. -B in KiB, large enough
  # that 20k req/s for the whole run never overflows; the capture process itself runs beside
  # nginx so it does not take CPU from the tool being measured.
  taskset -c "$server_cpu" tcpdump -i lo -n -s 128 -B 131072 --time-stamp-precision=nano \
    -w "$raw/$name.pcap" "tcp dst port $p and tcp[tcpflags] & tcp-push != 0" \
    2>"$raw/$name.tcpdump" &
  tcpdump_pid=$!
  local i
  for i in $(seq 50); do
    grep -q 'listening on' "$raw/$name.tcpdump" 2>/dev/null && return 0
    sleep 0.1
  done
  log "WARNING: tcpdump did not start: $(cat "$raw/$name.tcpdump")"
}

capture_end() {
  # tcpdump drops what is still in its ring buffer on SIGINT: let it drain first.
  sleep 1
  kill -INT "$tcpdump_pid" 2>/dev/null || true
  wait "$tcpdump_pid" 2>/dev/null || true
  tcpdump_pid=""
}

capture_stop() {
  local name=$1 rate=$2
  capture_end
  python3 "$here/wire_gaps.py" --rate "$rate" --port "$port" --skip-ms 500 \
    --keep-ms $((dur * 1000 - 1000)) "$raw/$name.pcap" >"$raw/$name.wire.json" ||
    log "WARNING: no requests found in the $name capture"
  [[ ${KEEP_RAW:-0} == 1 ]] || rm -f "$raw/$name.pcap"
}

# tls_capture_stop NAME schedule RATE PUNCTUAL_JSON | NAME per-client RATE_PER_CONNECTION
# Section 5's precision: every request as it went onto lo, against the ideal time the tool
# itself set out to keep, written to NAME.tlswire.json. TLS hides the requests' bytes, not
# their segments: once a connection's handshake is done, each request is one TLS record of
# one fixed size in one segment, and the handshake's segments and the closing alerts have
# other sizes, so the most frequent size is the request.
#   schedule    punctual: one constant schedule over all connections. The i-th request on the
#               wire against schedule.start_unix_ns + i / RATE from its JSON (CLOCK_REALTIME,
#               the capture's clock), with no offset fitted: lateness counts.
#   fitted      the floor generator: one constant schedule over all connections whose start
#               it does not report. The i-th request on the wire against the first one's time
#               + i / RATE + the median offset, fitted on the kept window, which can only
#               flatter it: the floor of what sleeping until each deadline keeps on this host.
#   per-client  h2load: --rps is a rate per connection. The j-th request of each connection
#               against j / RATE after that connection's median offset, fitted on the kept
#               window, so that neither when each connection started nor a constant delay
#               counts against it.
# Both keep the requests from 500 ms after the start to 500 ms before the end.
tls_capture_stop() {
  local name=$1 kind=$2 rate=$3 ref=${4:-}
  capture_end
  python3 - "$here" "$raw/$name.pcap" "$tls_port" "$kind" "$rate" "$dur" "$ref" \
    >"$raw/$name.tlswire.json" <<'EOF' || log "WARNING: no requests found in the $name capture"
import collections, json, sys
here, pcap, port, kind, rate, dur, ref = sys.argv[1:]
sys.path.insert(0, here)
sys.dont_write_bytecode = True  # no __pycache__ left in bench/
import wire_gaps  # noqa: E402  (its pcap reader)
port, rate, dur = int(port), float(rate), float(dur)
segs = []
for ts, linktype, frame in wire_gaps.read_pcap(pcap):
    net = wire_gaps.network_payload(linktype, frame)
    seg = net and wire_gaps.tcp_segment(*net)
    if seg and seg[1] == port and seg[2] > 0:
        segs.append((ts, seg[0], seg[2]))
if not segs:
    sys.exit(1)
size = collections.Counter(n for _, _, n in segs).most_common(1)[0][0]
reqs = sorted((ts, sport) for ts, sport, n in segs if n == size)
gap = 1e9 / rate
errors, lateness = [], []
if kind == "schedule":
    start = json.load(open(ref))["schedule"]["start_unix_ns"]
    # Nothing of the schedule leaves before its start; an exchange made while connecting
    # would otherwise shift every index after it.
    reqs = [r for r in reqs if r[0] >= start - 1e6]
    lo, hi = start + 0.5e9, start + dur * 1e9 - 0.5e9
    for i, (t, _) in enumerate(reqs):
        ideal = start + i * gap
        if lo <= ideal < hi:
            errors.append(abs(t - ideal))
            lateness.append(t - ideal)
elif kind == "fitted":
    first = reqs[0][0]
    lo, hi = first + 0.5e9, first + dur * 1e9 - 0.5e9
    kept = [(i, t) for i, (t, _) in enumerate(reqs) if lo <= t < hi]
    offset = wire_gaps.percentile(sorted(t - first - i * gap for i, t in kept), 50)
    errors = [abs(t - first - i * gap - offset) for i, t in kept]
else:
    lo, hi = reqs[0][0] + 0.5e9, reqs[0][0] + dur * 1e9 - 0.5e9
    per_conn = collections.defaultdict(list)
    for t, sport in reqs:
        per_conn[sport].append(t)
    for times in per_conn.values():
        kept = [(j, t) for j, t in enumerate(times) if lo <= t < hi]
        if not kept:
            continue
        offset = wire_gaps.percentile(sorted(t - j * gap for j, t in kept), 50)
        errors += [abs(t - j * gap - offset) for j, t in kept]
errors.sort()
lateness.sort()
pct = wire_gaps.percentile
json.dump({"ideal": kind, "ideal_gap_ns": gap, "request_record_bytes": size,
           "requests_on_wire": len(reqs), "other_segments": len(segs) - len(reqs),
           "connections": len({sport for _, sport in reqs}), "kept": len(errors),
           "abs_error_ns": {p: pct(errors, float(p)) for p in ("50", "90", "99", "99.9")},
           "abs_error_max_ns": errors[-1] if errors else None,
           "lateness_p50_ns": pct(lateness, 50) if lateness else None}, sys.stdout, indent=1)
print()
sys.exit(0 if errors else 1)
EOF
  [[ ${KEEP_RAW:-0} == 1 ]] || rm -f "$raw/$name.pcap"
}

punctual_run() {  # NAME ARGS...
  local name=$1; shift
  timed "$name" "$PUNCTUAL" run "$@" --json "$raw/$name.json" "$url"
}

floor_run() {  # NAME MODE [FLAG...]: the reference generator that does only the unavoidable kernel work
  timed "$1" "$floor_bin" "$2" "$port" "$rate1" "$conns1" "$dur" "${@:3}"
}

h2load_run() {  # NAME
  # h2load's --rps is per client, so the total is conns1 x rps.
  timed "$1" h2load --h1 -c "$conns1" -t 1 --rps $((rate1 / conns1)) -D "$dur" "$url"
}

# ---------------------------------------------------------------- sections
section1() {
  log "1/5 CPU per request and precision at $rate1 req/s, $conns1 connections, ${dur}s each"
  local mode round
  # CPU is measured without the capture: tcpdump's filter runs in the sender's context.
  # Every tool runs once per round, rounds one after another, so that a noisy minute on this
  # shared machine hits one round of every tool rather than every run of one tool. Each mode's
  # floor runs right beside it (before it in even rounds, after it in odd ones), since the
  # ratio to the floor is taken per round and this machine's speed drifts within a minute.
  # The coarse floor runs once more on punctual's other side: the two floor runs are the same
  # work, so their ratio (floor_aa) is what this host's drift alone does to a ratio in a round.
  for round in $(seq "$cpu_rounds"); do
    log "   CPU round $round/$cpu_rounds"
    for mode in coarse fine; do
      (( round % 2 == 0 )) && floor_run "s1_cpu_floor_${mode}_r$round" "$mode"
      [[ $mode == coarse ]] && (( round % 2 == 1 )) && floor_run "s1_cpu_floor_again_r$round" coarse
      punctual_run "s1_cpu_${mode}_r$round" -t1 -c"$conns1" -R"$rate1" -d"${dur}s" --precision "$mode"
      [[ $mode == coarse ]] && (( round % 2 == 0 )) && floor_run "s1_cpu_floor_again_r$round" coarse
      (( round % 2 == 1 )) && floor_run "s1_cpu_floor_${mode}_r$round" "$mode"
    done
    # The coarse floor that also takes each response's kernel receive stamp, as punctual must.
    floor_run "s1_cpu_floor_stamped_r$round" coarse --stamp
    punctual_run "s1_cpu_spin_r$round" -t1 -c"$conns1" -R"$rate1" -d"${dur}s" --precision spin
    (( have_h2load )) && h2load_run "s1_cpu_h2load_r$round"
  done
  (( have_tcpdump )) || return 0
  for mode in coarse fine spin; do
    capture_start "s1_wire_$mode"
    punctual_run "s1_wire_$mode" -t1 -c"$conns1" -R"$rate1" -d"${dur}s" --precision "$mode"
    capture_stop "s1_wire_$mode" "$rate1"
  done
  if (( have_h2load )); then
    capture_start s1_wire_h2load
    h2load_run s1_wire_h2load
    capture_stop s1_wire_h2load "$rate1"
  fi
}

# Passes when punctual kept its schedule: send lag p99 < 1 ms, nothing dropped or lost, and
# (nearly) every planned request sent inside the window. Prints the criteria a step failed, by
# name and figure (e.g. "sent 97.2% < 99%"), comma-separated: section 2 says why a step failed.
keeps_up() {
  python3 - "$1" <<'EOF'
import json, sys
try:
    d = json.load(open(sys.argv[1]))
except (OSError, ValueError):
    print("no report")
    sys.exit(1)
o = d["outcomes"]
lag99 = d["latency"]["send_lag"]["percentiles_ns"]["99"]
rates = d["rates_per_s"]
failed = []
if lag99 >= 1_000_000:
    failed.append(f"send lag p99 {lag99 / 1e3:.0f} us >= 1 ms")
for k in ("dropped", "unfinished", "timeout", "socket_error"):
    if o[k]:
        failed.append(f"{k} {o[k]}")
if rates["sent"] < 0.99 * rates["planned"]:
    failed.append(f"sent {100 * rates['sent'] / rates['planned']:.1f}% < 99%")
print(", ".join(failed))
sys.exit(1 if failed else 0)
EOF
}

# The host's steal time so far on the server's and the tool's CPUs, in ms (/proc/stat counts
# in USER_HZ): time the host ran something else while a vCPU wanted to run.
steal_ms() {
  awk -v a="cpu$server_cpu" -v b="cpu$tool_cpu" -v hz="$(getconf CLK_TCK)" \
    '$1 == a || $1 == b { s += $9 } END { printf "%d", s * 1000 / hz }' /proc/stat
}

# Busy time so far on the server's and the tool's CPUs, and what nginx used of it, in ms: a
# step's busy time less nginx's and punctual's own is other work that shared those CPUs.
cpus_busy_ms() {
  awk -v a="cpu$server_cpu" -v b="cpu$tool_cpu" -v hz="$(getconf CLK_TCK)" \
    '$1 == a || $1 == b { s += $2 + $3 + $4 + $7 + $8 } END { printf "%d", s * 1000 / hz }' /proc/stat
}
# Milliseconds of wall time since SINCE (an $EPOCHREALTIME).
wall_ms_since() {
  awk -v a="$1" -v b="$EPOCHREALTIME" 'BEGIN { printf "%d", (b - a) * 1000 }'
}
nginx_ms() {
  local pids
  pids="$nginx_pid $(pgrep -P "$nginx_pid" | tr '\n' ' ')"
  # shellcheck disable=SC2086
  cat $(printf '/proc/%s/stat ' $pids) 2>/dev/null |
    awk -v hz="$(getconf CLK_TCK)" '{ s += $14 + $15 } END { printf "%d", s * 1000 / hz }'
}

# ladder HI: bisection of punctual's rate over [0, HI], a line per step in $raw/s2_ladder.txt.
ladder() {
  local lo=0 hi=$1 step r
  # A step during which the host stole more than a tenth of the step from the two CPUs says
  # nothing about punctual (seen here: 9 s stolen in a 10 s step, and no step passed): it runs
  # once more, and a second such step is void, ending the ladder rather than bisecting on noise.
  local steal_limit=${STEAL_LIMIT_MS:-$((dur * 100))} attempt
  for step in $(seq "$ladder_steps"); do
    r=$(((lo + hi) / 2))
    local name=s2_step${step}_R$r stolen busy server own others since wall
    for attempt in 1 2; do
      since=$EPOCHREALTIME
      stolen=$(steal_ms) busy=$(cpus_busy_ms) server=$(nginx_ms)
      punctual_run "$name" -t1 -c"$conns1" -R"$r" -d"${dur}s" --max-queue "$max_queue"
      stolen=$(($(steal_ms) - stolen)) busy=$(($(cpus_busy_ms) - busy)) server=$(($(nginx_ms) - server))
      wall=$(wall_ms_since "$since")
      ((stolen <= steal_limit)) && break
      log "   -R $r: the host stole ${stolen} ms of the step (limit ${steal_limit} ms)${attempt/1/; once more}"
    done
    own=$(awk 'END { printf "%d", ($2 + $3) * 1000 }' "$raw/$name.time")
    others=$((busy - server - own))
    local verdict=fail why
    # The load average, the steal time, other processes' CPU time on the two CPUs and nginx's
    # share of the step's wall time (per mille) beside each step: on a shared host, other work
    # on the server's or the tool's CPU fails steps that a quiet host passes, and a server busy
    # all the step bounds every tool.
    local facts="$(cut -d' ' -f1 /proc/loadavg) $stolen $others $((server * 1000 / (wall > 0 ? wall : 1)))"
    if ((stolen > steal_limit)); then
      why="host stole ${stolen} ms"
      echo "$r void $raw/$name.json $facts $why" >>"$raw/s2_ladder.txt"
      log "   -R $r: void ($why); the ladder ends here"
      break
    fi
    if why=$(keeps_up "$raw/$name.json"); then lo=$r; verdict=pass; else hi=$r; fi
    echo "$r $verdict $raw/$name.json $facts $why" >>"$raw/s2_ladder.txt"
    log "   -R $r: $verdict${why:+ ($why)}"
  done
}

section2() {
  log "2/5 maximum rate, $conns1 connections, ${dur}s per step"
  local wrk_rate=0 server
  if (( have_wrk )); then
    # How busy nginx was during wrk's run (its CPU time over the run's wall time): when nearly
    # always, wrk's rate is the server's, and no open-loop tool passes much more.
    local since=$EPOCHREALTIME
    server=$(nginx_ms)
    timed s2_wrk wrk -t1 -c"$conns1" -d"${dur}s" "$url"
    echo "$(($(nginx_ms) - server)) $(wall_ms_since "$since")" >"$raw/s2_wrk_server_ms"
    wrk_rate=$(awk '/^Requests\/sec:/ {printf "%d", $2}' "$raw/s2_wrk.out")
  fi
  [[ -n $wrk_rate && $wrk_rate -gt 0 ]] || wrk_rate=40000
  # Bisection over [0, 1.5 x wrk's closed-loop rate]: the server on one core bounds both tools.
  ladder $((wrk_rate * 3 / 2))
}

section3() {
  log "3/5 latency floor at $rate3 req/s, $conns3 connections, ${dur}s"
  punctual_run s3_floor -t1 -c"$conns3" -R"$rate3" -d"${dur}s"
}

section4() {
  log "4/5 memory: ${long_dur}s run at $rate3 req/s (the ${dur}s run is section 3's)"
  punctual_run s4_long -t1 -c"$conns3" -R"$rate3" -d"${long_dur}s"
}

# ---------------------------------------------------------------- section 5: HTTPS
tls_url=https://127.0.0.1:$tls_port/
tls_dir=$raw/nginx-tls
punctual_tls=0

# Until punctual speaks HTTPS, `punctual run https://...` exits with 2 (unsupported, or
# --cacert unknown): its rows are skipped and the section still measures h2load and the floor.
probe_punctual_tls() {
  local rc=0
  timeout 30 "$PUNCTUAL" run -t1 -c1 -R10 -d1s --cacert "$tls_dir/cert.pem" \
    --json "$raw/s5_probe.json" "$tls_url" >"$raw/s5_probe.out" 2>"$raw/s5_probe.err" || rc=$?
  local why
  why=$(tail -n 1 "$raw/s5_probe.err")
  case $rc in
    0 | 3 | 4) punctual_tls=1; return 0 ;;
    2) echo "punctual has no HTTPS yet (punctual run $tls_url exits with 2: $why)" ;;
    *) echo "punctual run $tls_url failed with exit code $rc: $why" ;;
  esac >"$raw/s5_punctual_skipped"
  log "   $(cat "$raw/s5_punctual_skipped"); its rows are skipped"
}

punctual_tls_run() {  # NAME ARGS...
  local name=$1; shift
  timed "$name" "$PUNCTUAL" run "$@" --cacert "$tls_dir/cert.pem" --json "$raw/$name.json" \
    "$tls_url"
}

floor_tls_run() {  # NAME MODE RATE CONNECTIONS [FLOOR OPTIONS...]
  local name=$1 mode=$2 rate=$3 conns=$4; shift 4
  timed "$name" "$floor_bin" "$mode" "$tls_port" "$rate" "$conns" "$dur" \
    --tls --cacert "$tls_dir/cert.pem" "$@"
}

h2load_tls_run() {  # NAME: the same per-client --rps rule as section 1, over TLS
  timed "$1" h2load --h1 -c "$conns5" -t 1 --rps $((rate5 / conns5)) -D "$dur" "$tls_url"
}

section5() {
  log "5/5 HTTPS: keep-alive at $rate5 req/s over $conns5 connections, then a new connection" \
    "per request at $rate5h req/s; ${dur}s each"
  if (( ! have_openssl )); then
    log "   WARNING: the openssl command is missing (no certificate): section 5 is skipped"
    return 0
  fi
  mkdir -p "$tls_dir"
  # EC P-256: its signature costs the one-core server little, so the handshake-heavy runs
  # measure the clients. The address is in subjectAltName because the clients verify it.
  openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 2 \
    -subj /CN=127.0.0.1 -addext subjectAltName=IP:127.0.0.1 \
    -keyout "$tls_dir/key.pem" -out "$tls_dir/cert.pem" 2>"$tls_dir/openssl.err" ||
    die "openssl could not make a certificate: $(cat "$tls_dir/openssl.err")"
  stop_nginx
  start_nginx nginx-tls.conf.template "$tls_dir" "$tls_port" tls
  probe_punctual_tls
  local round mode
  for round in $(seq "$cpu_rounds"); do
    log "   CPU round $round/$cpu_rounds"
    if (( punctual_tls )); then
      for mode in coarse fine; do
        punctual_tls_run "s5_ka_punctual_${mode}_r$round" -t1 -c"$conns5" -R"$rate5" \
          -d"${dur}s" --precision "$mode"
      done
    fi
    if (( have_h2load )); then h2load_tls_run "s5_ka_h2load_r$round"; fi
    floor_tls_run "s5_ka_floor_coarse_r$round" coarse "$rate5" "$conns5"
    floor_tls_run "s5_ka_floor_fine_r$round" fine "$rate5" "$conns5"
    if (( punctual_tls )); then
      punctual_tls_run "s5_hs_punctual_r$round" -t1 -c"$conns5h" -R"$rate5h" -d"${dur}s" \
        --no-keepalive
    fi
    floor_tls_run "s5_hs_floor_resume_r$round" fine "$rate5h" "$conns5h" --no-keepalive --resume
    floor_tls_run "s5_hs_floor_full_r$round" fine "$rate5h" "$conns5h" --no-keepalive
  done
  if (( ! have_tcpdump )); then
    log "   no tcpdump (or not root): HTTPS precision is skipped"
  else
    if (( punctual_tls )); then
      capture_start s5_wire_punctual_fine "$tls_port"
      punctual_tls_run s5_wire_punctual_fine -t1 -c"$conns5" -R"$rate5" -d"${dur}s" \
        --precision fine
      tls_capture_stop s5_wire_punctual_fine schedule "$rate5" "$raw/s5_wire_punctual_fine.json"
    fi
    capture_start s5_wire_floor_fine "$tls_port"
    floor_tls_run s5_wire_floor_fine fine "$rate5" "$conns5"
    tls_capture_stop s5_wire_floor_fine fitted "$rate5"
    if (( have_h2load )); then
      capture_start s5_wire_h2load "$tls_port"
      h2load_tls_run s5_wire_h2load
      tls_capture_stop s5_wire_h2load per-client $((rate5 / conns5))
    fi
  fi
  stop_nginx
}

# ---------------------------------------------------------------- main
stamp=$(date -u +%Y%m%dT%H%M%SZ)
mkdir -p "$results_dir"
out_json=$results_dir/$stamp.json
cat /proc/loadavg >"$raw/loadavg_start"
log "punctual: $PUNCTUAL; nginx on CPU $server_cpu, tools on CPU $tool_cpu; quick=$quick;" \
  "sections:$sections"
if selected 1 || selected 2 || selected 3 || selected 4; then start_nginx; fi
if selected 1; then section1; fi
if selected 2; then section2; fi
if selected 3; then section3; fi
if selected 4; then section4; fi
if selected 5; then section5; fi
cat /proc/loadavg >"$raw/loadavg_end"

{
  echo "nginx: $(nginx -v 2>&1)"
  (( have_h2load )) && echo "h2load: $(h2load --version 2>&1 | head -n1)"
  (( have_wrk )) && echo "wrk: $(wrk -v 2>&1 | head -n1)"
  (( have_openssl )) && echo "openssl: $(openssl version 2>&1)"
  echo "kernel: $(uname -r)"
} >"$raw/versions.txt" || true

python3 - "$raw" "$out_json" "$quick" "$dur" "$long_dur" "$rate1" "$conns1" "$rate3" "$conns3" \
  "$max_queue" "$PUNCTUAL" "$stamp" "$cpu_rounds" "$sections" "$rate5" "$conns5" "$rate5h" \
  "$conns5h" <<'EOF'
# Turns the raw outputs into bench/results/<timestamp>.json and the table on stdout.
# Nothing here is a constant figure: every number comes from a file this run wrote.
import glob, json, os, re, sys

(raw, out_json, quick, dur, long_dur, rate1, conns1, rate3, conns3,
 max_queue, punctual, stamp, cpu_rounds, sections, rate5, conns5, rate5h, conns5h) = sys.argv[1:]
cpu_rounds = int(cpu_rounds)
dur, long_dur, rate1, conns1 = int(dur), int(long_dur), int(rate1), int(conns1)
rate3, conns3 = int(rate3), int(conns3)
rate5, conns5, rate5h, conns5h = int(rate5), int(conns5), int(rate5h), int(conns5h)
sections = sections.split()


def path(name):
    return os.path.join(raw, name)


def load_json(name):
    try:
        with open(path(name)) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def read(name):
    try:
        with open(path(name)) as f:
            return f.read()
    except OSError:
        return None


def time_of(name):
    """(elapsed s, user s, sys s, max RSS KiB) from /usr/bin/time -f '%e %U %S %M'."""
    text = read(name + ".time")
    if not text:
        return None
    fields = text.strip().splitlines()[-1].split()
    try:
        e, u, s, m = float(fields[0]), float(fields[1]), float(fields[2]), int(fields[3])
    except (IndexError, ValueError):
        return None
    return {"elapsed_s": e, "user_s": u, "sys_s": s, "max_rss_kib": m}


def ratio(a, b):
    return a / b if a is not None and b not in (None, 0) else None


def us(ns):
    return ns / 1000.0 if ns is not None else None


def pct(view, p):
    return view["percentiles_ns"].get(p) if view else None


def punctual_requests(d):
    o = d["outcomes"]
    return o["ok"] + o["http_error"] + o["socket_error"] + o["timeout"]


def h2load_requests(text):
    m = re.search(r"requests: \d+ total, \d+ started, (\d+) done", text or "")
    return int(m.group(1)) if m else None


def wire_of(name):
    w = load_json(name + ".wire.json")
    if not w:
        return None
    dropped = re.search(r"(\d+) packets dropped by kernel", read(name + ".tcpdump") or "")
    return {
        "requests": w["requests"],
        "rate_on_wire_per_s": w["rate_on_wire_per_s"],
        "abs_gap_error_us": {"50": us(w["abs_gap_error_ns"]["50"]),
                             "99": us(w["abs_gap_error_ns"]["99"])},
        "abs_schedule_error_us": {"50": us(w["abs_schedule_error_ns"]["50"]),
                                  "99": us(w["abs_schedule_error_ns"]["99"])},
        "burst_share": w["burst_share"],
        "capture_dropped": int(dropped.group(1)) if dropped else None,
    }


# ---- section 1
def median_of(values):
    xs = sorted(x for x in values if x is not None)
    if not xs:
        return None
    m = len(xs) // 2
    return xs[m] if len(xs) % 2 else (xs[m - 1] + xs[m]) / 2


def cpu_per_request(t, n):
    return (t["user_s"] + t["sys_s"]) * 1e6 / n if t and n else None


def punctual_round(mode, r):
    name = f"s1_cpu_{mode}_r{r}"
    d, t = load_json(name + ".json"), time_of(name)
    if not d or not t:
        return None
    n = punctual_requests(d)
    workers = d.get("generator", {}).get("workers", [])
    lag = d["latency"]["send_lag"]
    return {"requests": n, "cpu_us_per_request": cpu_per_request(t, n),
            "worker_cpu_us_per_request":
                sum(w.get("cpu_ns", 0) for w in workers) / 1000.0 / n if n and workers else None,
            "sleeps_per_request": sum(w.get("sleeps", 0) for w in workers) / n if n else None,
            "send_lag_p50_us": us(pct(lag, "50")), "send_lag_p99_us": us(pct(lag, "99")),
            "rate_sent_per_s": d["rates_per_s"]["sent"]}


def h2load_round(r):
    name = f"s1_cpu_h2load_r{r}"
    t, n = time_of(name), h2load_requests(read(name + ".out"))
    if not t or not n:
        return None
    return {"requests": n, "cpu_us_per_request": cpu_per_request(t, n), "rate_sent_per_s": n / dur}


def floor_round(mode, r):
    name = f"s1_cpu_floor_{mode}_r{r}"
    t, out = time_of(name), read(name + ".out")
    try:
        f = json.loads(out) if out else None
    except ValueError:
        f = None
    if not t or not f or not f["completed"]:
        return None
    n = f["completed"]
    return {"requests": n, "cpu_us_per_request": cpu_per_request(t, n),
            "sleeps_per_request": f["sleeps"] / n, "rate_sent_per_s": f["sent"] / dur}


rounds = range(1, cpu_rounds + 1)
per_round = {}
for mode in ("coarse", "fine", "spin"):
    per_round["punctual " + mode] = [punctual_round(mode, r) for r in rounds]
per_round["h2load"] = [h2load_round(r) for r in rounds]
for mode in ("coarse", "fine", "stamped", "again"):
    per_round["floor " + mode] = [floor_round(mode, r) for r in rounds]


def round_ratio(a, b):
    """The median over rounds of a's CPU per request over b's in the same round."""
    if b not in per_round:
        return None
    return median_of([ratio(x and x["cpu_us_per_request"], y and y["cpu_us_per_request"])
                      for x, y in zip(per_round[a], per_round[b])])


tools = {}
for name, runs in per_round.items():
    got = [x for x in runs if x]
    if not got:
        continue
    v = {k: median_of([x.get(k) for x in got])
         for k in ("requests", "cpu_us_per_request", "worker_cpu_us_per_request",
                   "sleeps_per_request", "rate_sent_per_s")}
    v["cpu_us_per_request_rounds"] = [x and x["cpu_us_per_request"] for x in runs]
    if name.startswith("punctual"):
        v["send_lag_us"] = {"50": median_of([x["send_lag_p50_us"] for x in got]),
                            "99": median_of([x["send_lag_p99_us"] for x in got])}
    v["wire"] = None if name.startswith("floor") else wire_of(
        "s1_wire_" + ("h2load" if name == "h2load" else name.split()[-1]))
    tools[name] = v
ref = tools.get("h2load")
for name, v in tools.items():
    v["cpu_ratio_to_h2load"] = round_ratio(name, "h2load")
    v["cpu_ratio_to_floor"] = (round_ratio(name, "floor " + name.split()[-1])
                               if name.startswith("punctual") else None)
    if name == "punctual coarse":
        v["cpu_ratio_to_stamped_floor"] = round_ratio(name, "floor stamped")
    for p in ("50", "99"):
        mine = v["wire"] and v["wire"]["abs_gap_error_us"][p]
        theirs = ref and ref["wire"] and ref["wire"]["abs_gap_error_us"][p]
        v[f"wire_error_p{p}_ratio_to_h2load"] = ratio(mine, theirs)
# The coarse floor against itself, round by round (A/A): how far the host's drift alone moves a
# ratio taken within one round. A ratio to the floor nearer its target than this spread is not
# resolved by one run.
floor_aa = {"median": round_ratio("floor again", "floor coarse"),
            "rounds": [ratio(x and x["cpu_us_per_request"], y and y["cpu_us_per_request"])
                       for x, y in zip(per_round["floor again"], per_round["floor coarse"])]}

# ---- section 2
ladder = []
for line in (read("s2_ladder.txt") or "").splitlines():
    r, verdict, f, load, stolen, others, server, *why = line.split(" ", 7)
    d = load_json(os.path.basename(f))
    ladder.append({"rate": int(r), "pass": verdict == "pass", "loadavg_1min_after": float(load),
                   "steal_ms": int(stolen), "other_processes_cpu_ms": int(others),
                   "nginx_busy_share": int(server) / 1000,
                   "void": verdict == "void",
                   "failed_criteria": why[0].strip() if why and why[0].strip() else None,
                   "send_lag_p99_us": us(pct(d["latency"]["send_lag"], "99")) if d else None,
                   "queue_wait_p99_us": us(pct(d["latency"]["queue_wait"], "99")) if d else None,
                   "dropped": d["outcomes"]["dropped"] if d else None,
                   "rate_sent_per_s": d["rates_per_s"]["sent"] if d else None})
passed = [s["rate"] for s in ladder if s["pass"]]
failed = [s["rate"] for s in ladder if not s["pass"] and not s["void"]]
m = re.search(r"Requests/sec:\s+([\d.]+)", read("s2_wrk.out") or "")
wrk_rate = float(m.group(1)) if m else None
wrk_server_ms = (read("s2_wrk_server_ms") or "").split()
wrk_server_share = (int(wrk_server_ms[0]) / max(int(wrk_server_ms[1]), 1)
                    if len(wrk_server_ms) == 2 else None)
p_max = max(passed) if passed else None


def ceiling_of(rate, share):
    """The rate at which nginx would be busy all the time at the CPU per request it spent."""
    return rate / share if rate and share and share > 0 else None


# The server's ceiling: the highest of those rates over wrk's run and every step that was not
# void. No tool gets more answers than nginx gives, so a goal ratio above ceiling / wrk is out of
# every tool's reach in this run at that CPU per request (an estimate: it moves with the traffic).
ceilings = [ceiling_of(wrk_rate, wrk_server_share)] + [
    ceiling_of(s["rate_sent_per_s"], s["nginx_busy_share"]) for s in ladder if not s["void"]]
ceilings = [c for c in ceilings if c]
server_ceiling = max(ceilings) if ceilings else None
goal_ratio = 1.2
max_rate = {
    "punctual_max_open_rate": p_max,
    "lowest_failed_rate": min(failed) if failed else None,
    "wrk_closed_loop_rate": wrk_rate,
    "ratio_to_wrk": ratio(p_max, wrk_rate),
    # nginx's CPU time over wrk's run's wall time: near 1, wrk's rate is the server's own
    # limit, and a ratio well above 1 is out of every tool's reach.
    "wrk_nginx_busy_share": wrk_server_share,
    "server_bound": wrk_server_share is not None and wrk_server_share >= 0.95,
    "server_ceiling_rate": server_ceiling,
    "ceiling_ratio_to_wrk": ratio(server_ceiling, wrk_rate),
    "punctual_share_of_ceiling": ratio(p_max, server_ceiling),
    "goal_ratio": goal_ratio,
    # None when the ceiling is unknown; False when no tool could pass goal_ratio x wrk here.
    "goal_reachable": (None if server_ceiling is None or not wrk_rate
                       else server_ceiling >= goal_ratio * wrk_rate),
    "void": any(s["void"] for s in ladder),
    "ladder": ladder,
}

# ---- sections 3 and 4
d3, t3 = load_json("s3_floor.json"), time_of("s3_floor")
floor = None
if d3:
    rt, st = d3["latency"]["response_time"], d3["latency"]["service_time"]
    rt50, rt99, st50 = us(pct(rt, "50")), us(pct(rt, "99")), us(pct(st, "50"))
    floor = {"response_time_us": {"50": rt50, "99": rt99},
             "service_time_us": {"50": st50, "99": us(pct(st, "99"))},
             "send_lag_us": {"50": us(pct(d3["latency"]["send_lag"], "50")),
                             "99": us(pct(d3["latency"]["send_lag"], "99"))},
             "response_over_service_p50": ratio(rt50, st50),
             "target_p50_within_2x_service": (rt50 <= 2 * st50) if rt50 and st50 else None,
             "target_p99_under_1ms": (rt99 < 1000.0) if rt99 is not None else None,
             "precision": d3["model"].get("precision")}
t4 = time_of("s4_long")
memory = {"short_run_s": dur, "long_run_s": long_dur,
          "max_rss_kib_short": t3 and t3["max_rss_kib"],
          "max_rss_kib_long": t4 and t4["max_rss_kib"],
          "ratio_long_to_short": ratio(t4 and t4["max_rss_kib"], t3 and t3["max_rss_kib"])}

# ---- section 5
def floor_report(name):
    try:
        return json.loads(read(name + ".out") or "")
    except ValueError:
        return None


def s5_run(name, kind):
    """One run of section 5: requests completed and CPU per request, as section 1 counts them."""
    t, extra, n = time_of(name), {}, None
    if kind == "punctual":
        d = load_json(name + ".json")
        if d:
            n = punctual_requests(d)
            extra["send_lag_p99_us"] = us(pct(d["latency"]["send_lag"], "99"))
            tls = d.get("tls") or {}
            if tls.get("handshakes"):
                extra["resumed_share"] = tls["resumed"] / tls["handshakes"]
    elif kind == "h2load":
        n = h2load_requests(read(name + ".out"))
    else:
        f = floor_report(name)
        if f and f["completed"]:
            n = f["completed"]
            extra = {"sleeps_per_request": f["sleeps"] / n, "failed": f["failed"],
                     "resumed_share": f["resumed"] / f["connections"]}
    if not t or not n:
        return None
    return dict(extra, requests=n, cpu_us_per_request=cpu_per_request(t, n),
                rate_sent_per_s=n / dur)


def s5_rounds(names):
    return {name: [s5_run(f"{prefix}_r{r}", kind) for r in rounds]
            for name, (prefix, kind) in names.items()}


def s5_ratio(runs, a, b):
    """The median over rounds of a's CPU per request over b's in the same round."""
    if a not in runs or b not in runs:
        return None
    return median_of([ratio(x and x["cpu_us_per_request"], y and y["cpu_us_per_request"])
                      for x, y in zip(runs[a], runs[b])])


def s5_tools(runs):
    out = {}
    for name, got in runs.items():
        ok = [x for x in got if x]
        if ok:
            out[name] = {k: median_of([x.get(k) for x in ok]) for k in sorted(set().union(*ok))}
            out[name]["cpu_us_per_request_rounds"] = [x and x["cpu_us_per_request"] for x in got]
    return out


https = None
if "5" in sections:
    ka_runs = s5_rounds({"punctual coarse": ("s5_ka_punctual_coarse", "punctual"),
                         "punctual fine": ("s5_ka_punctual_fine", "punctual"),
                         "h2load": ("s5_ka_h2load", "h2load"),
                         "floor coarse": ("s5_ka_floor_coarse", "floor"),
                         "floor fine": ("s5_ka_floor_fine", "floor")})
    ka = s5_tools(ka_runs)
    for name, v in ka.items():
        v["cpu_ratio_to_h2load"] = s5_ratio(ka_runs, name, "h2load")
        v["cpu_ratio_to_floor"] = (s5_ratio(ka_runs, name, "floor " + name.split()[-1])
                                   if name.startswith("punctual") else None)
    hs_runs = s5_rounds({"punctual": ("s5_hs_punctual", "punctual"),
                         "floor resume": ("s5_hs_floor_resume", "floor"),
                         "floor full": ("s5_hs_floor_full", "floor")})
    hs = s5_tools(hs_runs)
    for name, v in hs.items():
        v["cpu_ratio_to_floor_resume"] = s5_ratio(hs_runs, name, "floor resume")
        v["cpu_ratio_to_floor_full"] = s5_ratio(hs_runs, name, "floor full")
    wire = {}
    for name, f in (("punctual fine", "s5_wire_punctual_fine"), ("floor fine", "s5_wire_floor_fine"),
                    ("h2load", "s5_wire_h2load")):
        w = load_json(f + ".tlswire.json")
        if not w:
            continue
        errors, worst, late = (w.pop(k) for k in ("abs_error_ns", "abs_error_max_ns",
                                                   "lateness_p50_ns"))
        wire[name] = dict(w, abs_error_us={p: us(x) for p, x in errors.items()},
                          abs_error_max_us=us(worst), lateness_p50_us=us(late))
        d = load_json(f + ".json")
        if d:
            n = punctual_requests(d)
        elif name == "floor fine":
            n = (floor_report(f) or {}).get("completed")
        else:
            n = h2load_requests(read(f + ".out"))
        wire[name]["requests_reported_by_tool"] = n
    p99 = {k: v["abs_error_us"]["99"] for k, v in wire.items()}
    precision_ratio = ratio(p99.get("h2load"), p99.get("punctual fine"))
    # The most any generator that sleeps until each deadline could show here.
    floor_precision_ratio = ratio(p99.get("h2load"), p99.get("floor fine"))
    h2out = read("s5_ka_h2load_r1.out") or read("s5_wire_h2load.out") or ""
    seen = {k: (m.group(1).strip() if m else None) for k, m in (
        ("protocol", re.search(r"TLS Protocol: (.+)", h2out)),
        ("cipher", re.search(r"Cipher: (.+)", h2out)),
        ("key_exchange", re.search(r"Server Temp Key: (.+)", h2out)))}
    coarse_x = ka.get("punctual coarse", {}).get("cpu_ratio_to_h2load")
    hs_x = hs.get("punctual", {}).get("cpu_ratio_to_floor_resume")
    https = {
        "tls_seen_by_h2load": seen,
        "certificate": "self-signed EC P-256 for IP 127.0.0.1, verified by punctual and the floor",
        "punctual_skipped": (read("s5_punctual_skipped") or "").strip() or None,
        "keepalive": {"rate": rate5, "connections": conns5, "tools": ka,
                      "target_punctual_coarse_cpu_le_1x_h2load":
                          None if coarse_x is None else coarse_x <= 1.0},
        "precision": {"rate": rate5, "connections": conns5, "tools": wire,
                      "h2load_p99_over_punctual_fine_p99": precision_ratio,
                      "h2load_p99_over_floor_fine_p99": floor_precision_ratio,
                      "target_punctual_fine_10x_more_precise":
                          None if precision_ratio is None else precision_ratio >= 10},
        "handshake": {"rate": rate5h, "connections": conns5h, "tools": hs,
                      "target_punctual_cpu_le_1_2x_floor_resume":
                          None if hs_x is None else hs_x <= 1.2},
    }

result = {
    "bench": {"timestamp": stamp, "quick": quick == "1", "duration_s": dur,
              "long_duration_s": long_dur, "punctual": punctual, "sections": sections,
              "versions": (read("versions.txt") or "").strip().splitlines(),
              "nproc": os.cpu_count(),
              "loadavg_start": (read("loadavg_start") or "").split()[:3],
              "loadavg_end": (read("loadavg_end") or "").split()[:3]},
}
if "1" in sections:
    result["cpu_and_precision"] = {"rate": rate1, "connections": conns1, "reference": "h2load",
                                   "tools": tools, "floor_aa": floor_aa}
if "2" in sections:
    result["max_rate"] = dict(max_rate, connections=conns1, max_queue=int(max_queue))
if "3" in sections:
    result["latency_floor"] = dict(floor or {}, rate=rate3, connections=conns3)
if "4" in sections:
    result["memory"] = memory
if https:
    result["https"] = https
with open(out_json, "w") as f:
    json.dump(result, f, indent=1)


def fmt(v, spec=".1f", none="-"):
    return none if v is None else format(v, spec)


print(f"\npunctual bench {stamp} ({'QUICK' if quick == '1' else 'full'}; runs of {dur}s; "
      f"load average at start {' '.join(result['bench']['loadavg_start'])})")
if "1" in sections:
    print(f"\n1. {rate1} req/s, {conns1} connections: CPU per request and send precision "
          f"(ratios against h2load; CPU: median of {cpu_rounds} rounds, ratios: median of the "
          "per-round ratios)")
    hdr = (f"{'tool':16} {'CPU us/req':>10} {'rounds':>17} {'x h2load':>8} {'x floor':>7} "
           f"{'worker us/req':>13} {'sleeps/req':>10} {'sent/s':>8}")
    print(hdr)
    print("-" * len(hdr))
    for name, v in tools.items():
        spread = "/".join(fmt(x, ".1f") for x in v["cpu_us_per_request_rounds"])
        print(f"{name:16} {fmt(v['cpu_us_per_request'], '.2f'):>10} {spread:>17} "
              f"{fmt(v['cpu_ratio_to_h2load'], '.2f'):>8} {fmt(v['cpu_ratio_to_floor'], '.2f'):>7} "
              f"{fmt(v.get('worker_cpu_us_per_request'), '.2f'):>13} "
              f"{fmt(v.get('sleeps_per_request'), '.3f'):>10} {fmt(v['rate_sent_per_s'], '.0f'):>8}")
    stamped = tools.get("punctual coarse", {}).get("cpu_ratio_to_stamped_floor")
    print(f"   punctual coarse over the floor with receive stamps (floor stamped): {fmt(stamped, '.2f')}")
    print(f"   the coarse floor against itself (floor again / floor coarse, same round): median "
          f"{fmt(floor_aa['median'], '.2f')}, rounds "
          + "/".join(fmt(x, '.2f') for x in floor_aa["rounds"]))
    print("   (floor: bench/floor_generator.cpp, the same schedule with only the kernel work any "
          "generator needs:\n    one send and one receive per request, and its sleeps; no parsing or "
          "recording. x floor: punctual's mode over it)")
    print()
    hdr = (f"{'tool':16} {'send_lag p50':>12} {'p99':>8} | {'wire |gap-ideal| p50':>20} {'p99':>8} "
           f"{'x h2load p50':>12} {'p99':>6} | {'wire sched p50':>14} {'p99':>8} {'bursts':>6}")
    print(hdr)
    print("-" * len(hdr))
    for name, v in tools.items():
        if name.startswith("floor"):
            continue  # no send lag, and its wire pattern is not a figure of this bench
        w = v["wire"] or {}
        err = w.get("abs_gap_error_us", {})
        sched = w.get("abs_schedule_error_us", {})
        lag = v.get("send_lag_us", {})
        burst = w.get("burst_share")
        print(f"{name:16} {fmt(lag.get('50')):>12} {fmt(lag.get('99')):>8} | "
              f"{fmt(err.get('50')):>20} {fmt(err.get('99')):>8} "
              f"{fmt(v['wire_error_p50_ratio_to_h2load'], '.2f'):>12} "
              f"{fmt(v['wire_error_p99_ratio_to_h2load'], '.2f'):>6} | "
              f"{fmt(sched.get('50')):>14} {fmt(sched.get('99')):>8} "
              f"{fmt(None if burst is None else 100 * burst, '.0f'):>5}%")
    print(f"   (us. send_lag: punctual's own view. wire: requests seen on lo; |gap-ideal| against "
          f"the ideal gap of {1e6 / rate1:.0f} us;\n    sched: distance from an ideal grid at the "
          "nominal rate, constant offset removed; bursts: share of gaps under 10 us)")
if "2" in sections:
    print(f"\n2. maximum rate, {conns1} connections: punctual open loop (send lag p99 < 1 ms, "
          f"no drops, sent >= 99% of planned, queue {'unbounded' if int(max_queue) == 0 else '<= ' + max_queue}) "
          "vs wrk closed loop")
    for s in ladder:
        print(f"   -R {s['rate']}: {'pass' if s['pass'] else 'VOID' if s['void'] else 'FAIL'} (lag p99 "
              f"{fmt(s['send_lag_p99_us'])} us, queue wait p99 {fmt(s['queue_wait_p99_us'])} us, "
              f"sent {fmt(s['rate_sent_per_s'], '.0f')}/s, nginx busy {100 * s['nginx_busy_share']:.0f}%, "
              f"load average {s['loadavg_1min_after']}, steal {s['steal_ms']} ms, other processes "
              f"on the two CPUs {s['other_processes_cpu_ms']} ms)"
              + ("" if not s.get("failed_criteria") else
                 f": {s['failed_criteria']}" if s["void"] else f": failed {s['failed_criteria']}"))
    if p_max is None and failed:
        print(f"   no step passed; the lowest tried was {min(failed)} req/s")
    share = max_rate["wrk_nginx_busy_share"]
    print(f"   punctual {fmt(p_max, '.0f')} req/s, wrk {fmt(wrk_rate, '.0f')} req/s, "
          f"ratio {fmt(max_rate['ratio_to_wrk'], '.2f')}"
          + ("  (the ladder ended on a step the host stole from: a lower bound at most)"
             if max_rate["void"] else ""))
    if share is not None:
        print(f"   nginx was busy {100 * share:.0f}% of wrk's run"
              + (": wrk's rate is the server's limit, and no open-loop tool passes much more"
                 if max_rate["server_bound"] else ""))
    if server_ceiling:
        share_of = max_rate["punctual_share_of_ceiling"]
        reach = ("within reach" if max_rate["goal_reachable"]
                 else "out of every tool's reach at nginx's CPU per request in this run")
        print(f"   server ceiling ~{server_ceiling:.0f} req/s (nginx busy all the time at its CPU "
              f"per request), {fmt(max_rate['ceiling_ratio_to_wrk'], '.2f')} x wrk; punctual "
              f"reached {fmt(share_of and 100 * share_of, '.0f')}% of it; {goal_ratio} x wrk was "
              f"{reach}")
if floor:
    print(f"\n3. latency floor at {rate3} req/s, {conns3} connections ({floor['precision']})")
    print(f"   response time p50 {fmt(floor['response_time_us']['50'])} us, "
          f"p99 {fmt(floor['response_time_us']['99'])} us; service time p50 "
          f"{fmt(floor['service_time_us']['50'])} us; p50 ratio "
          f"{fmt(floor['response_over_service_p50'], '.2f')} "
          f"(target <= 2: {floor['target_p50_within_2x_service']}); "
          f"p99 < 1 ms: {floor['target_p99_under_1ms']}")
if "4" in sections:
    print(f"\n4. memory at {rate3} req/s: max RSS {fmt(memory['max_rss_kib_long'], 'd')} KiB after "
          f"{long_dur}s vs {fmt(memory['max_rss_kib_short'], 'd')} KiB after {dur}s, ratio "
          f"{fmt(memory['ratio_long_to_short'], '.2f')}\n")
if https:
    print(f"\n5. HTTPS: {' / '.join(v for v in https['tls_seen_by_h2load'].values() if v) or '-'} "
          f"(as h2load saw it); {https['certificate']}")
    if https["punctual_skipped"]:
        print(f"   {https['punctual_skipped']}")
    ka = https["keepalive"]["tools"]
    print(f"   keep-alive, {rate5} req/s over {conns5} connections: CPU per request (median of "
          f"{cpu_rounds} rounds; ratios: median of the per-round ratios)")
    hdr = (f"   {'tool':16} {'CPU us/req':>10} {'rounds':>17} {'x h2load':>8} {'x floor':>7} "
           f"{'sent/s':>8}")
    print(hdr)
    print("   " + "-" * (len(hdr) - 3))
    for name in ("punctual coarse", "punctual fine", "h2load", "floor coarse", "floor fine"):
        v = ka.get(name)
        if not v:
            print(f"   {name:16} {'-':>10}")
            continue
        spread = "/".join(fmt(x, ".1f") for x in v["cpu_us_per_request_rounds"])
        print(f"   {name:16} {fmt(v['cpu_us_per_request'], '.2f'):>10} {spread:>17} "
              f"{fmt(v['cpu_ratio_to_h2load'], '.2f'):>8} {fmt(v['cpu_ratio_to_floor'], '.2f'):>7} "
              f"{fmt(v['rate_sent_per_s'], '.0f'):>8}")
    print(f"   target punctual coarse <= 1.0 x h2load: "
          f"{fmt(https['keepalive']['target_punctual_coarse_cpu_le_1x_h2load'], '')}")
    pr = https["precision"]
    print(f"   precision on the wire, {rate5} req/s over {conns5} connections: |request on lo - "
          "its ideal time|, us")
    hdr = (f"   {'tool':16} {'ideal':>10} {'requests':>9} {'kept':>7} {'p50':>8} {'p90':>8} "
           f"{'p99':>8} {'p99.9':>8} {'max':>8}")
    print(hdr)
    print("   " + "-" * (len(hdr) - 3))
    for name in ("punctual fine", "floor fine", "h2load"):
        w = pr["tools"].get(name)
        if not w:
            print(f"   {name:16} {'-':>10}")
            continue
        e = w["abs_error_us"]
        print(f"   {name:16} {w['ideal']:>10} {w['requests_on_wire']:>9} {w['kept']:>7} "
              f"{fmt(e['50']):>8} {fmt(e['90']):>8} {fmt(e['99']):>8} {fmt(e['99.9']):>8} "
              f"{fmt(w['abs_error_max_us']):>8}")
    print(f"   (schedule: the i-th request against the run's start + i/{rate5} s, nothing fitted; "
          f"fitted: the same after\n    the median offset; per-client: each connection's j-th "
          f"request against j/{rate5 // conns5} s after its own median\n    offset. All without "
          "the first and last 500 ms)")
    print(f"   h2load p99 / punctual fine p99: "
          f"{fmt(pr['h2load_p99_over_punctual_fine_p99'], '.1f')}; "
          f"target >= 10: {fmt(pr['target_punctual_fine_10x_more_precise'], '')}; "
          f"h2load p99 / floor fine p99 (the most a sleeping generator shows here): "
          f"{fmt(pr['h2load_p99_over_floor_fine_p99'], '.1f')}")
    hs = https["handshake"]["tools"]
    print(f"   one TLS connection per request (--no-keepalive), {rate5h} req/s, at most "
          f"{conns5h} open: CPU per request")
    hdr = (f"   {'tool':16} {'CPU us/req':>10} {'rounds':>17} {'x resume':>8} {'x full':>7} "
           f"{'resumed':>7} {'sent/s':>8}")
    print(hdr)
    print("   " + "-" * (len(hdr) - 3))
    for name in ("punctual", "floor resume", "floor full"):
        v = hs.get(name)
        if not v:
            print(f"   {name:16} {'-':>10}")
            continue
        spread = "/".join(fmt(x, ".0f") for x in v["cpu_us_per_request_rounds"])
        share = v.get("resumed_share")
        print(f"   {name:16} {fmt(v['cpu_us_per_request'], '.1f'):>10} {spread:>17} "
              f"{fmt(v['cpu_ratio_to_floor_resume'], '.2f'):>8} "
              f"{fmt(v['cpu_ratio_to_floor_full'], '.2f'):>7} "
              f"{fmt(None if share is None else 100 * share, '.0f'):>6}% "
              f"{fmt(v['rate_sent_per_s'], '.0f'):>8}")
    print(f"   target punctual <= 1.2 x floor resume: "
          f"{fmt(https['handshake']['target_punctual_cpu_le_1_2x_floor_resume'], '')}")
    print("   (floor resume / full: bench/floor_generator.cpp --tls --no-keepalive with and "
          "without --resume;\n    resumed: share of its handshakes the server resumed)\n")
EOF
log "results written to $out_json"
