#!/usr/bin/env bash
# Cross-checks punctual's interval logs against hdr-histogram-js, an independent implementation:
# the same file must give the same count, min, max and percentiles (and the mean to 1e-9).
#
# usage: bash tests/interop/run.sh BUILD_DIR PUNCTUAL_BINARY
#   BUILD_DIR receives node_modules (hdr-histogram-js, pinned in package.json) and scratch files.
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

pinned="$(node -p "require('$here/package.json').dependencies['hdr-histogram-js']")"
installed="$(node -p "try { require('$build/node_modules/hdr-histogram-js/package.json').version } catch (e) { '' }")"
if [[ "$installed" != "$pinned" ]]; then
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

echo "interop: $passed passed, $failed failed"
[[ $failed -eq 0 ]]
