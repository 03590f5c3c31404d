#!/usr/bin/env bash
# Runs every libFuzzer target in BUILD_DIR for FUZZ_SECONDS each, seeded from fuzz/corpus/<name>/,
# FUZZ_JOBS targets at a time (default: one per core). New inputs go to a scratch directory, so
# the repository's corpus is never modified. Fails when there is no target or one was not built.
set -euo pipefail
cd "$(dirname "$0")/.."
export FUZZ_BUILD=${1:-build-asan}
export FUZZ_SECONDS=${FUZZ_SECONDS:-10}
jobs=${FUZZ_JOBS:-$(nproc)}
FUZZ_SCRATCH=$(mktemp -d)
export FUZZ_SCRATCH
trap 'rm -rf "$FUZZ_SCRATCH"' EXIT

fuzz_one() {  # fuzz_one NAME
  local name=$1
  local bin="$FUZZ_BUILD/fuzz/$name" corpus="fuzz/corpus/${name%_fuzz}" log="$FUZZ_SCRATCH/$name.log"
  if [[ ! -x $bin ]]; then
    echo "fuzz: $name was not built" >&2
    return 1
  fi
  mkdir -p "$FUZZ_SCRATCH/$name"
  local seeds=()
  [[ -d $corpus ]] && seeds+=("$corpus")
  if "$bin" -max_total_time="$FUZZ_SECONDS" -print_final_stats=1 "$FUZZ_SCRATCH/$name" "${seeds[@]}" \
      >"$log" 2>&1; then
    echo "fuzz: $name ok: $(grep -E '^stat::number_of_executed_units' "$log" | awk '{print $2}') execs," \
         "cov $(grep -Eo 'cov: [0-9]+' "$log" | tail -1 | awk '{print $2}')"
  else
    echo "fuzz: $name FAILED" >&2
    tail -40 "$log" >&2
    return 1
  fi
}
export -f fuzz_one

shopt -s nullglob
names=()
for src in fuzz/*_fuzz.cpp; do names+=("$(basename "$src" .cpp)"); done
((${#names[@]} > 0)) || { echo "fuzz: no targets" >&2; exit 1; }
printf '%s\n' "${names[@]}" | xargs -P "$jobs" -I{} bash -euo pipefail -c 'fuzz_one "$1"' _ {}
