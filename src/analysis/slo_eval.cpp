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

double percent_of_planned(std::uint64_t n, std::uint64_t planned) noexcept {
  if (planned == 0) return 0;
  return 100.0 * static_cast<double>(n) / static_cast<double>(planned);
}

std::uint64_t non_ok(const std::array<std::uint64_t, record::outcome_count>& outcomes) noexcept {
  std::uint64_t n = 0;
  for (const auto o : {outcome::http_error, outcome::socket_error, outcome::timeout,
                       outcome::dropped, outcome::skipped, outcome::unfinished}) {
    n += outcomes[record::index(o)];
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

const interval_series& no_intervals() {
  static const interval_series none;
  return none;
}

// What one expression is judged on: the whole run's, or one name's.
struct subject {
  const hdr::histogram& response;
  const hdr::histogram* service;  // none for sessions
  const interval_series& series;  // batch means: only the run's measured response time has one
  std::uint64_t planned;
  const std::array<std::uint64_t, record::outcome_count>& outcomes;
  std::uint64_t completed_in_window;
};

slo_result evaluate_one(const slo_expression& e, const subject& s, bound_mode bound) {
  slo_result r;
  r.text = e.text;
  r.bound = "point";
  r.threshold = e.threshold;
  r.unit = e.unit;
  switch (e.metric) {
    case slo_metric::percentile:
      r.bound = bound == bound_mode::upper ? "upper" : "point";
      r.figure = percentile_figure(s.response, s.series, e.percentile, bound);
      r.pass = compare(r.figure, e.cmp, e.threshold);
      if (s.service) {
        r.service_figure = percentile_figure(*s.service, no_intervals(), e.percentile, bound);
        r.service_time_fails =
            s.service->total_count() > 0 && !compare(r.service_figure, e.cmp, e.threshold);
      }
      return r;
    case slo_metric::errors:
    case slo_metric::timeouts: {
      const auto n = e.metric == slo_metric::errors ? non_ok(s.outcomes)
                                                    : s.outcomes[record::index(outcome::timeout)];
      r.figure =
          e.unit == slo_unit::percent ? percent_of_planned(n, s.planned) : static_cast<double>(n);
      break;
    }
    case slo_metric::rate:
      r.figure = percent_of_planned(s.completed_in_window, s.planned);
      break;
  }
  r.pass = compare(r.figure, e.cmp, e.threshold);
  return r;
}

// A name's figures: no batch means (the series is the run's) and no completed_in_window.
slo_result evaluate_scoped(const slo_expression& e, const slo_input& in) {
  if (!in.by_name || e.name >= in.by_name->size() || e.name >= in.views.name_count()) {
    // resolve_slo_scopes refuses such a name before a run; a caller that skipped it fails.
    slo_result r;
    r.text = e.text;
    r.bound = "point";
    r.threshold = e.threshold;
    r.unit = e.unit;
    r.pass = false;
    return r;
  }
  const record::name_counts& counts = (*in.by_name)[e.name];
  const auto& response = in.views.named(e.name, record::named_view::response_time);
  const auto* service =
      e.session ? nullptr : &in.views.named(e.name, record::named_view::service_time);
  return evaluate_one(e, {response, service, no_intervals(), counts.planned, counts.outcomes, 0},
                      in.bound);
}

// "response time", "checkout.session time", "pay response time", "outcomes", "pay outcomes".
std::string view_words(const slo_expression& e, std::string_view basis) {
  const std::string scope = e.scope.empty() ? std::string() : e.scope + " ";
  if (e.metric != slo_metric::percentile) return scope + "outcomes";
  if (e.session) return scope + "time";
  if (!e.scope.empty()) return scope + "response time";
  if (basis == "reconstructed") return "reconstructed response time";
  if (basis == "uncorrected") return "latency (uncorrected)";
  return "response time";
}

}  // namespace

std::string_view comparator_text(comparator c) noexcept {
  switch (c) {
    case comparator::lt:
      return "<";
    case comparator::le:
      return "<=";
    case comparator::eq:
      return "==";
    case comparator::ge:
      return ">=";
    case comparator::gt:
      return ">";
  }
  return "?";
}

bool compare(double figure, comparator c, double threshold) noexcept {
  const bool equal = std::fabs(figure - threshold) <= 1e-9 * std::max(1.0, std::fabs(threshold));
  switch (c) {
    case comparator::lt:
      return figure < threshold && !equal;
    case comparator::le:
      return figure < threshold || equal;
    case comparator::eq:
      return equal;
    case comparator::ge:
      return figure > threshold || equal;
    case comparator::gt:
      return figure > threshold && !equal;
  }
  return false;
}

bool slo_evaluation::any_failed() const noexcept {
  return std::any_of(results.begin(), results.end(), [](const slo_result& r) { return !r.pass; });
}

bool slo_evaluation::any_service_time_failure() const noexcept {
  return std::any_of(results.begin(), results.end(),
                     [](const slo_result& r) { return r.service_time_fails; });
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
  const bool measured = response == &in.views[record::view::response_time];
  const subject run{*response,
                    &in.views[record::view::service_time],
                    measured ? in.intervals : no_intervals(),
                    in.counts.planned,
                    in.counts.outcomes,
                    in.counts.completed_in_window};
  for (const auto& e : slos) {
    out.results.push_back(e.scope.empty() ? evaluate_one(e, run, in.bound)
                                          : evaluate_scoped(e, in));
    out.results.back().view = view_words(e, out.basis);
  }
  return out;
}

double allowed_failure_share(const std::vector<slo_expression>& slos,
                             std::uint64_t planned) noexcept {
  for (const auto& s : slos) {
    if (s.metric != slo_metric::errors || !s.scope.empty()) continue;
    if (s.unit == slo_unit::percent) return s.threshold / 100;
    return planned ? s.threshold / static_cast<double>(planned) : 0;
  }
  return default_failure_share;
}

std::vector<slo_tail> slo_tails(const std::vector<slo_expression>& slos,
                                const record::view_set& views) {
  std::vector<slo_tail> out;
  for (const auto& s : slos) {
    if (s.metric != slo_metric::percentile) continue;
    const bool seen = std::any_of(out.begin(), out.end(), [&](const slo_tail& t) {
      return t.scope == s.scope && same_percentile(t.percentile, s.percentile);
    });
    if (seen) continue;
    const auto& h = s.scope.empty() ? views[record::view::response_time]
                                    : views.named(s.name, record::named_view::response_time);
    out.push_back({s.scope, s.percentile, h.total_count()});
  }
  return out;
}

int exit_code(bool validity_failed, bool any_slo_failed, bool any_service_time_failure) noexcept {
  if (any_service_time_failure) return exit_slo_violated;
  if (validity_failed) return exit_run_invalid;
  if (any_slo_failed) return exit_slo_violated;
  return exit_success;
}

}  // namespace punctual::analysis
