// The per-name section of the reports (--requests mixes): each name's outcomes, which obey the
// denominator rule on their own, and its response and service time.
#include <fmt/format.h>
#include <fmt/ostream.h>

#include "analysis/text.hpp"
#include "report/json.hpp"
#include "report/run_report.hpp"
#include "report/sections.hpp"

namespace punctual::report {

namespace {

using json = nlohmann::ordered_json;

double share_of(const run::config& c, std::size_t i) {
  double total = 0;
  for (const auto& e : c.mix) total += e.weight;
  return total > 0 ? c.mix[i].weight / total : 0.0;
}

std::string p_cell(const hdr::histogram& h, double p, double bound_from) {
  if (h.total_count() == 0) return "-";
  const std::string v = analysis::duration_text(nanoseconds{h.value_at_percentile(p)});
  return p >= bound_from ? ">=" + v : v;
}

}  // namespace

// "mix of 3 from mix.yaml: home 70% / search 20% / post 10%"
std::string describe_mix(const run::config& c) {
  std::string text = fmt::format("mix of {} from {}:", c.mix.size(), c.mix_file);
  for (std::size_t i = 0; i < c.mix.size(); ++i) {
    text += fmt::format("{} {} {:.3g}%", i ? " /" : "", c.mix[i].name, 100 * share_of(c, i));
  }
  return text;
}

void write_by_name_text(std::ostream& out, const run::config& c, const run::result& r) {
  if (c.mix.empty()) return;
  const auto& views = r.measured.views;
  fmt::print(out, "\n{:<24} {:>8} {:>8} {:>8} {:>8} {:>8}  {:>9} {:>9} {:>9} {:>9}  {:>9}\n",
             "by name", "planned", "ok", "errors", "timeout", "other", "resp p50", "p90", "p99",
             "p99.9", "serv p99");
  for (std::size_t i = 0; i < c.mix.size() && i < r.by_name.size(); ++i) {
    if (c.mix[i].session) continue;  // the sessions have their own table
    const auto& n = r.by_name[i];
    const auto& rt = views.named(i, record::named_view::response_time);
    const auto& st = views.named(i, record::named_view::service_time);
    const auto o = [&](record::outcome x) { return n.outcomes[record::index(x)]; };
    const std::uint64_t errors = o(record::outcome::http_error) + o(record::outcome::socket_error);
    const std::uint64_t other =
        o(record::outcome::dropped) + o(record::outcome::skipped) + o(record::outcome::unfinished);
    const double bound_from = lower_bound_from(n.censored(), rt.total_count());
    fmt::print(out, "{:<24} {:>8} {:>8} {:>8} {:>8} {:>8}  {:>9} {:>9} {:>9} {:>9}  {:>9}\n",
               c.mix[i].name, n.planned, o(record::outcome::ok), errors,
               o(record::outcome::timeout), other, p_cell(rt, 50, bound_from),
               p_cell(rt, 90, bound_from), p_cell(rt, 99, bound_from), p_cell(rt, 99.9, bound_from),
               p_cell(st, 99, 101));
  }
}

json mix_json(const run::config& c) {
  if (c.mix.empty()) return json(nullptr);
  json entries = json::array();
  for (std::size_t i = 0; i < c.mix.size(); ++i) {
    entries.push_back(
        {{"name", c.mix[i].name}, {"weight", c.mix[i].weight}, {"share", share_of(c, i)}});
  }
  return json{{"file", c.mix_file}, {"entries", entries}};
}

json by_name_json(const run::config& c, const run::result& r) {
  json out = json::object();
  for (std::size_t i = 0; i < c.mix.size() && i < r.by_name.size(); ++i) {
    if (c.mix[i].session) continue;  // in `sessions`
    const auto& n = r.by_name[i];
    out[c.mix[i].name] = {
        {"planned", n.planned},
        {"outcomes", outcomes_json(n.outcomes)},
        {"response_time",
         view_json(r.measured.views.named(i, record::named_view::response_time), n.censored())},
        {"service_time",
         view_json(r.measured.views.named(i, record::named_view::service_time), 0)}};
  }
  return out;
}

}  // namespace punctual::report
