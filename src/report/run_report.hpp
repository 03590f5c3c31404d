// What a report needs to know about a run besides its numbers: the workload model, the rate and
// the correction policy. Every output names all three.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "analysis/confidence.hpp"
#include "analysis/slo.hpp"
#include "analysis/validity.hpp"
#include "engine/run.hpp"
#include "punctual/histogram/histogram.hpp"

namespace punctual::report {

using nanoseconds = std::chrono::nanoseconds;

struct run_description {
  std::vector<std::string> command_line;
  std::string target_url;
  std::string model = "open";          // open | closed
  std::string arrival = "constant";    // constant | poisson (open model)
  std::string schedule_text;           // e.g. "constant arrivals, 2000 req/s"
  std::optional<double> rate_per_s;    // none for the closed model
  std::uint64_t seed = 1;
  std::uint32_t connections = 0;
  std::uint32_t threads = 0;
  nanoseconds duration{};
  nanoseconds warmup{};
  nanoseconds think{};
  std::string precision = "fine";
  std::optional<nanoseconds> expected_interval;  // closed model reconstruction
  std::optional<engine::retry_policy> retry;     // none: no retries
  std::string retry_text;                        // the policy in one line, for the header
};

// What the analysis concluded about a run: whether to believe it, and the SLO verdicts.
struct verdicts {
  analysis::validity_report validity;
  std::optional<analysis::slo_evaluation> slo;  // none without --slo
  // 95% intervals of the response time at each summary percentile, in that order.
  std::vector<analysis::percentile_ci> response_ci;
};

// The percentiles every summary shows.
inline constexpr double summary_percentiles[] = {50, 75, 90, 99, 99.9, 99.99, 100};

// Percentiles at or above this are lower bounds because of censored samples (timeouts and
// unfinished requests); 101 when nothing is censored.
double lower_bound_from(std::uint64_t censored, std::int64_t count) noexcept;

// The reconstructed view of a closed run (expected-interval correction of the response time).
hdr::histogram reconstructed(const engine::run_result& r, nanoseconds expected_interval);

void write_text(std::ostream& out, const run_description& d, const engine::run_result& r,
                const verdicts& v, bool full_latency, bool full_service);
void write_json(std::ostream& out, const run_description& d, const engine::run_result& r,
                const verdicts& v);

}  // namespace punctual::report
