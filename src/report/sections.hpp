// The report's sections, a file each (named beside each group), which text_report.cpp and
// json_report.cpp put together. Internal to src/report: one declaration per piece, included by
// the file that defines it too, so a signature cannot drift between them.
#pragma once

#include <array>
#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "analysis/attribution.hpp"
#include "punctual/histogram/histogram.hpp"
#include "record/outcome.hpp"
#include "report/json.hpp"
#include "report/run_report.hpp"

namespace punctual::report {

// n events over `window`, per second (0 for an empty window).
inline double per_second(std::uint64_t n, nanoseconds window) {
  return window.count() > 0 ? static_cast<double>(n) * 1e9 / static_cast<double>(window.count())
                            : 0.0;
}

// What a run started at a shared wall-clock instant assumes of the clocks.
inline constexpr std::string_view clock_assumption =
    "shards' wall clocks are assumed synchronised (NTP or better); each shard's start lag is "
    "measured";

// json_report.cpp
nlohmann::ordered_json ci_json(const verdicts& v);  // {"ci": ..., "methods": ...}
nlohmann::ordered_json validity_json(const verdicts& v);
nlohmann::ordered_json slo_json(const verdicts& v);
nlohmann::ordered_json view_json(const hdr::histogram& h, std::uint64_t censored);
nlohmann::ordered_json outcomes_json(const std::array<std::uint64_t, record::outcome_count>& o);
// verdict_text.cpp
// "VALID · SLO p99<=50ms passed (1.9ms) · exit 0": the report's first line.
void write_verdict_line(std::ostream& out, const verdicts& v, bool interrupted);
void write_invalid_reasons(std::ostream& out, const verdicts& v);
// Only the failed and warning checks, in words, unless `verbose` (every check).
void write_validity(std::ostream& out, const verdicts& v, bool verbose);
void write_slos(std::ostream& out, const verdicts& v);
// failure_text.cpp
std::string grouped(std::uint64_t n);  // 1500 -> "1,500"
// "1,500 answered 404 (expected 200-399)", "3 timed out after 2s", ...: every failed request
// of `counts`, by what failed it.
std::vector<std::string> failure_parts(const run::config& c, const record::counters& counts);
std::string joined(const std::vector<std::string>& parts);  // "a, b, c"
// No request ok, or more failed than verdicts::allowed_failure_share.
bool failures_lead(const record::counters& counts, const verdicts& v);
// The line that opens a report whose failures lead ("0 of 1,500 ok: ..."); nothing otherwise.
void write_failure_lead(std::ostream& out, const run::config& c, const record::counters& counts,
                        const verdicts& v);
void write_errors_line(std::ostream& out, const run::config& c, const record::counters& counts);
// attempts_report.cpp
nlohmann::ordered_json attempts_json(const run::config& c, const run::result& r);
nlohmann::ordered_json retry_policy_json(const run::config& c);
void write_attempts_text(std::ostream& out, const run::config& c, const run::result& r);
// by_name_report.cpp
nlohmann::ordered_json mix_json(const run::config& c);
nlohmann::ordered_json by_name_json(const run::config& c, const run::result& r);
std::string describe_mix(const run::config& c);
void write_by_name_text(std::ostream& out, const run::config& c, const run::result& r);
// hybrid_report.cpp
nlohmann::ordered_json hybrid_model_json(const run::config& c);
nlohmann::ordered_json sessions_json(const run::config& c, const run::result& r);
std::string describe_hybrid(const run::config& c, const run::result& r);
void write_sessions_text(std::ostream& out, const run::config& c, const run::result& r);

// series_report.cpp
struct worst_range {
  nanoseconds start_mono, end_mono, start_unix, end_unix;  // intended times, [start, end)
};
worst_range worst_range_of(const run::result& r, const record::second_views& s);
// A timeline row's latency: {count, p50_ns, p99_ns, max_ns}.
nlohmann::ordered_json summary_json(const record::latency_summary& s);
nlohmann::ordered_json series_json(const run::config& c, const run::result& r);
nlohmann::ordered_json histograms_json(const run::config& c, const run::result& r);
// What held the connections, for the worst second's cause (analysis/attribution.hpp).
analysis::connection_holders holders_of(const run::config& c, const run::result& r,
                                        const verdicts& v);
nlohmann::ordered_json worst_interval_json(const run::result& r,
                                           const analysis::connection_holders& holders);
nlohmann::ordered_json worst_step_json(const run::config& c, const run::result& r,
                                       const analysis::connection_holders& holders);
void write_worst_text(std::ostream& out, const run::config& c, const run::result& r,
                      const analysis::connection_holders& holders);

}  // namespace punctual::report
