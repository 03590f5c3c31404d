#!/usr/bin/env bash
# Cross-checks punctual's interval logs against hdr-histogram-js, an independent implementation:
# the same file must give the same count, min, max and percentiles (and the mean to 1e-9).
# A log written by `punctual run` must also agree with that run's JSON report (check_run_log.js).
# The Kubernetes manifests (`punctual k8s-manifest`, deploy/kubernetes/) must be valid to
# kubernetes-models, which validates against the Kubernetes API's schemas (check_k8s.js).
#
# usage: bash tests/interop/run.sh BUILD_DIR PUNCTUAL_BINARY
#   BUILD_DIR receives node_modules (hdr-histogram-js, kubernetes-models and js-yaml, pinned in
#   package.json) and scratch files.
set -euo pipefail

if [[ $# -ne 2 ]]; then
  echo "usage: $0 BUILD_DIR PUNCTUAL_BINARY" >&2
  exit 2
fi
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
data="$here/../data/hdrhistogram"
mkdir -p "$1"
build="$(cd "$1" && pwd)"
punctual="$(cd "$(dirname "$2")" && pwd)/$(basename "$2")"
[[ -x "$punctual" ]] || { echo "interop: $2 is not an executable" >&2; exit 2; }

# Installs again when any pinned dependency is missing or at another version.
stale="$(node -p "Object.entries(require('$here/package.json').dependencies).filter(([name, pinned]) => {
  try { return require('$build/node_modules/' + name + '/package.json').version !== pinned; }
  catch (e) { return true; }
}).map(([name]) => name).join(' ')")"
if [[ -n "$stale" ]]; then
  cp "$here/package.json" "$build/package.json"
  npm install --prefix "$build" --no-audit --no-fund --loglevel=error >&2
fi
export NODE_PATH="$build/node_modules"

work="$build/work"
rm -rf "$work"
mkdir -p "$work"

# A second log written by hdr-histogram-js: other histogram parameters than the golden log,
# a tagged stream, a fourth second, and counts above 2^32.
node - "$work/second.hlog" <<'JS'
const fs = require('fs');
const hdr = require('hdr-histogram-js');
const lines = [
  '#[written by hdr-histogram-js for the punctual interop check]',
  '#[Histogram log format version 1.3]',
  '#[StartTime: 1700000000.000 (seconds since epoch), Tue Nov 14 22:13:20 UTC 2023]',
  '#[BaseTime: 1700000000.000 (seconds since epoch)]',
  '"StartTimestamp","Interval_Length","Interval_Max","Interval_Compressed_Histogram"',
];
for (let second = 0; second < 4; second++) {
  const rt = hdr.build({ bitBucketSize: 64, lowestDiscernibleValue: 1,
                         highestTrackableValue: 60000000, numberOfSignificantValueDigits: 2 });
  const st = hdr.build({ bitBucketSize: 64, lowestDiscernibleValue: 1000,
                         highestTrackableValue: 3600000000, numberOfSignificantValueDigits: 3 });
  for (let i = 1; i <= 300; i++) {
    rt.recordValue(700 + ((i * 7919 + second * 104729) % 40000000));
    st.recordValue(2000 + ((i * 15485863) % 900000000));
  }
  rt.recordValueWithCount(450 + second, 5000000000);
  for (const [tag, h] of [[null, rt], ['service_time', st]]) {
    const prefix = tag === null ? '' : `Tag=${tag},`;
    const max = (h.maxValue / 1000).toFixed(3);
    lines.push(`${prefix}${second}.000,1.000,${max},${hdr.encodeIntoCompressedBase64(h)}`);
  }
}
fs.writeFileSync(process.argv[2], lines.join('\n') + '\n');
JS

"$punctual" merge "$data/three-intervals.hlog" "$data/three-intervals.canonical.hlog" \
  -o "$work/golden-twice.hlog" >/dev/null
"$punctual" merge "$data/three-intervals.hlog" "$work/second.hlog" \
  -o "$work/mixed.hlog" >/dev/null

passed=0
failed=0
check() {  # name file [--tag T]
  local name="$1" file="$2"
  shift 2
  local ours theirs verdict
  if ! ours="$("$punctual" report "$file" "$@" --json - 2>/dev/null)"; then
    echo "FAIL $name: punctual report failed" >&2
    failed=$((failed + 1))
    return
  fi
  if ! theirs="$(node "$here/check_hlog.js" "$file" "$@")"; then
    echo "FAIL $name: check_hlog.js failed" >&2
    failed=$((failed + 1))
    return
  fi
  verdict="$(node - "$ours" "$theirs" <<'JS'
const [ours, theirs] = process.argv.slice(2).map((s) => JSON.parse(s));
const problems = [];
for (const key of ['count', 'min', 'max', 'intervals']) {
  if (ours[key] !== theirs[key]) problems.push(`${key} ${ours[key]} != ${theirs[key]}`);
}
for (const p of Object.keys(theirs.percentiles)) {
  if (ours.percentiles[p] !== theirs.percentiles[p]) {
    problems.push(`p${p} ${ours.percentiles[p]} != ${theirs.percentiles[p]}`);
  }
}
if (!(Math.abs(ours.mean - theirs.mean) <= 1e-9 * Math.abs(theirs.mean))) {
  problems.push(`mean ${ours.mean} != ${theirs.mean}`);
}
process.stdout.write(problems.length === 0 ? 'ok' : problems.join('; '));
JS
)"
  if [[ "$verdict" == "ok" ]]; then
    echo "ok   $name"
    passed=$((passed + 1))
  else
    echo "FAIL $name: $verdict" >&2
    failed=$((failed + 1))
  fi
}

check "golden log (written by hdr-histogram-js)" "$data/three-intervals.hlog"
check "canonical golden log" "$data/three-intervals.canonical.hlog"
check "second log, untagged" "$work/second.hlog"
check "second log, service_time" "$work/second.hlog" --tag service_time
check "punctual merge of the golden log twice" "$work/golden-twice.hlog"
check "punctual merge, mixed parameters, untagged" "$work/mixed.hlog"
check "punctual merge, mixed parameters, service_time" "$work/mixed.hlog" --tag service_time

# A log written by `punctual run` against its own JSON report, decoded by hdr-histogram-js.
# The server's exponential service times spread the samples over many buckets; --duration bounds
# its life even if this script is killed before its trap can run.
serve_pid=""
stop_serve() {
  if [[ -n "$serve_pid" ]]; then
    kill "$serve_pid" 2>/dev/null || true
    wait "$serve_pid" 2>/dev/null || true
    serve_pid=""
  fi
}
trap stop_serve EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
"$punctual" serve --port 0 --service-time exp:2ms --seed 3 --duration 60s \
  >"$work/serve.out" 2>"$work/serve.err" &
serve_pid=$!
port=""
for _ in $(seq 50); do
  port="$(sed -n 's/^listening on 127\.0\.0\.1:\([0-9][0-9]*\)$/\1/p' "$work/serve.out")"
  [[ -n "$port" ]] && break
  kill -0 "$serve_pid" 2>/dev/null || break
  sleep 0.1
done

run_ok=0
if [[ -z "$port" ]]; then
  echo "FAIL punctual run log: punctual serve did not report its port: $(cat "$work/serve.out" "$work/serve.err")" >&2
  failed=$((failed + 1))
else
  run_status=0
  # A request mix too, so each name's Tag=response_time.NAME is checked against by_name.
  printf 'requests:\n  - {name: home, path: /, weight: 3}\n  - {name: item, path: "/item?id=7"}\n' \
    >"$work/mix.yaml"
  timeout 60 "$punctual" run -t2 -c8 -R 1000 -d 3s --hlog "$work/run.hlog" --json "$work/run.json" \
    --requests "$work/mix.yaml" "http://127.0.0.1:$port/" >"$work/run.out" 2>&1 || run_status=$?
  # 4 is an invalid-run verdict, which judges the generator's timing, not what it recorded.
  if [[ $run_status -eq 0 || $run_status -eq 4 ]]; then
    run_ok=1
  else
    echo "FAIL punctual run log: punctual run exited $run_status: $(tail -n 5 "$work/run.out")" >&2
    failed=$((failed + 1))
  fi
fi
# The same mix in two shards started together, and their merge: each shard's log against its
# report, and the log `punctual merge` writes beside the merged report against that report, so
# hdr-histogram-js checks the merge's per-second sums and whole-run histograms alike.
shards_ok=0
if [[ $run_ok -eq 1 ]]; then
  start_at="$(node -p "(Date.now() / 1000 + 1.5).toFixed(3)")"
  shard_pids=()
  for i in 0 1; do
    timeout 60 "$punctual" run -t1 -c4 -R 600 -d 2s --requests "$work/mix.yaml" --shard "$i/2" \
      --start-at "$start_at" --out-dir "$work/shards" -q "http://127.0.0.1:$port/" \
      >"$work/shard-$i.out" 2>&1 &
    shard_pids+=($!)
  done
  shards_ok=1
  for pid in "${shard_pids[@]}"; do
    shard_status=0
    wait "$pid" || shard_status=$?
    [[ $shard_status -eq 0 || $shard_status -eq 4 ]] || shards_ok=0
  done
  merge_status=0
  "$punctual" merge "$work/shards/shard-0-of-2.json" "$work/shards/shard-1-of-2.json" \
    -o "$work/shards/merged.json" >"$work/merge.out" 2>&1 || merge_status=$?
  [[ $merge_status -eq 0 || $merge_status -eq 4 ]] || shards_ok=0
  if [[ $shards_ok -ne 1 ]]; then
    echo "FAIL shards and merge: $(tail -n 3 "$work"/shard-*.out "$work/merge.out")" >&2
    failed=$((failed + 1))
  fi
fi

stop_serve

# Counts the checker's ok/FAIL lines into the totals; a crash of the checker is one more FAIL.
run_log_check() {  # hlog json
  local out status=0 line
  out="$(node "$here/check_run_log.js" "$1" "$2")" || status=$?
  while IFS= read -r line; do
    case "$line" in
      "ok   "*) echo "$line"; passed=$((passed + 1)) ;;
      "FAIL "*) echo "$line" >&2; failed=$((failed + 1)) ;;
    esac
  done <<<"$out"
  if [[ $status -ne 0 && $status -ne 1 ]]; then
    echo "FAIL check_run_log.js $1 $2 exited $status" >&2
    failed=$((failed + 1))
  fi
}

