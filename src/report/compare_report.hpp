// `punctual compare BASE.json CAND.json`: did the candidate run get slower than the baseline, by
// more than a threshold and more than run-to-run noise? Built from the two JSON reports and the
// per-interval histograms of the .hlog beside each (analysis/compare_stats.hpp has the method),
// into one JSON document (docs/compare.schema.json) that every rendering is made from: the text
// table, Markdown, JUnit and HTML.
#pragma once

#include <map>
#include <ostream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/compare_stats.hpp"
#include "punctual/histogram/interval_log.hpp"
#include "report/json.hpp"

namespace punctual::report {

// One line: why the two reports cannot be compared (exit 2).
struct compare_refused : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// One run to compare: its report and the streams of its interval log, by tag ("" the untagged
// response time; "service_time"; "response_time.NAME"; "session_time.SCENARIO").
struct compare_input {
  std::string name;  // its file, for messages
  nlohmann::ordered_json doc;
  std::map<std::string, analysis::interval_stream> streams;
  // Takes one interval of the run's log (hdr::read_interval_log_file's handler).
  void add_interval(const hdr::interval_log& header, const hdr::log_interval& interval);
};

// What counts as a regression for one figure: relative (a fraction of the baseline's value) or
// absolute (ns for a percentile, a share in [0, 1] for errors).
struct compare_threshold {
  bool relative = true;
  double value = 0.05;
  bool operator==(const compare_threshold&) const = default;
};

// The compared figures, in row order, and each one's default threshold.
inline constexpr std::string_view compare_metrics[] = {"p50", "p90", "p99", "p99.9", "errors"};
std::map<std::string, compare_threshold, std::less<>> default_thresholds();
// --max-regression 'p99:+10%,p50:+2ms,errors:+0.5%' over the defaults (errors: percentage
// points). Throws compare_refused naming the bad entry.
std::map<std::string, compare_threshold, std::less<>> parse_max_regression(std::string_view text);

struct compare_settings {
  std::string view = "response_time";  // or service_time
  std::map<std::string, compare_threshold, std::less<>> thresholds = default_thresholds();
  bool allow_different = false;
  bool inconclusive_fails = false;
  std::vector<std::string> command_line;
  std::string base_file;
  std::string candidate_file;
};

// Exit codes (as cli::exit_code): 0 nothing regressed, 3 a regression (or an inconclusive row
// under --inconclusive fail), 4 a run was invalid.
struct comparison {
  nlohmann::ordered_json doc;  // docs/compare.schema.json
  int exit_code = 0;
};

// Throws compare_refused when the workloads differ (without allow_different), the view is
// unknown, or a report lacks what the comparison needs.
comparison compare_runs(const compare_input& base, const compare_input& candidate,
                        const compare_settings& settings);

void write_compare_text(std::ostream& out, const nlohmann::ordered_json& doc);
std::string compare_markdown(const nlohmann::ordered_json& doc);
std::string compare_html(const nlohmann::ordered_json& doc);

}  // namespace punctual::report
