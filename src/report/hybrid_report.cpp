// The hybrid model in the reports: the header in words, and the sessions (per scenario: outcomes
// and session time, from the arrival to the last step's completion or the failure that ended it).
#include <fmt/format.h>
#include <fmt/ostream.h>

#include "analysis/text.hpp"
#include "report/json.hpp"
#include "report/run_report.hpp"
#include "report/sections.hpp"
#include "run/describe.hpp"
#include "schedule/plan.hpp"

namespace punctual::report {

namespace {

using json = nlohmann::ordered_json;

double share_of(const run::hybrid_model& h, std::size_t i) {
  double total = 0;
  for (const auto& s : h.scenarios) total += s.weight;
  return total > 0 ? h.scenarios[i].weight / total : 0.0;
}

// "think exp:2s" when every step thinks alike, else each scenario's steps in order.
std::string thinks(const run::hybrid_model& h) {
  std::vector<std::string> all;
  for (const auto& sc : h.scenarios) {
    for (const auto& st : sc.steps) all.push_back(run::describe(st.think));
  }
  if (std::all_of(all.begin(), all.end(), [&](const auto& t) { return t == all.front(); })) {
    return "think " + all.front();
  }
  std::string text = "think";
  for (const auto& sc : h.scenarios) {
    text += fmt::format(" {}:", sc.name);
    for (std::size_t i = 0; i < sc.steps.size(); ++i) {
      text += (i ? "," : "") + run::describe(sc.steps[i].think);
    }
  }
  return text;
}

std::uint64_t sessions_planned(const run::config& c, const run::result& r) {
  std::uint64_t n = 0;
  for (const auto& sc : c.hybrid()->scenarios) {
    if (sc.session_name < r.by_name.size()) n += r.by_name[sc.session_name].planned;
  }
  return n;
}

// "  failed at: login 3, pay 1": the steps whose failure ended this scenario's sessions.
void write_failed_at(std::ostream& out, const run::config& c, const run::result& r,
                     const run::hybrid_scenario& sc) {
  std::string text;
  for (const auto& st : sc.steps) {
    if (st.name >= r.by_name.size() || r.by_name[st.name].sessions_failed_here == 0) continue;
    text += fmt::format("{}{} {}", text.empty() ? "" : ", ", c.mix[st.name].name,
                        r.by_name[st.name].sessions_failed_here);
  }
  if (!text.empty()) fmt::print(out, "  failed at: {}\n", text);
}

}  // namespace

// "hybrid from s.yaml, user arrivals: poisson arrivals (seed 1), 50 users/s for 60s (3000
// sessions planned), scenarios checkout 70% / browse 30%, think exp:2s, at most 500 users
// (queue), ..."
std::string describe_hybrid(const run::config& c, const run::result& r) {
  const auto& h = *c.hybrid();
  std::string text =
      fmt::format("hybrid from {}, user arrivals: {} for {} ({} sessions planned), scenarios",
                  h.file, schedule::describe(*c.plan(), "users/s"),
                  analysis::duration_text(c.duration), sessions_planned(c, r));
  for (std::size_t i = 0; i < h.scenarios.size(); ++i) {
    text += fmt::format("{} {} {:.3g}%", i ? " /" : "", h.scenarios[i].name, 100 * share_of(h, i));
  }
  text += ", " + thinks(h);
  text += h.max_users ? fmt::format(", at most {} users ({})", h.max_users,
                                    h.drop_on_overload ? "drop" : "queue")
                      : std::string(", users unbounded");
  text += fmt::format(", on error {}, graceful stop {}", h.continue_on_error ? "continue" : "abort",
                      analysis::duration_text(h.graceful_stop));
  return text;
}

void write_sessions_text(std::ostream& out, const run::config& c, const run::result& r) {
  if (!c.hybrid()) return;
  fmt::print(out, "\n{:<24} {:>8} {:>8} {:>8} {:>8} {:>8}  {:>10} {:>10} {:>10} {:>10}\n",
             "sessions", "planned", "ok", "failed", "skipped", "other", "time p50", "p90", "p99",
             "max");
  for (const auto& sc : c.hybrid()->scenarios) {
    if (sc.session_name >= r.by_name.size()) continue;
    const auto& n = r.by_name[sc.session_name];
    const auto o = [&](record::outcome x) { return n.outcomes[record::index(x)]; };
    const std::uint64_t failed = o(record::outcome::http_error) + o(record::outcome::socket_error) +
                                 o(record::outcome::timeout);
    const std::uint64_t other = o(record::outcome::dropped) + o(record::outcome::unfinished);
    const auto& h = r.measured.views.named(sc.session_name, record::named_view::response_time);
    const auto cell = [&](double p) {
      return h.total_count() ? analysis::duration_text(nanoseconds{h.value_at_percentile(p)})
                             : std::string("-");
    };
    fmt::print(out, "{:<24} {:>8} {:>8} {:>8} {:>8} {:>8}  {:>10} {:>10} {:>10} {:>10}\n", sc.name,
               n.planned, o(record::outcome::ok), failed, o(record::outcome::skipped), other,
               cell(50), cell(90), cell(99), cell(100));
    write_failed_at(out, c, r, sc);
  }
}

json hybrid_model_json(const run::config& c) {
  const auto& h = *c.hybrid();
  json scenarios = json::array();
  for (std::size_t i = 0; i < h.scenarios.size(); ++i) {
    json steps = json::array();
    for (const auto& st : h.scenarios[i].steps) {
      steps.push_back({{"name", c.mix[st.name].name}, {"think", run::describe(st.think)}});
    }
    scenarios.push_back({{"name", h.scenarios[i].name},
                         {"weight", h.scenarios[i].weight},
                         {"share", share_of(h, i)},
                         {"steps", steps}});
  }
  return json{{"file", h.file},
              {"scenarios", scenarios},
              {"max_users", h.max_users},
              {"on_overload", h.drop_on_overload ? "drop" : "queue"},
              {"on_error", h.continue_on_error ? "continue" : "abort"},
              {"graceful_stop_ns", h.graceful_stop.count()},
              {"connection", h.per_user ? "per_user" : "pool"},
              {"cookies", h.cookies}};
}

json sessions_json(const run::config& c, const run::result& r) {
  json out = json::object();
  for (const auto& sc : c.hybrid()->scenarios) {
    if (sc.session_name >= r.by_name.size()) continue;
    const auto& n = r.by_name[sc.session_name];
    json failed_at = json::object();
    for (const auto& st : sc.steps) {
      if (st.name < r.by_name.size())
        failed_at[c.mix[st.name].name] = r.by_name[st.name].sessions_failed_here;
    }
    out[sc.name] = {
        {"planned", n.planned},
        {"outcomes", outcomes_json(n.outcomes)},
        {"failed_at", failed_at},
        {"session_time",
         view_json(r.measured.views.named(sc.session_name, record::named_view::response_time),
                   n.censored())}};
  }
  return out;
}

}  // namespace punctual::report