# Negative control: a checker must reject a deliberately altered input (exit 1) with a line that
# names what was altered; otherwise a checker that passes everything would pass unnoticed.
negative_control() {  # name needle command...
  local name="$1" needle="$2" out status=0
  shift 2
  out="$("$@" 2>&1)" || status=$?
  if [[ $status -eq 1 ]] && grep -qF -- "$needle" <<<"$out"; then
    echo "ok   negative control: $name is caught"
    passed=$((passed + 1))
  else
    echo "FAIL negative control: $name is not caught (exit $status): $out" >&2
    failed=$((failed + 1))
  fi
}
expect_caught() {  # name hlog json fail-line-prefix
  negative_control "$1" "FAIL $4" node "$here/check_run_log.js" "$2" "$3"
}

if [[ $shards_ok -eq 1 ]]; then
  for f in shard-0-of-2 shard-1-of-2 merged; do
    run_log_check "$work/shards/$f.hlog" "$work/shards/$f.json"
  done
fi

if [[ $run_ok -eq 1 ]]; then
  run_log_check "$work/run.hlog" "$work/run.json"

  node - "$work/run.json" "$work/bad-count.json" "$work/bad-p99.json" <<'JS'
const fs = require('fs');
const [from, badCount, badP99] = process.argv.slice(2);
const report = JSON.parse(fs.readFileSync(from, 'utf8'));
report.latency.response_time.count += 1;
fs.writeFileSync(badCount, JSON.stringify(report));
report.latency.response_time.count -= 1;
// 1% is many buckets at three significant digits.
const p = report.latency.response_time.percentiles_ns;
p['99'] = Math.round(p['99'] * 1.01) + 1000;
fs.writeFileSync(badP99, JSON.stringify(report));
JS
  # The first Tag=service_time line, and every Tag=queue_wait line.
  awk '/^Tag=service_time,/ && !dropped { dropped = 1; next } { print }' \
    "$work/run.hlog" >"$work/bad-interval.hlog"
  grep -v '^Tag=queue_wait,' "$work/run.hlog" >"$work/bad-tag.hlog"
  grep -v '^Tag=response_time\.item,' "$work/run.hlog" >"$work/bad-name.hlog"
  node -e 'const r = JSON.parse(require("fs").readFileSync(0, "utf8"));
             r.by_name.home.response_time.count += 1; process.stdout.write(JSON.stringify(r));' \
    <"$work/run.json" >"$work/bad-name.json"

  expect_caught "response_time count +1 in the JSON" "$work/run.hlog" "$work/bad-count.json" \
    "run log untagged count"
  expect_caught "one service_time interval dropped from the log" "$work/bad-interval.hlog" \
    "$work/run.json" "run log Tag=service_time count"
  expect_caught "p99 moved by 1% in the JSON" "$work/run.hlog" "$work/bad-p99.json" \
    "run log untagged p99"
  expect_caught "queue_wait missing from the log" "$work/bad-tag.hlog" "$work/run.json" \
    "run log has every measured view"
  expect_caught "a name's intervals missing from the log" "$work/bad-name.hlog" "$work/run.json" \
    "run log has every name of by_name"
  expect_caught "a name's count +1 in the JSON" "$work/run.hlog" "$work/bad-name.json" \
    "run log Tag=response_time.home count"
