// The reports of a run: text and JSON, written from the run's config (what was asked: the
// workload model, the rate and the correction policy, which every output names) and its result.
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
#include "punctual/histogram/histogram.hpp"
#include "run/config.hpp"
#include "run/result.hpp"

namespace punctual::report {

using nanoseconds = std::chrono::nanoseconds;

// What the analysis concluded about a run: whether to believe it, and the SLO verdicts.
struct verdicts {
  analysis::validity_report validity;
  std::optional<analysis::slo_evaluation> slo;  // none without --slo
  // 95% intervals of the response time at each summary percentile, in that order.
  std::vector<analysis::percentile_ci> response_ci;
  // Failures past this share of planned lead the report (analysis::allowed_failure_share).
  double allowed_failure_share = analysis::default_failure_share;
};

// The percentiles every summary shows.
inline constexpr double summary_percentiles[] = {50, 75, 90, 99, 99.9, 99.99, 100};

// Percentiles at or above this are lower bounds because of censored samples (timeouts and
// unfinished requests); 101 when nothing is censored.
double lower_bound_from(std::uint64_t censored, std::int64_t count) noexcept;

// The reconstructed view of a closed run (expected-interval correction of the response time).
hdr::histogram reconstructed(const run::result& r, nanoseconds expected_interval);

// The exit code the verdicts call for (analysis::exit_code), 130 when interrupted.
int exit_code(bool interrupted, const verdicts& v) noexcept;

// What the text report shows beyond its default layout.
struct text_options {
  bool verbose = false;       // every validity check, not only those that failed or warned
  bool full_latency = false;  // the response time's whole percentile distribution
  bool full_service = false;  // the service time's
};

// "remote write: N pushes accepted (...), ... final values stored": what --remote-write did,
// one line without its newline (the text report's, and search's on stderr).
std::string remote_write_line(const metrics::push_stats& s);

void write_text(std::ostream& out, const run::config& c, const run::result& r, const verdicts& v,
                const text_options& o);
// `text_report`: the text report as printed, kept in the JSON (`punctual report` prints it again).
void write_json(std::ostream& out, const run::config& c, const run::result& r, const verdicts& v,
                std::string_view text_report);

}  // namespace punctual::report
