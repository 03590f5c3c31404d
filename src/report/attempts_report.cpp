// The retry section of the reports: attempts apart from outcomes, and the amplification, which
// is the load the server really took (attempts / planned), overall and per second.
#include <fmt/format.h>
#include <fmt/ostream.h>

#include "report/json.hpp"
#include "report/run_report.hpp"
#include "report/sections.hpp"
#include "run/describe.hpp"

namespace punctual::report {
namespace {

double ratio(std::uint64_t a, std::uint64_t b) {
  return b ? static_cast<double>(a) / static_cast<double>(b) : 0.0;
}

struct peak {
  double amplification = 0;
  std::size_t second = 0;
};

// The second whose attempts were the highest multiple of its planned requests. Seconds that
// planned nothing (the drain after the window) have no ratio and are skipped.
peak peak_second(const record::per_second_load& load) {
  peak best;
  for (std::size_t s = 0; s < load.planned.size() && s < load.attempts.size(); ++s) {
    const double a = ratio(load.attempts[s], load.planned[s]);
    if (load.planned[s] && a > best.amplification) best = {a, s};
  }
  return best;
}

}  // namespace

void write_attempts_text(std::ostream& out, const run::config& config, const run::result& r) {
  if (!config.retry().enabled()) return;
  const auto& c = r.measured.counts;
  const auto& a = c.attempts;
  const peak top = peak_second(r.load);
  fmt::print(
      out,
      "attempts: {} for {} planned (amplification {:.3f}x overall, {:.3f}x at most, in second {}); "
      "retries {}",
      a.total, c.planned, ratio(a.total, c.planned), top.amplification, top.second, a.retries);
  std::string causes;
  for (std::size_t i = 0; i < record::retry_cause_count; ++i) {
    if (a.by_cause[i])
      causes += fmt::format("{}{} {}", causes.empty() ? "" : ", ", record::retry_cause_names[i],
                            a.by_cause[i]);
  }
  if (!causes.empty()) fmt::print(out, " ({})", causes);
  if (a.resent) fmt::print(out, "; HTTP/2 resends {}", a.resent);
  fmt::print(out, "; not retried: {} refused by the budget, {} past the deadline\n",
             a.refused_by_budget, a.past_deadline);
}

nlohmann::ordered_json attempts_json(const run::config& config, const run::result& r) {
  using json = nlohmann::ordered_json;
  const auto& c = r.measured.counts;
  const auto& a = c.attempts;
  json by_cause = json::object();
  for (std::size_t i = 0; i < record::retry_cause_count; ++i) {
    by_cause[std::string(record::retry_cause_names[i])] = a.by_cause[i];
  }
  json doc{{"total", a.total},
           {"first", a.first},
           {"never_sent", c.planned > a.first ? c.planned - a.first : 0},
           {"retries", a.retries},
           {"resent", a.resent},
           {"retries_by_cause", by_cause},
           {"refused_by_budget", a.refused_by_budget},
           {"past_deadline", a.past_deadline},
           {"amplification", ratio(a.total, c.planned)}};
  if (!config.retry().enabled()) return doc;
  const peak top = peak_second(r.load);
  doc["amplification_max"] = top.amplification;
  // One entry per second from the window's start, through the drain's last attempt.
  json seconds = json::array();
  std::size_t last = 0;
  for (std::size_t s = 0; s < r.load.attempts.size(); ++s) {
    if (r.load.attempts[s] || (s < r.load.planned.size() && r.load.planned[s])) last = s + 1;
  }
  for (std::size_t s = 0; s < last; ++s) {
    const std::uint64_t planned = s < r.load.planned.size() ? r.load.planned[s] : 0;
    const std::uint64_t attempts = r.load.attempts[s];
    json entry{{"second", s}, {"planned", planned}, {"attempts", attempts}};
    entry["amplification"] = planned ? json(ratio(attempts, planned)) : json(nullptr);
    seconds.push_back(entry);
  }
  doc["per_second"] = seconds;
  return doc;
}

nlohmann::ordered_json retry_policy_json(const run::config& config) {
  using json = nlohmann::ordered_json;
  if (!config.retry().enabled()) return json{{"retries", 0}};
  const auto& p = config.retry();
  json on = json::array();
  for (std::size_t i = 0; i < record::retry_cause_count; ++i) {
    if (p.retries_on(static_cast<record::retry_cause>(i)))
      on.push_back(record::retry_cause_names[i]);
  }
  json doc{{"retries", p.retries},
           {"on", on},
           {"backoff",
            {{"kind", "exp"},
             {"jitter", "full"},
             {"base_ns", p.backoff_base.count()},
             {"cap_ns", p.backoff_cap.count()}}},
           {"budget", p.budget >= 0 ? json(p.budget) : json(nullptr)},
           {"attempt_timeout_ns",
            p.attempt_timeout.count() ? json(p.attempt_timeout.count()) : json(nullptr)},
           {"description", run::describe(p)}};
  return doc;
}

}  // namespace punctual::report
