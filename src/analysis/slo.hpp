// The SLO gate: --slo expressions, their evaluation, and the exit code.
//
//   p99<=200ms  p99.9<1s  p50<20ms   percentile of response time (and, apart, of service time)
//   errors<=0.1%  errors==0          non-ok outcomes of logical requests, % of planned or a count
//   timeouts==0  timeouts<1%         timeout outcomes, a count or % of planned
//   rate>=99%                        completed in window / planned, as a percentage
//   checkout.pay:p99<=300ms          the same for one name: a step, a --requests entry, or a
//   checkout.session:p99<=5s         scenario's sessions (session time); not rate
//
// Comparators: <, <=, ==, >=, >. Durations: a decimal number and a unit, ns, us, ms, s or m.
// Spaces around the comparator are allowed.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/interval_series.hpp"
#include "punctual/histogram/histogram.hpp"
#include "record/counters.hpp"
#include "record/view_set.hpp"

namespace punctual::analysis {

enum class slo_metric { percentile, errors, timeouts, rate };
enum class comparator { lt, le, eq, ge, gt };
enum class slo_unit { nanoseconds, percent, count };

struct slo_expression {
  std::string text;      // as the user typed it
  std::string scope;     // a name before ':', empty for the whole run
  std::size_t name = 0;  // scope's index among the run's names (resolve_slo_scopes)
  bool session = false;  // scope is SCENARIO.session: session time, no service time
  slo_metric metric = slo_metric::percentile;
  double percentile = 0;  // metric == percentile: in (0, 100]
  comparator cmp = comparator::le;
  slo_unit unit = slo_unit::nanoseconds;
  double threshold = 0;  // ns, percent (0..100) or count, per `unit`
};

struct slo_syntax_error : std::invalid_argument {
  using std::invalid_argument::invalid_argument;
};

// The message is one line: "--slo 'TEXT': expected ..., got '...'".
std::optional<slo_expression> try_parse_slo(std::string_view text, std::string* error = nullptr);
slo_expression parse_slo(std::string_view text);  // throws slo_syntax_error
// The percentiles the expressions name (for interval_series and the validity checks).
std::vector<double> slo_percentiles(const std::vector<slo_expression>& slos);

// Binds each scoped expression to the run's names (in order; `sessions[i]` marks a
// SCENARIO.session). Throws slo_syntax_error naming the scope when it is not one of them.
void resolve_slo_scopes(std::vector<slo_expression>& slos, const std::vector<std::string>& names,
                        const std::vector<bool>& sessions);

// A tail a percentile SLO judges: a percentile of one view (the run's response time when
// `scope` is empty, else a name's response time or a scenario's session time) and how many
// samples that view holds.
struct slo_tail {
  std::string scope;
  double percentile = 0;
  std::int64_t samples = 0;
};

// One per percentile expression (resolved scopes), without repeats.
std::vector<slo_tail> slo_tails(const std::vector<slo_expression>& slos,
                                const record::view_set& views);

std::string_view comparator_text(comparator c) noexcept;
// `figure cmp threshold`, equal within 1e-9 relative so 0.1% of 1000 == 1 request.
bool compare(double figure, comparator c, double threshold) noexcept;

enum class bound_mode { point, upper };

struct slo_input {
  const record::view_set& views;     // measured window
  const record::counters& counts;    // measured window
  const interval_series& intervals;  // for the batch-means bound (response time only)
  bound_mode bound = bound_mode::point;
  bool closed_model = false;
  // Closed model only: the --expected-interval view; percentile SLOs then gate on it.
  const hdr::histogram* reconstructed = nullptr;
  bool allow_uncorrected = false;
  // Per name (scoped expressions): its measured outcomes; its views are in `views`.
  const std::vector<record::name_counts>* by_name = nullptr;
};

struct slo_result {
  std::string text;
  std::string view;   // what it judged, in words: "response time", "buy.session time", "outcomes"
  double figure = 0;  // in `unit`: ns (the bound used), percent or count
  std::string_view bound;  // "point" or "upper"
  double threshold = 0;
  slo_unit unit = slo_unit::nanoseconds;
  bool pass = true;
  // Percentile SLOs only: the same SLO on service time (same bound mode) fails too.
  bool service_time_fails = false;
  double service_figure = 0;  // ns; percentile SLOs only
};

struct slo_evaluation {
  bool refused = false;
  std::string refusal;     // why, when refused (closed model without correction)
  std::string_view basis;  // "response_time", "reconstructed", "uncorrected" or "none" (refused)
  std::vector<slo_result> results;  // one per expression, in order; empty when refused
  bool any_failed() const noexcept;
  bool any_service_time_failure() const noexcept;
};

// Percentile SLOs: response time (or the reconstructed view) at the point estimate, or at the
// upper bound of percentile_interval() in upper mode; service time the same way, with the
// binomial bound only (the series keeps no per-interval service-time percentiles).
// errors = (http_error + socket_error + timeout + dropped + unfinished) of planned;
// timeouts = timeout outcomes; rate = completed_in_window / planned * 100. Percent figures are
// 0 when nothing was planned.
slo_evaluation evaluate_slos(const std::vector<slo_expression>& slos, const slo_input& in);

// The share of planned requests that may fail before a report leads with its failures: an
// unscoped errors SLO's threshold, else 1%.
inline constexpr double default_failure_share = 0.01;
double allowed_failure_share(const std::vector<slo_expression>& slos,
                             std::uint64_t planned) noexcept;

inline constexpr int exit_success = 0;
inline constexpr int exit_slo_violated = 3;
inline constexpr int exit_run_invalid = 4;
inline constexpr int exit_interrupted = 130;

// the design's precedence below 2, 1 and 130 (which the caller decides first): 3 when service
// time alone failed an SLO, else 4 when the run was invalid, else 3 when an SLO failed, else 0.
int exit_code(bool validity_failed, bool any_slo_failed, bool any_service_time_failure) noexcept;

}  // namespace punctual::analysis
