// The options of a distributed run (docs/distributed.md): which slice of the global schedule
// this process runs (--shard), when the measured window starts on the wall clock (--start-at),
// and the digest that proves every shard runs the same plan.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "analysis/slo.hpp"
#include "run/config.hpp"

namespace punctual::cli {

struct run_options;

struct shard_spec {
  std::uint32_t index = 0;
  std::uint32_t count = 1;
};

// "I/N" with 0 <= I < N, or "env/N" with I read from `job_index` (JOB_COMPLETION_INDEX, as a
// Kubernetes Indexed Job sets it; null when unset). The try_ variant is what the fuzzer drives.
std::optional<shard_spec> try_parse_shard(std::string_view text, const char* job_index) noexcept;
shard_spec parse_shard(std::string_view text, const char* job_index);

// RFC 3339 ("2026-12-01T05:00:00Z", "2026-12-01T06:00:00.250+01:00") or Unix seconds with an
// optional fraction ("1796101200.25"): ns since the Unix epoch.
std::optional<std::chrono::nanoseconds> try_parse_start_at(std::string_view text) noexcept;

// Applies --shard, --start-at and the plan digest to a built configuration. `now_unix` is the
// wall clock (a parameter so that tests can fix it).
void apply_shard_options(const run_options& o, run::config& c, std::chrono::nanoseconds now_unix);

// SHA-256 (hex) over exactly what must be equal on every shard: the model, the arrival process,
// the rate or stages, the seed, the duration, the warm-up, the timeout, the retry policy (less
// its per-shard budget) and the bytes of the --requests, --scenario and --schedule-in files.
std::string plan_digest(const run_options& o, const run::config& c);

// Sets the workload identity (run/workload_identity.hpp) and the run's id: --run-id, else one
// derived from --start-at and the workload's digest (the same on every shard started together),
// else a random one. Returns a note for stderr (a shard whose id no other shard will share), or
// an empty text.
std::string apply_run_identity(const run_options& o, run::config& c,
                               analysis::bound_mode slo_bound);

// The options with --out-dir's outputs filled in (DIR/shard-I-of-N.json and .hlog; the
// directory is made if missing).
run_options with_out_dir(const run_options& o);

}  // namespace punctual::cli
