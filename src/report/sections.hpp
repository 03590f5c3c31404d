// The report's sections, a file each (named beside each group), which text_report.cpp and
// json_report.cpp put together. Internal to src/report: one declaration per piece, included by
// the file that defines it too, so a signature cannot drift between them.
#pragma once

#include <array>
#include <cstdint>
#include <ostream>
#include <string>

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
void write_invalid_reasons(std::ostream& out, const verdicts& v);
void write_validity(std::ostream& out, const verdicts& v);
void write_slos(std::ostream& out, const verdicts& v);
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
nlohmann::ordered_json worst_interval_json(const run::result& r);
nlohmann::ordered_json worst_step_json(const run::config& c, const run::result& r);
void write_worst_text(std::ostream& out, const run::config& c, const run::result& r);

}  // namespace punctual::report
