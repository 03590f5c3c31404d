#include "analysis/validity.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include "analysis/attribution.hpp"
#include "analysis/send_gaps.hpp"
#include "analysis/text.hpp"

namespace punctual::analysis {
namespace {

using record::view;
using std::chrono::nanoseconds;

constexpr double min_send_lag_allowance_ns = 1e6;  // 1 ms: send_lag_allowance's floor
constexpr double connection_headroom = 1.5;
constexpr double stall_factor = 10.0;
// A worker busy less than this share of the run slept most of it (send_lag_advice).
constexpr double idle_worker_share = 0.25;

check make_check(std::string name, std::string_view relation, std::string_view unit,
                 check_level level = check_level::gating) {
  check c;
  c.name = std::move(name);
  c.relation = relation;
  c.unit = unit;
  c.level = level;
  return c;
}

bool slo_names(const std::vector<double>& slo_percentiles, double p) {
  return std::any_of(slo_percentiles.begin(), slo_percentiles.end(),
                     [p](double s) { return same_percentile(s, p); });
}

std::string percentile_name(double p) {
  return p >= 100.0 ? std::string("max") : "p" + percentile_label(p);
}

// "p99.9 and max", "p90, p99 and max".
std::string listed(const std::vector<double>& percentiles) {
  std::string out;
  for (std::size_t i = 0; i < percentiles.size(); ++i) {
    if (i > 0) out += i + 1 == percentiles.size() ? " and " : ", ";
    out += percentile_name(percentiles[i]);
  }
  return out;
}

std::int64_t count_above(const hdr::histogram& h, std::int64_t value) {
  std::int64_t n = 0;
  if (h.total_count() == 0) return 0;
  const std::int32_t last = h.index_of(h.max());
  for (std::int32_t i = h.index_of(value) + 1; i <= last; ++i) n += h.count_at_index(i);
  return n;
}

// Coarse mode's own batching explains a lag up to about a tick (plus a late wake-up); beyond
// that the generator fell behind as in any mode.
std::string send_lag_advice(const validity_input& in, double lag_ns) {
  const auto tick = static_cast<double>(in.send_tick.count());
  if (tick > 0 && lag_ns <= 2 * tick) {
    return "--precision coarse sends what is due once every " + duration_text(tick) +
           ", so its send lag reaches that by design: use --precision fine (the default) or spin";
  }
  // Workers that slept most of the time were not short of CPU: they woke late, which the host
  // of a VM can cause (docs/design.md, "Who waits for whom"). More threads or a lower rate
  // would not help them; staying awake would.
  if (!in.worker_cpu_shares.empty()) {
    const double busiest =
        *std::max_element(in.worker_cpu_shares.begin(), in.worker_cpu_shares.end());
    if (busiest < idle_worker_share) {
      return "the workers slept most of the time (the busiest used " + number_text(busiest * 100) +
             "% of a core), so they were late waking up, which a VM's host can cause: "
             "--precision spin keeps them awake, at a core each" +
             (in.worker_cpu_shares.size() > 1
                  ? ", and --pin keeps each on its own CPU"
                  : ", and -t2 lets one worker send for another that wakes late");
    }
  }
  return "use more threads, --precision spin, or a lower rate";
}

check send_lag_check(const validity_input& in, double p, check_level level) {
  const auto& lag = in.views[view::send_lag];
  const auto& response = in.views[view::response_time];
  check c = make_check("send_lag_" + (p >= 100.0 ? std::string("max") : "p" + percentile_label(p)),
                       "<=", "ns", level);
  c.figure = lag.total_count() > 0 ? static_cast<double>(lag.value_at_percentile(p)) : 0;
  const double rt =
      response.total_count() > 0 ? static_cast<double>(response.value_at_percentile(p)) : 0;
  c.threshold = send_lag_allowance(rt);
  c.pass = c.figure <= c.threshold;
  if (!c.pass && level == check_level::gating) {
    c.note = "the generator fell " + duration_text(c.figure) + " behind its schedule at " +
             (p >= 100.0 ? std::string("the maximum") : "p" + percentile_label(p)) +
             ", a percentile this run is judged on; allowed is the larger of 1ms and 10% of the "
             "response time there (" +
             duration_text(rt) + "): " + send_lag_advice(in, c.figure);
  }
  return c;
}

// Gating at the gated percentiles; at the other summary percentiles a warning that says which
// figures include how much of the generator's own lateness.
void add_send_lag_checks(const validity_input& in, const std::vector<double>& gated,
                         std::vector<check>& out) {
  std::vector<double> all = gated;
  for (const double p : summary_percentiles) {
    if (!slo_names(all, p)) all.push_back(p);
  }
  std::sort(all.begin(), all.end());
  const std::size_t first_warning = out.size();
  std::vector<double> lateness_in;
  bool gated_kept = true;
  for (const double p : all) {
    const bool is_gated = slo_names(gated, p);
    check c = send_lag_check(in, p, is_gated ? check_level::gating : check_level::warning);
    if (!is_gated && !c.pass) lateness_in.push_back(p);
    if (is_gated && !c.pass) gated_kept = false;
    out.push_back(std::move(c));
  }
  if (lateness_in.empty()) return;
  const auto& lag = in.views[view::send_lag];
  const std::int64_t over = count_above(lag, static_cast<std::int64_t>(min_send_lag_allowance_ns));
  const std::string note =
      listed(lateness_in) + (lateness_in.size() == 1 ? " includes" : " include") + " up to " +
      duration_text(static_cast<double>(lag.max())) + " of generator lateness (" +
      std::to_string(over) + (over == 1 ? " request" : " requests") + " over 1ms)" +
      (gated_kept ? "; " + listed(gated) + ", which the run is judged on, is not affected" : "");
  for (std::size_t i = first_warning; i < out.size(); ++i) {
    if (!out[i].pass && out[i].level == check_level::warning) out[i].note = note;
  }
}

// When the generator's own lateness made the worst second worst, the report says so here too.
void add_worst_second_check(const validity_input& in, std::vector<check>& out) {
  if (!in.worst_second) return;
  const attribution a = attribute(*in.worst_second);
  check c = make_check("worst_second_send_lag", "<=", "ns", check_level::warning);
  c.figure = a.send_lag_p99_ns;
  c.threshold = a.send_lag_allowance_ns;
  c.pass = c.figure <= c.threshold;
  if (!c.pass) {
    c.note = "the generator was " + duration_text(c.figure) +
             " late at p99 in the worst second (second " + std::to_string(in.worst_second->second) +
             " of the window, by intended time)" +
             (a.component == record::component::send_lag ? ", the largest part of its response time"
                                                         : "");
  }
  out.push_back(std::move(c));
}

void add_drop_check(const validity_input& in, std::vector<check>& out) {
  check c = make_check("dropped", "<=", "requests");
  c.figure = static_cast<double>(in.counts.outcomes[record::index(record::outcome::dropped)]);
  c.threshold = 0;
  c.pass = c.figure <= 0;
  if (!c.pass) {
    c.note = number_text(c.figure) +
             " requests were dropped because the queue was full; their response times are unknown";
  }
  out.push_back(std::move(c));
}

// The rate -c must carry: this process's share of the planned rate, or the busiest second of a
// plan without one rate (its load counts only this process's requests already). None when the
// connections carry no planned load (the closed model: the server sets the rate).
struct carried_rate {
  double per_s = 0;
  bool busiest_second = false;
};

std::optional<carried_rate> rate_to_carry(const validity_input& in) {
  if (in.rate_per_s) return carried_rate{*in.rate_per_s / std::max(in.shards, 1U), false};
  if (!in.connections_carry_load || !in.load) return std::nullopt;
  return carried_rate{busiest_second_rate(*in.load, in.window), true};
}

// "-c 1 cannot carry 1000 req/s (the busiest second) at a mean service time of 5ms; -c 8 would
// have sufficed".
std::string connection_note(const validity_input& in, const carried_rate& carried, double mean_ns,
                            std::uint32_t streams) {
  const std::string load = number_text(carried.per_s) + " req/s" +
                           (carried.busiest_second ? " (the busiest second)" : "") +
                           " at a mean service time of " + duration_text(mean_ns);
  const std::string needed = std::to_string(connections_needed(carried.per_s, mean_ns));
  if (streams == 1) {
    return "-c " + std::to_string(in.connections) + " cannot carry " + load + "; -c " + needed +
           " would have sufficed";
  }
  return "-c " + std::to_string(in.connections) + " x " + std::to_string(streams) +
         " streams cannot carry " + load + "; " + needed + " stream slots would have sufficed";
}

void add_connection_check(const validity_input& in, std::vector<check>& out) {
  const auto carried = rate_to_carry(in);
  if (!carried) return;
  const double mean_ns = steady_mean_service_ns(in.views, in.intervals);
  const double rate = carried->per_s;
  check c = make_check("connection_cap", ">=", "connections");
  // HTTP/2 counts stream slots: each connection carries --max-streams requests at once.
  const std::uint32_t streams = std::max(in.streams, 1U);
  c.figure = static_cast<double>(in.connections) * streams;
  c.threshold = connection_headroom * rate * mean_ns / 1e9;
  c.pass = c.figure >= c.threshold;
  if (!c.pass) c.note = connection_note(in, *carried, mean_ns, streams);
  out.push_back(std::move(c));
}

// Beyond the -c kept open, a connection per planned request is what a server that closes after
// every answer asks for; much more means connections broke before they were used.
void add_reopen_warning(const validity_input& in, std::vector<check>& out) {
  if (in.planned_all == 0 || in.connections_opened == 0) return;
  check c = make_check("reopened_per_planned", "<=", "connections", check_level::warning);
  const std::uint64_t kept = std::min<std::uint64_t>(in.connections, in.connections_opened);
  c.figure =
      static_cast<double>(in.connections_opened - kept) / static_cast<double>(in.planned_all);
  c.threshold = reopened_per_planned_warning;
  c.pass = c.figure <= c.threshold;
  if (!c.pass) {
    c.note = std::to_string(in.connections_opened) + " connections opened for " +
             std::to_string(in.planned_all) + " planned requests: the server closed, reset or " +
             "refused them before they were used (see the socket errors)";
  }
  out.push_back(std::move(c));
}

void add_start_lag_check(const validity_input& in, std::vector<check>& out) {
  if (in.start_lag) out.push_back(start_lag_check(*in.start_lag, in.shard));
}

void add_user_cap_check(const validity_input& in, std::vector<check>& out) {
  if (in.max_users == 0 || !in.load || in.load->planned.empty() || in.mean_session_ns <= 0) return;
  const auto peak =
      static_cast<double>(*std::max_element(in.load->planned.begin(), in.load->planned.end()));
  check c = make_check("user_cap", ">=", "users");
  c.figure = in.max_users;
  c.threshold = connection_headroom * peak * in.mean_session_ns / 1e9;
  c.pass = c.figure >= c.threshold;
  if (!c.pass) {
    c.note = "max_users " + std::to_string(in.max_users) + " cannot carry " + number_text(peak) +
             " users/s (the busiest second) at a mean session time of " +
             duration_text(in.mean_session_ns) + "; max_users " +
             std::to_string(connections_needed(peak, in.mean_session_ns)) + " would have sufficed";
  }
  out.push_back(std::move(c));
}

// "buy.session's p99 has 4 samples beyond it".
std::string thin_claim(const slo_tail& tail, double beyond) {
  return (tail.scope.empty() ? "" : tail.scope + "'s ") + "p" + percentile_label(tail.percentile) +
         " has " + number_text(beyond) + " samples beyond it";
}

// How long a run at the observed rate puts 10 samples beyond `tail`'s percentile; nullopt when
// nothing was observed.
std::optional<double> resolving_ns(const validity_input& in, const slo_tail& tail) {
  const double needed =
      std::ceil(static_cast<double>(min_samples_beyond) / (1.0 - tail.percentile / 100.0) - 1e-9);
  const double seconds = std::chrono::duration<double>(in.window).count();
  const double rate = seconds > 0 ? static_cast<double>(tail.samples) / seconds : 0;
  if (rate <= 0) return std::nullopt;
  return needed / rate * 1e9;
}

std::string observed_rate(const validity_input& in, const slo_tail& tail) {
  const double seconds = std::chrono::duration<double>(in.window).count();
  return number_text(static_cast<double>(tail.samples) / seconds) +
         (tail.scope.empty() ? " req/s" : "/s");
}

// "a run of 5s at the observed 200 req/s would resolve it".
std::string thin_remedy(const validity_input& in, const slo_tail& tail) {
  const auto ns = resolving_ns(in, tail);
  if (!ns) return "no samples were observed";
  return "a run of " + duration_text(*ns) + " at the observed " + observed_rate(in, tail) +
         " would resolve it";
}

// A check that `tail`'s percentile has at least 10 samples beyond it; p == 100 is exempt.
check samples_beyond_check(const validity_input& in, const slo_tail& tail, check_level level) {
  const double share = 1.0 - tail.percentile / 100.0;
  check c = make_check("samples_beyond_" + (tail.scope.empty() ? std::string() : tail.scope + "_") +
                           "p" + percentile_label(tail.percentile),
                       ">=", "samples", level);
  c.figure = static_cast<double>(tail.samples) * share;
  c.threshold = static_cast<double>(min_samples_beyond);
  // Compare with a little slack: n * (1 - p/100) is inexact in binary (e.g. 1000 * 0.01).
  c.pass = c.figure >= c.threshold - 1e-9;
  if (!c.pass) {
    c.note = thin_claim(tail, c.figure) + ", fewer than " + std::to_string(min_samples_beyond) +
             "; " + thin_remedy(in, tail);
  }
  return c;
}

// Gating for each tail an SLO judges; a warning at every other summary percentile of the run's
// response time (p99 among them when no SLO judges it). The thin warnings share one note, which
// the text report prints once, with the run length that resolves each.
void add_samples_checks(const validity_input& in, std::vector<check>& out) {
  std::vector<double> judged;
  for (const auto& tail : in.slo_tails) {
    if (tail.percentile >= 100.0) continue;
    out.push_back(samples_beyond_check(in, tail, check_level::gating));
    if (tail.scope.empty()) judged.push_back(tail.percentile);
  }
  const std::int64_t n = in.views[view::response_time].total_count();
  std::vector<std::size_t> thin;  // the failed warnings: their checks, and their tails
  std::vector<slo_tail> thin_tails;
  for (const double p : summary_percentiles) {
    if (p >= 100.0 || slo_names(judged, p)) continue;
    const slo_tail tail{"", p, n};
    out.push_back(samples_beyond_check(in, tail, check_level::warning));
    if (out.back().pass) continue;
    thin.push_back(out.size() - 1);
    thin_tails.push_back(tail);
  }
  if (thin.size() < 2) return;
  std::string claims;
  std::string runs;
  for (std::size_t i = 0; i < thin.size(); ++i) {
    const std::string sep = i == 0 ? "" : i + 1 == thin.size() ? " and " : ", ";
    claims += sep + "p" + percentile_label(thin_tails[i].percentile) + " has " +
              number_text(out[thin[i]].figure);
    runs += sep + duration_text(resolving_ns(in, thin_tails[i]).value_or(0));
  }
  const std::string note = claims + " samples beyond it, fewer than " +
                           std::to_string(min_samples_beyond) + " each; runs of " + runs +
                           " at the observed " + observed_rate(in, thin_tails.back()) +
                           " would resolve them";
  for (const std::size_t i : thin) out[i].note = note;
}

void add_cpu_warnings(const validity_input& in, std::vector<check>& out) {
  for (std::size_t w = 0; w < in.worker_cpu_shares.size(); ++w) {
    check c = make_check("worker_cpu_" + std::to_string(w), "<=", "share", check_level::warning);
    c.figure = in.worker_cpu_shares[w];
    c.threshold = cpu_share_warning;
    c.pass = c.figure <= c.threshold;
    if (!c.pass) {
      c.note = "worker " + std::to_string(w) + " used " + number_text(c.figure * 100) +
               "% of a CPU; it may not keep its schedule: use more threads";
    }
    out.push_back(std::move(c));
  }
}

// Skipped below poisson_ks_min_samples gaps, where sampling noise dominates the threshold.
void add_poisson_warning(const validity_input& in, std::vector<check>& out) {
  if (!in.poisson_send_gaps || !in.rate_per_s) return;
  const gap_fit fit =
      fit_erlang(*in.poisson_send_gaps, in.threads * std::max(in.shards, 1U), *in.rate_per_s);
  if (fit.samples < poisson_ks_min_samples) return;
  check c = make_check("poisson_send_gaps", "<=", "ks_distance", check_level::warning);
  c.figure = fit.ks_distance;
  c.threshold = poisson_ks_threshold(fit.samples);
  c.pass = c.figure <= c.threshold;
  if (!c.pass) {
    c.note = "the actual send gaps are " + number_text(c.figure) + " (KS distance) from the " +
             "Poisson schedule's; the server saw a burstier or smoother process than planned: " +
             "use --precision spin, more threads, or a lower rate";
  }
  out.push_back(std::move(c));
}

}  // namespace

bool validity_report::valid() const noexcept {
  return std::all_of(checks.begin(), checks.end(),
                     [](const check& c) { return c.pass || c.level == check_level::warning; });
}

std::vector<const check*> validity_report::failures() const {
  std::vector<const check*> out;
  for (const auto& c : checks) {
    if (!c.pass && c.level == check_level::gating) out.push_back(&c);
  }
  return out;
}

std::vector<const check*> validity_report::warnings() const {
  std::vector<const check*> out;
  for (const auto& c : checks) {
    if (!c.pass && c.level == check_level::warning) out.push_back(&c);
  }
  return out;
}

std::uint32_t connections_needed(double rate_per_s, double mean_service_ns) noexcept {
  const double c = std::ceil(connection_headroom * rate_per_s * mean_service_ns / 1e9 - 1e-9);
  if (!(c >= 1)) return 1;
  return c >= 4e9 ? 4'000'000'000U : static_cast<std::uint32_t>(c);
}

double busiest_second_rate(const record::per_second_load& load, nanoseconds window) {
  const std::int64_t whole = std::max<std::int64_t>(0, window / std::chrono::seconds(1));
  const auto judged = std::min(load.steps.size(), static_cast<std::size_t>(whole));
  if (judged > 0) {
    return static_cast<double>(*std::max_element(load.steps.begin(), load.steps.begin() + judged));
  }
  // A window shorter than a second: its one second, scaled to a whole one.
  if (load.steps.empty() || window.count() <= 0) return 0;
  return static_cast<double>(load.steps.front()) * 1e9 / static_cast<double>(window.count());
}

double steady_mean_service_ns(const record::view_set& views,
                              const interval_series& intervals) noexcept {
  const auto& service = views[view::service_time];
  if (service.total_count() == 0) return 0;
  const double median = static_cast<double>(service.value_at_percentile(50));
  double weighted = 0;
  double count = 0;
  for (std::size_t i = 0; i < intervals.size(); ++i) {
    const auto& row = intervals.at(i);
    if (row.service_count == 0 || static_cast<double>(row.service_p50_ns) > stall_factor * median)
      continue;
    weighted += row.service_mean_ns * static_cast<double>(row.service_count);
    count += static_cast<double>(row.service_count);
  }
  return count > 0 ? weighted / count : service.mean();
}

std::vector<double> gated_percentiles(const std::vector<double>& slo_percentiles) {
  std::vector<double> gated;
  for (const double p : slo_percentiles) {
    if (!slo_names(gated, p)) gated.push_back(std::min(p, 100.0));
  }
  if (gated.empty()) gated.push_back(99.0);
  std::sort(gated.begin(), gated.end());
  return gated;
}

check schedule_check(const record::per_second_load& load, nanoseconds window) {
  check c = make_check("schedule_kept", "<=", "seconds");
  c.threshold = 0;
  const auto whole =
      static_cast<std::size_t>(std::max<std::int64_t>(0, window / std::chrono::seconds(1)));
  std::size_t worst = 0;
  double worst_excess = 0;
  for (std::size_t s = 0; s < whole && s < load.planned.size(); ++s) {
    const std::uint64_t late = s < load.late.size() ? load.late[s] : 0;
    const double allowed = std::max(schedule_late_share * static_cast<double>(load.planned[s]),
                                    static_cast<double>(schedule_late_floor));
    if (static_cast<double>(late) <= allowed) continue;
    c.figure += 1;
    if (static_cast<double>(late) - allowed > worst_excess) {
      worst_excess = static_cast<double>(late) - allowed;
      worst = s;
    }
  }
  c.pass = c.figure <= c.threshold;
  if (!c.pass) {
    const std::uint64_t late = load.late[worst];
    c.note = "the generator did not keep its schedule in " + number_text(c.figure) + " of " +
             std::to_string(whole) + " seconds; worst, second " + std::to_string(worst) +
             " of the window: " + std::to_string(late) + " of " +
             std::to_string(load.planned[worst]) +
             " requests intended in it had not been sent 10ms after it ended (at most " +
             number_text(std::max(
                 std::floor(schedule_late_share * static_cast<double>(load.planned[worst])),
                 static_cast<double>(schedule_late_floor))) +
             " allowed): the server did not get the planned load; use more threads, fewer "
             "connections per thread, or a lower rate";
  }
  return c;
}

check start_lag_check(nanoseconds lag, const std::string& shard) {
  check c = make_check("start_lag", "<=", "ns");
  c.figure = static_cast<double>(lag.count());
  c.threshold = static_cast<double>(max_start_lag.count());
  c.pass = lag <= max_start_lag;
  if (!c.pass) {
    c.note = shard + " began its schedule " + duration_text(c.figure) +
             " after --start-at (allowed: " + duration_text(c.threshold) +
             "): its requests until then were sent late, in a burst; start the shards earlier "
             "(a longer lead time) or check its clock";
  }
  return c;
}

validity_report check_validity(const validity_input& in) {
  validity_report report;
  auto& out = report.checks;
  const std::vector<double> gated = gated_percentiles(in.slo_percentiles);
  add_drop_check(in, out);
  if (in.load) out.push_back(schedule_check(*in.load, in.window));
  add_send_lag_checks(in, gated, out);
  add_samples_checks(in, out);
  add_connection_check(in, out);
  add_user_cap_check(in, out);
  add_start_lag_check(in, out);
  add_cpu_warnings(in, out);
  add_poisson_warning(in, out);
  add_reopen_warning(in, out);
  add_worst_second_check(in, out);
  // Gating checks first, then warnings, each group in the order above.
  std::stable_partition(out.begin(), out.end(),
                        [](const check& c) { return c.level == check_level::gating; });
  return report;
}

}  // namespace punctual::analysis
