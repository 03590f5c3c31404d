#!/usr/bin/env bash
# The test suites, in two parts:
#
# PUNCTUAL_SUITE=main (`make test`): the whole suite on the shipped build.
#   1. the normal build, then every test in it: the tests that time something first, alone, then
#      the unit tests (the simulation's among them), the integration tests that time nothing
#      (against nginx and `punctual serve`) and the hdr-histogram-js interop check of .hlog files
#      punctual wrote;
#   2. TSan on the recorder and engine tests, in a tree of its own. It starts with the normal
#      build at SCHED_IDLE, so it takes only the CPU that build leaves idle, is stopped while the
#      timing tests run, and then goes on at the normal policy and nice 10 beside the tests that
#      time nothing.
#   Clean-clone runs took 6 min 4 s to 6 min 45 s on 2 cores (docs/design.md, "Tests").
# PUNCTUAL_SUITE=sanitizers (`make test-sanitizers`; `.ci/run` runs it after `make test`): the
#   ASan+UBSan build (clang): the simulation's tests, the unit tests with executables of their
#   own (tests/CMakeLists.txt says why not the rest) and a subset of the integration tests (bad
#   input, hostile TLS servers); then a short libFuzzer smoke pass per target (FUZZ_SECONDS each,
#   default 8, all targets at once). Apart from `make test` because the two do not fit in
#   7 minutes together: the ASan tree is a second compile of every source (~300 CPU-s).
# A stage fails when its configure or build fails or when it ran no test, and a stage whose build
# failed fails without running, so nothing is tested on binaries an earlier build left behind.
# FULL=1 widens the integration matrices (make test-full).
#
# Stages: main: build unit integration-untimed integration interop tsan; sanitizers: asan
# asan-unit asan-integration fuzz.
# PUNCTUAL_ONLY_STAGE=STAGE[,STAGE...] runs only those stages of the suite (and the build each
# one tests).
# PUNCTUAL_BREAK_STAGE=STAGE breaks that stage the way a real breakage looks, to prove that the
# stage then fails and the script exits non-zero; it is not part of `make test`:
#   asan, tsan        configure with a flag the compiler rejects, so the build fails (the next
#                     run without it sets the flags back);
#   build             asks for a target that does not exist;
#   unit, integration-untimed, integration, asan-unit
#                     select a label no test has, so the stage runs no test;
#   asan-integration  names a test file that does not exist;
#   fuzz              looks for the fuzz targets where none were built;
#   interop           is given a punctual binary that does not exist.
# E.g. PUNCTUAL_ONLY_STAGE=tsan PUNCTUAL_BREAK_STAGE=tsan bash scripts/run-tests.sh must exit 1,
# and so must PUNCTUAL_SUITE=sanitizers PUNCTUAL_ONLY_STAGE=asan PUNCTUAL_BREAK_STAGE=asan.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
SAN_BUILD=${SAN_BUILD:-build-asan}
TSAN_BUILD=${TSAN_BUILD:-build-tsan}
FUZZ_SECONDS=${FUZZ_SECONDS:-8}
JOBS=${JOBS:-$(nproc)}
# One test more than cores: a few unit tests wait on real time (engine_alloc_test and
# engine_run_test run real workers for seconds), and a test that sleeps should not hold a core's
# slot while the simulation's tests queue behind it.
TEST_JOBS=${TEST_JOBS:-$((JOBS + 1))}
SUITE=${PUNCTUAL_SUITE:-main}
ONLY=${PUNCTUAL_ONLY_STAGE:-}
BREAK=${PUNCTUAL_BREAK_STAGE:-}
# Each stage leaves its outcome in a file here: stages that run in the background report through it.
results=$(mktemp -d)
trap 'rm -rf "$results"' EXIT

# The build whose binaries each test stage runs.
declare -A built_by=([unit]=build [integration-untimed]=build [integration]=build [interop]=build
                     [asan-unit]=asan [asan-integration]=asan [fuzz]=asan)
case $SUITE in
  main) stages=" build unit integration-untimed integration interop tsan " ;;
  sanitizers) stages=" asan asan-unit asan-integration fuzz " ;;
  *) echo "run-tests.sh: no suite '$SUITE' (suites: main sanitizers)" >&2; exit 2 ;;
