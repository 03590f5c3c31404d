# The two set-up commands on a fresh Debian 12 (as root): `make demo` and `make test`.
JOBS ?= $(shell nproc)
BUILD ?= build
SAN_BUILD ?= build-asan
FUZZ_SECONDS ?= 8

.PHONY: all deps build demo test test-sanitizers test-full fuzz bench clean format format-check

all: build

deps:
	@bash scripts/install-deps.sh

$(BUILD)/CMakeCache.txt: | deps
	cmake -S . -B $(BUILD) -G Ninja -DCMAKE_BUILD_TYPE=Release

# The binary alone: make demo's first build compiles no test (make test builds them itself).
build: deps $(BUILD)/CMakeCache.txt
	cmake --build $(BUILD) -j $(JOBS) --target punctual

demo: build
	./$(BUILD)/punctual demo

# The whole suite on the shipped build: every test (the timing ones first, alone), the
# hdr-histogram-js interop check, and TSan on the recorder and engine beside them.
test: deps $(BUILD)/CMakeCache.txt
	bash scripts/run-tests.sh

# The same code under ASan+UBSan (clang): the unit and simulation tests, the integration subset
# for bad input and hostile TLS servers, and a short libFuzzer smoke pass per target. .ci/run
# runs it after make test.
test-sanitizers: deps
	PUNCTUAL_SUITE=sanitizers bash scripts/run-tests.sh

test-full: deps $(BUILD)/CMakeCache.txt
	FULL=1 SIM_SEEDS=50000 bash scripts/run-tests.sh

fuzz: deps
	CC=clang CXX=clang++ cmake -S . -B $(SAN_BUILD) -G Ninja -DCMAKE_BUILD_TYPE=Debug -DPUNCTUAL_SANITIZE=ON -DPUNCTUAL_FUZZ=ON -DPUNCTUAL_FUZZ_COVERAGE=ON
	cmake --build $(SAN_BUILD) -j $(JOBS)
	FUZZ_SECONDS=$${FUZZ_SECONDS:-300} bash scripts/run-fuzz.sh $(SAN_BUILD)

bench: deps
	cmake -S . -B build-bench -G Ninja -DCMAKE_BUILD_TYPE=Release -DPUNCTUAL_BENCH=ON -DPUNCTUAL_TESTS=OFF
	cmake --build build-bench -j $(JOBS)

format: deps
	scripts/format.sh

format-check: deps
	scripts/format.sh --check

clean:
	rm -rf $(BUILD) $(SAN_BUILD) build-bench build-tsan