fi

# Kubernetes manifests: what `punctual k8s-manifest` prints for 3 shards, and the examples.
k8s_valid() {  # name check_k8s.js-args...
  local name="$1" out
  shift
  if out="$(node "$here/check_k8s.js" "$@" 2>&1)"; then
    echo "ok   $name"
    passed=$((passed + 1))
  else
    echo "FAIL $name: $out" >&2
    failed=$((failed + 1))
  fi
}
# The validator must refuse a broken manifest, naming what is wrong.
k8s_rejected() {  # name needle check_k8s.js-args...
  local name="$1" needle="$2"
  shift 2
  negative_control "$name" "$needle" node "$here/check_k8s.js" "$@"
}

deploy="$here/../../deploy/kubernetes"
if "$punctual" k8s-manifest --shards 3 -R 1000 -d 30s http://svc.example:8080/ \
    >"$work/k8s.yaml" 2>"$work/k8s.err"; then
  k8s_valid "k8s-manifest --shards 3: kubernetes-models accepts it" --shards 3 "$work/k8s.yaml"
  sed 's/completionMode: Indexed/completionMode: Bogus/' "$work/k8s.yaml" >"$work/k8s-bogus-mode.yaml"
  k8s_rejected "completionMode Bogus" "completionMode must be equal to one of the allowed values" \
    --shards 3 "$work/k8s-bogus-mode.yaml"
  sed 's/cpu: "2"/cpu: "two"/' "$work/k8s.yaml" >"$work/k8s-bad-cpu.yaml"
  k8s_rejected "cpu quantity 'two'" 'must match format "quantity"' "$work/k8s-bad-cpu.yaml"
  grep -v '^ *image: ' "$work/k8s.yaml" >"$work/k8s-no-image.yaml"
  k8s_rejected "a container without image" "container shard has no image" "$work/k8s-no-image.yaml"
  k8s_rejected "3 shards checked as 2" "parallelism 3 and completions 3, expected 2" \
    --shards 2 "$work/k8s.yaml"
else
  echo "FAIL k8s-manifest --shards 3: exit $?: $(cat "$work/k8s.err")" >&2
  failed=$((failed + 1))
fi
k8s_valid "deploy/kubernetes/shards-job.yaml" --shards 4 "$deploy/shards-job.yaml"
for f in "$deploy"/*.yaml; do
  [[ $(basename "$f") == shards-job.yaml ]] || k8s_valid "deploy/kubernetes/$(basename "$f")" "$f"
done

echo "interop: $passed passed, $failed failed"
[[ $failed -eq 0 ]]