esac
for s in ${ONLY//,/ } $BREAK; do
  if [[ $stages != *" $s "* ]]; then
    echo "run-tests.sh: no stage '$s' in the $SUITE suite (stages:$stages)" >&2
    exit 2
  fi
done
wanted() {  # wanted STAGE: selected by PUNCTUAL_ONLY_STAGE, or the build of a selected stage
  [[ -z $ONLY ]] && return 0
  local s
  for s in ${ONLY//,/ }; do
    [[ $s == "$1" || ${built_by[$s]:-} == "$1" ]] && return 0
  done
  return 1
}
if [[ -n $BREAK ]] && ! wanted "$BREAK"; then
  echo "run-tests.sh: PUNCTUAL_BREAK_STAGE=$BREAK is not among the stages run" >&2
  exit 2
fi

# A label no test has: what a stage that finds no test looks like.
label() {  # label STAGE LABEL
  if [[ $BREAK == "$1" ]]; then echo no-such-label; else echo "$2"; fi
}

# Each stage has a time budget (seconds, measured 2-4x below it on 2 cores); a stage that hangs
# is killed and fails instead of eating CI's time.
result_of() {  # result_of STAGE: ok, failed, or nothing if it has not run
  cat "$results/$1" 2>/dev/null || true
}

stage() {  # stage STAGE NAME BUDGET COMMAND...
  local key=$1 name=$2 budget=$3
  shift 3
  wanted "$key" || return 0
  local t0=$SECONDS build=${built_by[$key]:-} outcome
  [[ ${FULL:-0} == 1 ]] && budget=$((budget * 3))  # make test-full runs the wider matrices
  echo "=== $name (budget ${budget} s)"
  if [[ -n $build && $(result_of "$build") != ok ]]; then
    outcome=failed
    echo "=== $name: FAILED (not run: its build failed)"
  elif timeout --kill-after=10 "$budget" "$@"; then
    outcome=ok
    echo "=== $name: ok ($((SECONDS - t0)) s)"
  else
    outcome=failed
    echo "=== $name: FAILED ($((SECONDS - t0)) s)"
  fi
  echo "$outcome" >"$results/$key"
}

# beside NICENESS COMMAND...: runs COMMAND (a stage) in the background at that CPU priority, its
# output held until `join_beside` prints it, so the foreground's lines are not interleaved.
beside_pid=
beside() {
  ( renice -n "$1" -p "$BASHPID" >/dev/null; "${@:2}" ) >"$results/beside.log" 2>&1 &
  beside_pid=$!
}
join_beside() {
  [[ -n $beside_pid ]] || return 0
  echo "=== waiting for the stages run beside the foreground"
  wait "$beside_pid" || true
  cat "$results/beside.log"
  beside_pid=
}

# The functions below run in a fresh bash under the stage's timeout; each is started with
# -euo pipefail so a failing configure or build ends it.
quiet_build() {  # quiet_build ARGS...: cmake --build without ninja's progress lines
  cmake --build "$@" | { grep -Ev '^\[[0-9]+/[0-9]+\]' || true; }
}

# The sanitizer trees get CMAKE_CXX_FLAGS on every configure, so a broken run's flag does not
# stay in their cache. They build without debug information and in unity batches of 16: the
# ASan build took 138 s alone with -g1 and batches of 8, 98 s so (measured on 2 cores). Reports
# still name every function; SAN_DEBUG=-g1 puts file:line in them (line tables only).
# The ASan tree's libraries (and the simulation's) are compiled at -O1, its test files at -O0
# (tests/CMakeLists.txt): against -O0 everywhere, its build took 310 CPU-s instead of 293 and its
# unit tests 92 instead of 165 (47 s instead of 84 on 2 cores), for std::chrono and the
# histograms' slots are no longer a call each.
SAN_DEBUG=${SAN_DEBUG:--g0}
san_build() {
  CC=clang CXX=clang++ cmake -S . -B "$SAN_BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Debug \
    "-DCMAKE_CXX_FLAGS_DEBUG=$SAN_DEBUG -O1" -DPUNCTUAL_UNITY_BATCH=16 -DPUNCTUAL_SANITIZE=ON \
    -DPUNCTUAL_FUZZ=ON -DPUNCTUAL_FUZZ_COVERAGE=OFF -DPUNCTUAL_SHARED_UNIT_TESTS=OFF \
    "-DCMAKE_CXX_FLAGS=$SAN_CXXFLAGS" >/dev/null
  quiet_build "$SAN_BUILD" -j "$JOBS"
}

# TSan: the recorder and engine tests only (they link just their units, so this stays quick).
tsan_tests() {
  CC=clang CXX=clang++ cmake -S . -B "$TSAN_BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Debug \
    "-DCMAKE_CXX_FLAGS_DEBUG=$SAN_DEBUG" -DPUNCTUAL_UNITY_BATCH=16 -DPUNCTUAL_TSAN=ON \
    "-DCMAKE_CXX_FLAGS=$TSAN_CXXFLAGS" >/dev/null
  quiet_build "$TSAN_BUILD" -j "$JOBS" --target recorder_test engine_run_test intended_seconds_test
  TSAN_OPTIONS=halt_on_error=1 "$TSAN_BUILD/tests/recorder_test" --gtest_brief=1
  TSAN_OPTIONS=halt_on_error=1 "$TSAN_BUILD/tests/engine_run_test" --gtest_brief=1
  TSAN_OPTIONS=halt_on_error=1 "$TSAN_BUILD/tests/intended_seconds_test" --gtest_brief=1
}

san_one() {  # san_one TEST: one integration test against the ASan build
  if [[ ! -f $1 ]]; then
    echo "missing test: $1" >&2
    return 1
  fi
  # test_tls.py runs its hostile servers only here: the client's TLS error paths.
  if [[ $(basename "$1") == test_tls.py ]]; then
    HOSTILE_ONLY=1 /usr/bin/python3 "$1" "$SAN_BUILD/punctual"
  else
    /usr/bin/python3 "$1" "$SAN_BUILD/punctual"
  fi
}

# san_integration TEST...: the tests one after another.
san_integration() {
  local rc=0 t
  for t in "$@"; do san_one "$t" || rc=1; done
  return $rc
}

SAN_CXXFLAGS=""
TSAN_CXXFLAGS=""
[[ $BREAK == asan ]] && SAN_CXXFLAGS=--no-such-flag
[[ $BREAK == tsan ]] && TSAN_CXXFLAGS=--no-such-flag
build_target=()
[[ $BREAK == build ]] && build_target=(--target no-such-target)
# The engine's rules (deadlines, retries, HTTP/2's hostile servers) run under ASan in the
# simulation's tests, which are unit tests; on real sockets, the input errors and the client's
# TLS error paths.
san_tests=(tests/integration/test_bad_input.py tests/integration/test_tls.py)
[[ $BREAK == asan-integration ]] && san_tests+=(tests/integration/test_no_such_test.py)
fuzz_dir=$SAN_BUILD
[[ $BREAK == fuzz ]] && fuzz_dir=$SAN_BUILD/no-fuzz-targets-here
punctual=$BUILD/punctual
[[ $BREAK == interop ]] && punctual=$BUILD/no-such-punctual

export -f quiet_build san_build tsan_tests san_one san_integration
export SAN_BUILD TSAN_BUILD JOBS TEST_JOBS SAN_CXXFLAGS TSAN_CXXFLAGS SAN_DEBUG
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}

# tree_of PID: PID and every process under it.
tree_of() {
  ps -e -o pid=,ppid= | awk -v root="$1" '
    { parent[$1] = $2 }
    END { for (p in parent) { q = p
            while (q in parent && q != root && q > 1) q = parent[q]
            if (q == root) print p } }'
}

# pause_tree PID / resume_tree PID: stop every process under PID (three rounds, for a child
# forked by a parent not yet stopped); continue them, at the normal policy instead of SCHED_IDLE
# (their nice value stays).
pause_tree() {
  local round
  for round in 1 2 3; do
    kill -STOP $(tree_of "$1") 2>/dev/null || true
    sleep 0.1
  done
}
resume_tree() {
  local pid
  for pid in $(tree_of "$1"); do
    chrt -o -a -p 0 "$pid" 2>/dev/null || true
    kill -CONT "$pid" 2>/dev/null || true
  done
}

# make test: the normal build and its tests, with TSan's lane beside them.
main_suite() {
  # TSan's tree starts at SCHED_IDLE beside the normal build (the top of this file). Its budget
  # counts the normal build and the timing tests it waits behind.
  beside 10 stage tsan "tsan: recorder and engine tests" 600 chrt -i 0 bash -euo pipefail -c tsan_tests
  stage build "normal build" 600 bash -euo pipefail -c 'quiet_build "$@"' _ "$BUILD" -j "$JOBS" \
    "${build_target[@]}"
  # The tests that time something (tests/CMakeLists.txt: the truth over real sockets, a real
  # interruption, a real worker's CPU share, the second SIGINT) run first, on a quiet machine: the
  # TSan lane is stopped meanwhile. Beside them even at SCHED_IDLE, the ASan build made a
  # clean-clone make test fail test_search once in six (a server of 1 ms per request failed at
  # 700 req/s, p90 80 ms).
  [[ -n $beside_pid ]] && pause_tree "$beside_pid"
  stage integration "normal build: timing tests (nginx, punctual serve)" 180 \
    ctest --test-dir "$BUILD" -L "$(label integration timing)" --no-tests=error \
    --output-on-failure -j 2 --timeout 120
  [[ -n $beside_pid ]] && resume_tree "$beside_pid"
  # The unit tests (the simulation's among them), bound by CPU; then the integration tests that
  # time nothing, which wait on their servers and on real seconds of load more than they compute
  # (~70 CPU-s in ~200 s of test time), 3 at once. (Run together, the unit tests slowed nginx
  # enough for a run of those tests to be invalid: too few connections.)
  stage unit "normal build: unit tests" 120 \
    ctest --test-dir "$BUILD" -L "$(label unit unit)" -LE timing --no-tests=error \
    --output-on-failure -j "$TEST_JOBS"
  # The interop check times nothing either (a run's exit 4 is accepted), and mostly waits on
  # npm's registry.
  stage interop "hdr-histogram-js interop" 120 bash tests/interop/run.sh "$BUILD/interop" \
    "$punctual" >"$results/interop.log" 2>&1 &
  local interop=$!
  stage integration-untimed "normal build: untimed integration tests (nginx, punctual serve)" 240 \
    ctest --test-dir "$BUILD" -L "$(label integration-untimed integration)" -LE timing \
    --no-tests=error --output-on-failure -j "${UNTIMED_JOBS:-3}" --timeout 240
  wait "$interop" || true
  cat "$results/interop.log"
  join_beside
}

# make test-sanitizers: the ASan+UBSan build, its unit tests (the simulation's among them) with
# its integration subset beside them, and the fuzz smoke pass.
sanitizer_suite() {
  stage asan "asan+ubsan build" 480 bash -euo pipefail -c san_build
  # The integration subset waits on its servers more than it computes: it runs beside the unit
  # tests, its output held until they are done.
  stage asan-integration "asan+ubsan: integration subset" 120 \
    bash -euo pipefail -c 'san_integration "$@"' _ "${san_tests[@]}" >"$results/asan-integration.log" 2>&1 &
  local lane=$!
  stage asan-unit "asan+ubsan: unit tests" 240 \
    ctest --test-dir "$SAN_BUILD" -L "$(label asan-unit unit)" --no-tests=error --output-on-failure \
    -j "$TEST_JOBS"
  wait "$lane" || true
  cat "$results/asan-integration.log"
  # Every target at once: a smoke pass (make fuzz fuzzes for real), and ~5 s of target start-up
  # each made one target per core take a minute.
  stage fuzz "fuzz smoke (${FUZZ_SECONDS}s per target)" 180 \
    env FUZZ_JOBS="${FUZZ_JOBS:-16}" bash scripts/run-fuzz.sh "$fuzz_dir"
}

if [[ $SUITE == main ]]; then main_suite; else sanitizer_suite; fi

echo
passed=0
failed=0
for key in $stages; do
  case $(result_of "$key") in
    ok) passed=$((passed + 1)) ;;
    failed) failed=$((failed + 1)); echo "failed stage: $key" ;;
  esac
done
echo "stages: $passed passed, $failed failed ($SUITE suite, $SECONDS s)"
((failed == 0))
