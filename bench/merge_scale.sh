#!/usr/bin/env bash
# What `punctual merge DIR/*.json -o merged.json` costs as the shards of a distributed run grow
# in number and in length: its wall time and its peak memory (`/usr/bin/time -v`, "Maximum
# resident set size") for N = 1, 4, 16, 64 shards of a 10-minute run, and for one N at several
# run lengths (docs/distributed.md, "What a merge costs").
#
# The shards are synthesised, not run: one real, short distributed run (2 shards of
# `punctual run -t1 -c4 -R 2000 -d 3s --shard I/2 --start-at T --out-dir DIR` against
# `punctual serve`) gives a valid JSON report and .hlog, and bench/make_shards.py stretches them
# to N shards of RATE req/s for SECONDS s: exact per-second counts of the plan (request i to
# shard i mod N), the template's histograms reused second after second. Each merge must not be
# refused (exit 0, 3 or 4), and its merged planned must equal RATE x SECONDS. A length the merge
# refuses (exit 2) is recorded with its one-line reason, and then the N series is measured again
# at FALLBACK_SECONDS.
#
# It prints a table and writes bench/results/merge-scale-<UTC timestamp>.json. The shards are
# written under /tmp and deleted after each merge (N = 64 at 600 s is ~190 MB). Merges run one at
# a time; the whole bench takes a minute or two on 2 CPUs. Not part of the test suite.
#
# Usage: bench/merge_scale.sh
# Environment (all optional):
#   PUNCTUAL=path          the binary (default build/punctual; this script builds nothing)
#   SHARDS="1 4 16 64"     the shard counts
#   SECONDS_RUN=600        the run length of the N series, in seconds
#   FALLBACK_SECONDS=240   the N series again at this length if the merge refused SECONDS_RUN
#                          (0: do not)
#   LENGTH_SHARDS=16       the N of the length series ...
#   LENGTHS="60 120 240"   ... and its lengths, in seconds (empty: no length series)
#   RATE=20000             the global plan's req/s
#   RESULTS_DIR=dir        where merge-scale-<timestamp>.json goes (default bench/results)
#   KEEP_RAW=1             keep the template and the merges' outputs in the scratch dir
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/.." && pwd)

PUNCTUAL=${PUNCTUAL:-$repo/build/punctual}
shards_list=${SHARDS:-1 4 16 64}
seconds_run=${SECONDS_RUN:-600}
fallback_seconds=${FALLBACK_SECONDS:-240}
length_shards=${LENGTH_SHARDS:-16}
lengths=${LENGTHS-60 120 240}
rate=${RATE:-20000}
results_dir=${RESULTS_DIR:-$here/results}

log() { printf '[merge-scale %(%H:%M:%S)T] %s\n' -1 "$*" >&2; }
die() { log "error: $*"; exit 1; }

[[ -x $PUNCTUAL ]] || die "punctual binary not found: $PUNCTUAL (build it, or set PUNCTUAL)"
PUNCTUAL=$(cd "$(dirname "$PUNCTUAL")" && pwd)/$(basename "$PUNCTUAL")
command -v python3 >/dev/null || die "python3 is required"
[[ -x /usr/bin/time ]] || die "/usr/bin/time is required (Debian: time)"

