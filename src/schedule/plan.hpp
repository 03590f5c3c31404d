// What a schedule is made of: the options that fully determine every intended time
// (docs/design.md, "Workload models": a schedule is a pure function of the options and the seed).
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace punctual::schedule {

// trace: the intended offsets are read from a file (--schedule-in), not computed.
enum class arrival_kind { constant, poisson, trace };

class trace;  // schedule/trace.hpp

// One piece of a piecewise-linear rate: over `length` the rate moves linearly to `rate_per_s`,
// starting from the previous stage's end rate (the first stage starts from
// plan::start_rate_per_s, 0 by default, as k6's ramping-arrival-rate starts from startRate).
struct stage {
  std::chrono::nanoseconds length{};
  double rate_per_s = 0;
};

// Rates are bounded so the exact integer arithmetic below cannot overflow: at most one request
// per nanosecond, and at least one per ~11.6 days.
inline constexpr double max_rate_per_s = 1e9;
inline constexpr double min_rate_per_s = 1e-6;
// Shards beyond this are refused (--shard and the merge of shards' reports): a request's shard
// is i mod N, and no deployment needs more.
inline constexpr std::uint32_t max_shards = 100'000;
// Offsets stay below 2^62 ns (~146 years) so sums of offsets and gaps never overflow int64.
inline constexpr std::int64_t max_window_ns = std::int64_t{1} << 62;

struct plan {
  arrival_kind arrival = arrival_kind::constant;
  double rate_per_s = 0;        // used when `stages` is empty
  std::vector<stage> stages;    // empty: the constant rate `rate_per_s`
  double start_rate_per_s = 0;  // the rate at t = 0 when `stages` is used
  // arrival_kind::trace: the offsets to replay (rates, stages and the seed are unused). Shared
  // and read-only, so copying a plan stays cheap however long the trace.
  std::shared_ptr<const trace> replay;
  // The run's time line is [0, warmup + duration): warm-up first, then the measured window.
  // Stages are laid out from 0, warm-up included; after the last stage the rate holds at its
  // end rate. A trace's offsets are from 0 too; entries at or after warmup + duration are cut.
  std::chrono::nanoseconds warmup{};
  std::chrono::nanoseconds duration{};
  std::uint64_t seed = 1;
  std::uint32_t shards = 1;
  std::uint32_t shard_index = 0;
  std::uint32_t workers = 1;

  // Poisson arrivals at one rate: the only schedule whose send gaps have a known law to fit
  // (the poisson_send_gaps check), so the only one whose gaps are recorded.
  bool fixed_poisson() const noexcept { return arrival == arrival_kind::poisson && stages.empty(); }
};

// One request of the global schedule: `index` is its global number i, `offset` its intended time
// from the run start (the start of warm-up).
struct entry {
  std::uint64_t index = 0;
  std::chrono::nanoseconds offset{};
  bool warmup = false;
};

// One line naming the first problem, or nothing if the plan is usable. Every other function of
// this unit requires a plan that passes.
std::optional<std::string> validate(const plan& p);

// "constant arrivals, 2000 req/s", "poisson arrivals (seed 1), stages 10s:100,30s:5000",
// "trace replay of trace.txt (12000 requests over 60s, mean 200 req/s)".
// `unit`: what arrives ("users/s" for the hybrid model's plan).
std::string describe(const plan& p, std::string_view unit = "req/s");

// Which worker of its shard owns global request `index` (docs/design.md, "Workers and
// connections").
constexpr std::uint32_t shard_of(std::uint64_t index, std::uint32_t shards) noexcept {
  return static_cast<std::uint32_t>(index % shards);
}
constexpr std::uint32_t worker_of(std::uint64_t index, std::uint32_t shards,
                                  std::uint32_t workers) noexcept {
  return static_cast<std::uint32_t>((index / shards) % workers);
}

}  // namespace punctual::schedule
