#include "search/step_facts.hpp"

#include <sstream>

#include "analysis/confidence.hpp"
#include "analysis/validity.hpp"
#include "record/outcome.hpp"

namespace punctual::search {

namespace {

double share_of_errors(const record::counters& c) {
  if (c.planned == 0) return 0;
  const auto n = [&](record::outcome o) { return c.outcomes[static_cast<std::size_t>(o)]; };
  const auto errors = n(record::outcome::http_error) + n(record::outcome::socket_error) +
                      n(record::outcome::timeout) + n(record::outcome::dropped) +
                      n(record::outcome::unfinished);
  return static_cast<double>(errors) / static_cast<double>(c.planned);
}

std::vector<slo_figure> figures(const report::verdicts& judged,
                                const analysis::slo_evaluation& point,
                                const std::vector<analysis::slo_expression>& slos,
                                const record::view_set& views,
                                const analysis::interval_series& series) {
  std::vector<slo_figure> out;
  if (!judged.slo || judged.slo->refused) return out;
  for (std::size_t i = 0; i < judged.slo->results.size() && i < point.results.size(); ++i) {
    const auto& b = judged.slo->results[i];
    const auto& p = point.results[i];
    slo_figure f;
    f.text = b.text;
    f.percentile = b.unit == analysis::slo_unit::nanoseconds;
    f.point = p.figure;
    f.lo = p.figure;
    f.bound = b.figure;
    f.threshold = b.threshold;
    f.pass_point = p.pass;
    f.pass_bound = b.pass;
    f.service_time_fails = b.service_time_fails;
    // The whole run's response time has an interval of its own to show; a name's shows its
    // point and its bound.
    const auto& e = slos[i];
    if (f.percentile && e.scope.empty()) {
      const auto ci =
          analysis::percentile_interval(views[record::view::response_time], series, e.percentile);
      if (ci.available()) f.lo = static_cast<double>(ci.lo);
    }
    out.push_back(std::move(f));
  }
  return out;
}

}  // namespace

step_facts facts_of(const run::config& c, const run::result& r, const report::verdicts& judged,
                    const analysis::slo_evaluation& point,
                    const std::vector<analysis::slo_expression>& slos,
                    const analysis::interval_series& series) {
  step_facts f;
  f.interrupted = r.interrupted;
  f.valid = judged.validity.valid();
  for (const auto* check : judged.validity.failures()) {
    f.failed_checks.push_back(check->name);
    f.check_notes.push_back(check->note);
  }
  const auto& views = r.measured.views;
  f.slos = figures(judged, point, slos, views, series);
  std::ostringstream text;
  report::write_text(text, c, r, judged, {});
  std::ostringstream json;
  report::write_json(json, c, r, judged, text.str());
  f.report = nlohmann::ordered_json::parse(json.str());
  const auto& rates = f.report["rates_per_s"];
  f.planned_per_s = rates.value("planned", 0.0);
  f.sent_per_s = rates.value("sent", 0.0);
  f.completed_per_s = rates.value("completed", 0.0);
  f.planned = r.measured.counts.planned;
  f.error_share = share_of_errors(r.measured.counts);
  const auto& response = views[record::view::response_time];
  f.response_p50_ns =
      response.total_count() > 0 ? static_cast<double>(response.value_at_percentile(50)) : 0;
  f.mean_service_ns = analysis::steady_mean_service_ns(views, series);
  const auto& service = views[record::view::service_time];
  if (service.total_count() > 0)
    f.p99_service_ns = static_cast<double>(service.value_at_percentile(99));
  return f;
}

probe_result probe_of(const run::result& r) {
  probe_result p;
  const auto& c = r.measured.counts;
  const auto ok = c.outcomes[static_cast<std::size_t>(record::outcome::ok)];
  p.answered = c.planned > 0 && 2 * ok >= c.planned;
  const auto& response = r.measured.views[record::view::response_time];
  if (response.total_count() > 0) p.p50_ns = static_cast<double>(response.value_at_percentile(50));
  return p;
}

}  // namespace punctual::search