raw=$(mktemp -d /tmp/punctual-merge-scale.XXXXXX)
serve_pid=""
cleanup() {
  if [[ -n $serve_pid ]]; then
    kill "$serve_pid" 2>/dev/null || true
    wait "$serve_pid" 2>/dev/null || true
  fi
  if [[ ${KEEP_RAW:-0} == 1 ]]; then log "raw outputs kept in $raw"; else rm -rf "$raw"; fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# ---------------------------------------------------------------- the template: one real run
"$PUNCTUAL" serve --port 0 --duration 60s >"$raw/serve.out" 2>&1 &
serve_pid=$!
port=""
for _ in $(seq 50); do
  port=$(sed -n 's/^listening on 127\.0\.0\.1:\([0-9]*\)$/\1/p' "$raw/serve.out")
  [[ -n $port ]] && break
  kill -0 "$serve_pid" 2>/dev/null || break
  sleep 0.1
done
[[ -n $port ]] || { cat "$raw/serve.out" >&2; die "punctual serve did not start"; }
start_at=$(( $(date +%s) + 2 ))
log "template: 2 shards of run -t1 -c4 -R 2000 -d 3s --start-at $start_at against serve on :$port"
pids=()
for i in 0 1; do
  "$PUNCTUAL" run -t1 -c4 -R 2000 -d 3s --shard "$i/2" --start-at "$start_at" \
    --out-dir "$raw/template" -q "http://127.0.0.1:$port/" >"$raw/template-$i.out" 2>&1 &
  pids+=($!)
done
for i in 0 1; do
  rc=0
  wait "${pids[$i]}" || rc=$?
  # 3 and 4 are verdicts (a 3 s shard has too few samples beyond p99), not failures.
  if [[ $rc != 0 && $rc != 3 && $rc != 4 ]]; then
    tail -n 5 "$raw/template-$i.out" >&2
    die "template shard $i exited $rc"
  fi
done
kill "$serve_pid" 2>/dev/null || true
wait "$serve_pid" 2>/dev/null || true
serve_pid=""

# ---------------------------------------------------------------- one merge, measured
: >"$raw/rows.jsonl"
# measure SERIES N SECONDS: synthesise, merge under /usr/bin/time -v, append one row, clean up.
# Echoes the merge's exit code.
measure() {
  local series=$1 n=$2 secs=$3
  local dir=$raw/shards-$n-$secs
  python3 "$here/make_shards.py" "$raw/template" "$dir" --shards "$n" --rate "$rate" \
    --seconds "$secs" >/dev/null
  local bytes
  bytes=$(cat "$dir"/shard-*.json "$dir"/shard-*.hlog | wc -c)
  local rc=0
  /usr/bin/time -v "$PUNCTUAL" merge "$dir"/shard-*.json -o "$dir/merged.json" \
    >"$dir/merge.out" 2>"$dir/merge.err" || rc=$?
  python3 - "$dir" "$series" "$n" "$secs" "$rate" "$bytes" "$rc" >>"$raw/rows.jsonl" <<'EOF'
import json, os, re, sys
d, series, n, secs, rate, nbytes, rc = sys.argv[1:]
n, secs, rate, nbytes, rc = int(n), int(secs), int(rate), int(nbytes), int(rc)
err = open(os.path.join(d, "merge.err")).read()
def field(label):
    m = re.search(r"^\s*" + re.escape(label) + r": (.*)$", err, re.M)
    return m.group(1).strip() if m else None
wall = field("Elapsed (wall clock) time (h:mm:ss or m:ss)")
parts = [float(p) for p in wall.split(":")]
wall_s = sum(p * 60 ** (len(parts) - 1 - i) for i, p in enumerate(parts))
row = {"series": series, "shards": n, "seconds": secs, "rate": rate, "files_bytes": nbytes,
       "exit_code": rc, "wall_s": wall_s, "user_s": float(field("User time (seconds)")),
       "sys_s": float(field("System time (seconds)")),
       "max_rss_kb": int(field("Maximum resident set size (kbytes)")),
       "expected_planned": rate * secs, "merged_planned": None, "merged_rows": None,
       "refused": None}
if rc in (0, 3, 4):
    m = json.load(open(os.path.join(d, "merged.json")))
    row["merged_planned"] = m["schedule"]["planned"]
    rows = m["series"]["per_second"]
    row["merged_rows"] = len(rows)
    row["rows_planned_ok"] = all(r["planned"] == rate for r in rows) and len(rows) == secs
    # Exit 4 is the merged verdict on synthetic data (e.g. the template's few samples per
    # second against R/N planned), not a refusal: the gating checks that failed say which.
    row["failed_gating"] = [c["name"] for c in m["validity"]["checks"]
                            if c["level"] == "gating" and not c["pass"]]
else:
    row["refused"] = next((l for l in err.splitlines() if l.startswith("punctual:")), err[:300])
print(json.dumps(row))
EOF
  if [[ ${KEEP_RAW:-0} == 1 ]]; then rm -f "$dir"/shard-*; else rm -rf "$dir"; fi
  echo "$rc"
}

# ---------------------------------------------------------------- the series
loadavg_start=$(cut -d' ' -f1-3 /proc/loadavg)
refused=0
for n in $shards_list; do
  log "merge of $n shards x ${seconds_run}s at $rate req/s"
  rc=$(measure shards "$n" "$seconds_run")
  [[ $rc == 2 ]] && refused=1
done
if [[ $refused == 1 && $fallback_seconds != 0 ]]; then
  log "the merge refused ${seconds_run}s shards: the N series again at ${fallback_seconds}s"
  for n in $shards_list; do
    log "merge of $n shards x ${fallback_seconds}s at $rate req/s"
    measure shards_fallback "$n" "$fallback_seconds" >/dev/null
  done
fi
for secs in $lengths; do
  log "merge of $length_shards shards x ${secs}s at $rate req/s"
  measure length "$length_shards" "$secs" >/dev/null
done
loadavg_end=$(cut -d' ' -f1-3 /proc/loadavg)

# ---------------------------------------------------------------- the result file and the table
mkdir -p "$results_dir"
stamp=$(date -u +%Y%m%dT%H%M%SZ)
out_json=$results_dir/merge-scale-$stamp.json
python3 - "$raw/rows.jsonl" "$out_json" "$stamp" "$PUNCTUAL" "$loadavg_start" "$loadavg_end" <<'EOF'
import json, os, sys
rows_path, out_json, stamp, punctual, load_start, load_end = sys.argv[1:]
rows = [json.loads(l) for l in open(rows_path) if l.strip()]
ok = [r for r in rows if r["refused"] is None]
checks = {
    "merged_planned_is_the_sum": all(r["merged_planned"] == r["expected_planned"] for r in ok),
    "rows_planned_is_the_rate": all(r.get("rows_planned_ok") for r in ok),
}
result = {
    "bench": {"kind": "merge_scale", "timestamp": stamp, "punctual": punctual,
              "template": "2 shards of punctual run -t1 -c4 -R 2000 -d 3s --shard I/2 "
                          "--start-at T against punctual serve, stretched by bench/make_shards.py",
              "loadavg_start": load_start.split(), "loadavg_end": load_end.split(),
              "nproc": os.cpu_count()},
    "rows": rows,
    "checks": checks,
    "pass": bool(ok) and all(checks.values()),
}
with open(out_json, "w") as f:
    json.dump(result, f, indent=1)
    f.write("\n")
print(f"\npunctual merge scale {stamp} (load average {load_start} -> {load_end})")
print(f"{'series':<16}{'N':>4}{'seconds':>9}{'files MB':>10}{'exit':>6}{'wall s':>9}"
      f"{'user s':>8}{'sys s':>8}{'max RSS MB':>12}{'merged planned':>16}")
for r in rows:
    planned = f"{r['merged_planned']:,}" if r["merged_planned"] is not None else "-"
    print(f"{r['series']:<16}{r['shards']:>4}{r['seconds']:>9}{r['files_bytes'] / 1e6:>10.1f}"
          f"{r['exit_code']:>6}{r['wall_s']:>9.2f}{r['user_s']:>8.2f}{r['sys_s']:>8.2f}"
          f"{r['max_rss_kb'] / 1024:>12.1f}{planned:>16}")
for r in rows:
    if r["refused"]:
        print(f"refused ({r['shards']} x {r['seconds']}s): {r['refused']}")
    elif r.get("failed_gating"):
        print(f"exit {r['exit_code']} ({r['shards']} x {r['seconds']}s) is the merged verdict: "
              f"{', '.join(r['failed_gating'])} failed")
for name, passed in checks.items():
    print(f"{'PASS' if passed else 'FAIL'}  {name}")
print(f"result written to {out_json}")
sys.exit(0 if result["pass"] else 1)
EOF
