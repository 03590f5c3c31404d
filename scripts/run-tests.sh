#!/usr/bin/env bash
# The whole test suite, as `make test` runs it (after `make build`):
#   1. every test (unit + integration against nginx and `punctual serve`) in the normal build;
#   2. the ASan+UBSan build (clang): unit tests and a low-rate accounting subset of the
#      integration tests (bad input, deadlines, retries); TSan on the recorder and engine tests;
#   3. a short libFuzzer smoke pass per target (FUZZ_SECONDS each, default 10, a target per core);
#   4. the hdr-histogram-js interop check of .hlog files punctual wrote.
# FULL=1 widens the integration matrices (make test-full).
set -uo pipefail
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
SAN_BUILD=${SAN_BUILD:-build-asan}
TSAN_BUILD=${TSAN_BUILD:-build-tsan}
FUZZ_SECONDS=${FUZZ_SECONDS:-10}
JOBS=${JOBS:-$(nproc)}
passed=0
failed=0
failures=()

# Each stage has a time budget (seconds, measured 2-4x below it on 2 cores); a stage that hangs
# is killed and fails instead of eating CI's time.
stage() {  # stage NAME BUDGET COMMAND...
  local name=$1 budget=$2
  shift 2
  local t0=$SECONDS
  [[ ${FULL:-0} == 1 ]] && budget=$((budget * 3))  # make test-full runs the wider matrices
  echo "=== $name (budget ${budget} s)"
  if timeout --kill-after=10 "$budget" "$@"; then
    passed=$((passed + 1))
    echo "=== $name: ok ($((SECONDS - t0)) s)"
  else
    failed=$((failed + 1))
    failures+=("$name")
    echo "=== $name: FAILED ($((SECONDS - t0)) s)"
  fi
}

san_build() {
  CC=clang CXX=clang++ cmake -S . -B "$SAN_BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Debug \
    -DPUNCTUAL_SANITIZE=ON -DPUNCTUAL_FUZZ=ON >/dev/null &&
    cmake --build "$SAN_BUILD" -j "$JOBS" | grep -Ev '^\[[0-9]+/[0-9]+\]' || true
  test -x "$SAN_BUILD/punctual"
}

# TSan: the recorder and engine tests only (they link just their units, so this stays quick).
tsan_tests() {
  CC=clang CXX=clang++ cmake -S . -B "$TSAN_BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Debug \
    -DPUNCTUAL_TSAN=ON >/dev/null &&
    cmake --build "$TSAN_BUILD" -j "$JOBS" --target recorder_test engine_run_test |
    grep -Ev '^\[[0-9]+/[0-9]+\]'
  TSAN_OPTIONS=halt_on_error=1 "$TSAN_BUILD/tests/recorder_test" --gtest_brief=1 &&
    TSAN_OPTIONS=halt_on_error=1 "$TSAN_BUILD/tests/engine_run_test" --gtest_brief=1
}

san_integration() {
  local rc=0
  for t in tests/integration/test_bad_input.py tests/integration/test_deadlines.py \
           tests/integration/test_retries.py; do
    [[ -f $t ]] || continue
    /usr/bin/python3 "$t" "$SAN_BUILD/punctual" || rc=1
  done
  return $rc
}

export -f san_build tsan_tests san_integration
export SAN_BUILD TSAN_BUILD JOBS
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}

stage "normal build: unit tests" 120 ctest --test-dir "$BUILD" -L unit --output-on-failure -j "$JOBS"
# Load tests one at a time, so no test's timing shares the cores with another's.
stage "normal build: integration tests (nginx, punctual serve)" 330 \
  ctest --test-dir "$BUILD" -L integration --output-on-failure -j 1 --timeout 300
stage "asan+ubsan build" 360 bash -c san_build
stage "asan+ubsan: unit tests" 180 ctest --test-dir "$SAN_BUILD" -L unit --output-on-failure -j "$JOBS"
stage "asan+ubsan: low-rate integration subset" 120 bash -c san_integration
stage "tsan: recorder and engine tests" 180 bash -c tsan_tests
stage "fuzz smoke (${FUZZ_SECONDS}s per target)" 180 bash scripts/run-fuzz.sh "$SAN_BUILD"
if [[ -f tests/interop/run.sh ]]; then
  stage "hdr-histogram-js interop" 120 bash tests/interop/run.sh "$BUILD/interop" "$BUILD/punctual"
fi

echo
for f in "${failures[@]}"; do echo "failed stage: $f"; done
echo "stages: $passed passed, $failed failed"
((failed == 0))
