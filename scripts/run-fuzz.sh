#!/usr/bin/env bash
# Runs every libFuzzer target in BUILD_DIR for FUZZ_SECONDS each, seeded from fuzz/corpus/<name>/.
# New inputs go to a scratch directory, so the repository's corpus is never modified.
set -uo pipefail
cd "$(dirname "$0")/.."
build=${1:-build-asan}
seconds=${FUZZ_SECONDS:-10}
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
rc=0
shopt -s nullglob
for src in fuzz/*_fuzz.cpp; do
  name=$(basename "$src" .cpp)
  bin="$build/fuzz/$name"
  corpus="fuzz/corpus/${name%_fuzz}"
  if [[ ! -x $bin ]]; then
    echo "fuzz: $name was not built" >&2
    rc=1
    continue
  fi
  mkdir -p "$scratch/$name"
  seeds=()
  [[ -d $corpus ]] && seeds+=("$corpus")
  if "$bin" -max_total_time="$seconds" -print_final_stats=1 "$scratch/$name" "${seeds[@]}" \
      >"$scratch/$name.log" 2>&1; then
    echo "fuzz: $name ok: $(grep -E '^stat::number_of_executed_units' "$scratch/$name.log" | awk '{print $2}') execs," \
         "cov $(grep -Eo 'cov: [0-9]+' "$scratch/$name.log" | tail -1 | awk '{print $2}')"
  else
    echo "fuzz: $name FAILED" >&2
    tail -40 "$scratch/$name.log" >&2
    rc=1
  fi
done
exit $rc
