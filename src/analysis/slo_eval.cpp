// Evaluation of --slo expressions against a finished run, and the exit code they lead to.
#include <algorithm>
#include <cmath>

#include "analysis/confidence.hpp"
#include "analysis/slo.hpp"

namespace punctual::analysis {
namespace {

using record::outcome;

constexpr std::string_view closed_refusal =
    "closed-model run: latencies were measured from the actual send, so they hide the waits "
    "the server caused (coordinated omission); use --expected-interval to gate on reconstructed "
    "data, or --allow-uncorrected to gate on these numbers anyway";

double percent_of_planned(std::uint64_t n, const record::counters& counts) noexcept {
  if (counts.planned == 0) return 0;
  return 100.0 * static_cast<double>(n) / static_cast<double>(counts.planned);
}

std::uint64_t non_ok(const record::counters& counts) noexcept {
  std::uint64_t n = 0;
  for (const auto o : {outcome::http_error, outcome::socket_error, outcome::timeout, outcome::dropped,
                       outcome::skipped, outcome::unfinished}) {
    n += counts.outcomes[record::index(o)];
  }
  return n;
}

// The figure a percentile SLO is judged on: the point estimate, or the upper 95% bound.
double percentile_figure(const hdr::histogram& h, const interval_series& series, double p,
                         bound_mode bound) {
  if (h.total_count() == 0) return 0;
  if (bound == bound_mode::point) return static_cast<double>(h.value_at_percentile(p));
  const auto ci = percentile_interval(h, series, p);
  return static_cast<double>(ci.hi);
}

slo_result evaluate_one(const slo_expression& e, const slo_input& in, const hdr::histogram& response) {
  slo_result r;
  r.text = e.text;
  r.bound = "point";
  r.threshold = e.threshold;
  r.unit = e.unit;
  switch (e.metric) {
    case slo_metric::percentile: {
      // Batch means is only meaningful for the series the engine fed: the measured response time.
      static const interval_series no_intervals;
      const interval_series& series = &response == &in.views[record::view::response_time] ? in.intervals
                                                                                         : no_intervals;
      r.bound = in.bound == bound_mode::upper ? "upper" : "point";
      r.figure = percentile_figure(response, series, e.percentile, in.bound);
      r.pass = compare(r.figure, e.cmp, e.threshold);
      r.service_figure =
          percentile_figure(in.views[record::view::service_time], no_intervals, e.percentile, in.bound);
      r.service_time_fails = in.views[record::view::service_time].total_count() > 0 &&
                             !compare(r.service_figure, e.cmp, e.threshold);
      return r;
    }
    case slo_metric::errors: {
      const auto n = non_ok(in.counts);
      r.figure = e.unit == slo_unit::percent ? percent_of_planned(n, in.counts) : static_cast<double>(n);
      break;
    }
    case slo_metric::timeouts: {
      const auto n = in.counts.outcomes[record::index(outcome::timeout)];
      r.figure = e.unit == slo_unit::percent ? percent_of_planned(n, in.counts) : static_cast<double>(n);
      break;
    }
    case slo_metric::rate:
      r.figure = percent_of_planned(in.counts.completed_in_window, in.counts);
      break;
  }
  r.pass = compare(r.figure, e.cmp, e.threshold);
  return r;
}

}  // namespace

std::string_view comparator_text(comparator c) noexcept {
  switch (c) {
    case comparator::lt: return "<";
    case comparator::le: return "<=";
    case comparator::eq: return "==";
    case comparator::ge: return ">=";
    case comparator::gt: return ">";
  }
  return "?";
}

bool compare(double figure, comparator c, double threshold) noexcept {
  const bool equal = std::fabs(figure - threshold) <= 1e-9 * std::max(1.0, std::fabs(threshold));
  switch (c) {
    case comparator::lt: return figure < threshold && !equal;
    case comparator::le: return figure < threshold || equal;
    case comparator::eq: return equal;
    case comparator::ge: return figure > threshold || equal;
    case comparator::gt: return figure > threshold && !equal;
  }
  return false;
}

bool slo_evaluation::any_failed() const noexcept {
  return std::any_of(results.begin(), results.end(), [](const slo_result& r) { return !r.pass; });
}

bool slo_evaluation::any_service_time_failure() const noexcept {
  return std::any_of(results.begin(), results.end(), [](const slo_result& r) { return r.service_time_fails; });
}

slo_evaluation evaluate_slos(const std::vector<slo_expression>& slos, const slo_input& in) {
  slo_evaluation out;
  const hdr::histogram* response = &in.views[record::view::response_time];
  out.basis = "response_time";
  if (in.closed_model) {
    if (in.reconstructed != nullptr) {
      response = in.reconstructed;
      out.basis = "reconstructed";
    } else if (in.allow_uncorrected) {
      out.basis = "uncorrected";
    } else {
      out.refused = true;
      out.basis = "none";  // a closed run has no response time to gate on
      out.refusal = std::string(closed_refusal);
      return out;
    }
  }
  out.results.reserve(slos.size());
  for (const auto& e : slos) out.results.push_back(evaluate_one(e, in, *response));
  return out;
}

int exit_code(bool validity_failed, bool any_slo_failed, bool any_service_time_failure) noexcept {
  if (any_service_time_failure) return exit_slo_violated;
  if (validity_failed) return exit_run_invalid;
  if (any_slo_failed) return exit_slo_violated;
  return exit_success;
}

}  // namespace punctual::analysis
