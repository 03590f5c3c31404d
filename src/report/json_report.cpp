#include <array>

#include "report/json.hpp"
#include "report/run_report.hpp"
#include "report/sections.hpp"
#include "report/workload_report.hpp"
#include "run/describe.hpp"
#include "schedule/plan.hpp"
#include "schedule/trace.hpp"

namespace punctual::report {

namespace {

using json = nlohmann::ordered_json;

// docs/report.schema.json describes this document; bump only on an incompatible change.
constexpr int schema_version = 2;

std::string percentile_key(double p) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", p);
  return buf;
}

json latency_json(const run::result& r, const run::config& config, const verdicts& verdict) {
  json latency = json::object();
  const auto& c = r.measured.counts;
  for (std::size_t i = 0; i < record::view_count; ++i) {
    const auto v = static_cast<record::view>(i);
    if (!record::reported(v, config.tls.enabled)) continue;
    const bool censorable = v == record::view::response_time;
    latency[std::string(record::view_names[i])] =
        view_json(r.measured.views[v], censorable ? c.censored : 0);
  }
  const json ci = ci_json(verdict);
  latency["response_time"]["percentiles_ci_ns"] = ci["ci"];
  latency["response_time"]["percentiles_ci_method"] = ci["methods"];
  latency["response_time"]["percentiles_ci_unresolved"] = ci["unresolved"];
  if (config.expected_interval()) {
    json rec = view_json(reconstructed(r, *config.expected_interval()), c.censored);
    rec["note"] = "reconstructed: samples added after the fact by expected-interval correction";
    latency["reconstructed"] = rec;
  }
  return latency;
}

json trace_json(const schedule::plan& p) {
  const auto s = schedule::summarize(*p.replay, p.warmup + p.duration);
  return json{{"file", p.replay->source()},
              {"entries", p.replay->size()},
              {"requests", s.requests},
              {"mean_rate_per_s", s.mean_rate_per_s}};
}

json model_json(const run::config& c, const run::result& r) {
  json m{{"kind", run::name(c.kind())}};
  if (c.plan()) m["arrival"] = run::name(c.plan()->arrival);
  const auto rate = c.rate_per_s();
  m["rate_per_s"] = rate ? json(*rate) : json(nullptr);
  m["connections"] = c.connections;
  m["threads"] = c.threads;
  m["seed"] = c.plan() ? c.plan()->seed : 1;
  // The hybrid model's plan is of users, not requests.
  m["schedule"] =
      c.plan() ? schedule::describe(*c.plan(), c.hybrid() ? "users/s" : "req/s") : std::string();
  if (c.plan() && c.plan()->arrival == schedule::arrival_kind::trace)
    m["trace"] = trace_json(*c.plan());
  if (c.kind() == run::model_kind::closed) {
    m["think_ns"] = c.closed()->think.count();
    m["users"] = c.connections * run::requests_per_connection(c, r);
  }
  m["precision"] = run::name(c.precision);
  if (c.hybrid()) {
    m["scenario"] = hybrid_model_json(c);
  } else if (!c.mix.empty()) {
    m["requests"] = mix_json(c);
  }
  return m;
}

// Where the run's schedule sits in time, and, for models with a schedule, what a merge of
// shards needs to judge it again: the slice, the plan's digest and the per-second load.
json schedule_json(const run::config& config, const run::result& r) {
  json s{{"start_unix_ns", r.start.unix.count()}, {"start_mono_ns", r.start.mono.count()},
         {"warmup_ns", config.warmup.count()},    {"duration_ns", config.duration.count()},
         {"window_ns", r.window.count()},         {"planned", r.measured.counts.planned}};
  if (!config.plan()) return s;
  s["shard"] = {{"index", config.shard_index()}, {"count", config.shards()}};
  s["plan_sha256"] = config.plan_sha256;
  s["start_at_unix_ns"] = config.start_at ? json(config.start_at->count()) : json(nullptr);
  s["start_lag_ns"] = r.start_lag ? json(r.start_lag->count()) : json(nullptr);
  if (config.start_at) s["clock_assumption"] = std::string(clock_assumption);
  s["per_second_planned"] = r.load.planned;
  s["per_second_late"] = r.load.late;
  return s;
}

json correction_json(const run::config& c) {
  if (c.kind() != run::model_kind::closed) return json{{"kind", "intended-start"}};
  if (!c.expected_interval()) return json{{"kind", "none"}};
  return json{{"kind", "expected-interval"},
              {"expected_interval_ns", c.expected_interval()->count()}};
}

// Per worker and over the run: claims both ways, the longest pause seen from inside, the
// host's steal time where the kernel reports it, and how many workers and where they ran.
json generator_json(const run::config& c, const run::result& r) {
  json workers = json::array();
  std::uint64_t sent_for_others = 0;
  std::uint64_t claimed_away = 0;
  nanoseconds longest{};
  for (const auto& w : r.workers) {
    const double busy = static_cast<double>(w.busy_wall.count());
    workers.push_back({{"cpu_ns", w.cpu.count()},
                       {"cpu_share", busy > 0 ? static_cast<double>(w.cpu.count()) / busy : 0.0},
                       {"sleeps", w.sleeps},
                       {"wakeups", w.wakeups},
                       {"planned", w.planned},
                       {"sent_for_others", w.sent_for_others},
                       {"claimed_away", w.claimed_away},
                       {"outcomes", w.outcomes},
                       {"longest_wake_lateness_ns", w.longest_wake_lateness.count()}});
    if (w.pinned_cpu) workers.back()["pinned_cpu"] = *w.pinned_cpu;
    sent_for_others += w.sent_for_others;
    claimed_away += w.claimed_away;
    longest = std::max(longest, w.longest_wake_lateness);
  }
  json out{{"threads", c.threads},
           {"threads_from", run::name(c.threads_from)},
           {"pinned", c.pin},
           {"workers", workers},
           {"sent_for_others", sent_for_others},
           {"claimed_away", claimed_away},
           {"longest_wake_lateness_ns", longest.count()}};
  if (r.host_steal) out["host_steal_ns"] = r.host_steal->count();
  return out;
}

// The HTTP/2 error codes by name (RFC 9113, section 7); the last entry holds any other code.
constexpr std::array<const char*, 15> h2_error_names{"NO_ERROR",
                                                     "PROTOCOL_ERROR",
                                                     "INTERNAL_ERROR",
                                                     "FLOW_CONTROL_ERROR",
                                                     "SETTINGS_TIMEOUT",
                                                     "STREAM_CLOSED",
                                                     "FRAME_SIZE_ERROR",
                                                     "REFUSED_STREAM",
                                                     "CANCEL",
                                                     "COMPRESSION_ERROR",
                                                     "CONNECT_ERROR",
                                                     "ENHANCE_YOUR_CALM",
                                                     "INADEQUATE_SECURITY",
                                                     "HTTP_1_1_REQUIRED",
                                                     "other"};

json protocol_json(const run::config& config, const run::result& r) {
  const run::protocol_counts spoken = r.protocols();
  json p{{"name", spoken.mostly_h2() ? "h2" : "http/1.1"},
         {"requested", run::name(config.http)},
         {"connections",
          {{"h2", spoken.h2},
           {"http/1.1", spoken.http1},
           {"opened", spoken.opened},
           {"unsolicited_closes", spoken.unsolicited_closes}}}};
  if (config.http == run::http_version::http1) return p;
  const auto& c = r.measured.counts;
  json codes = json::object();
  for (std::size_t i = 0; i < h2_error_names.size(); ++i) {
    if (c.h2_rst_codes[i]) codes[h2_error_names[i]] = c.h2_rst_codes[i];
  }
  p["h2"] = {
      {"max_streams", config.max_streams}, {"unprocessed", c.h2_unprocessed}, {"rst_codes", codes}};
  return p;
}

json remote_write_json(const metrics::push_stats& s) {
  return {{"url", s.url},
          {"snapshots", s.snapshots},
          {"pushes", s.requests},
          {"samples", s.samples},
          {"failed_attempts", s.failed_attempts},
          {"dropped", s.dropped},
          {"final_pushed", s.final_pushed},
          {"last_error", s.last_error.empty() ? json(nullptr) : json(s.last_error)}};
}

json tls_json(const run::config& config, const run::result& r) {
  const auto& c = r.measured.counts;
  json t{{"version", r.tls ? json(r.tls->version) : json(nullptr)},
         {"cipher", r.tls ? json(r.tls->cipher) : json(nullptr)},
         {"alpn", r.tls && !r.tls->alpn.empty() ? json(r.tls->alpn) : json(nullptr)},
         {"verify", config.tls.verify},
         {"handshakes", c.tls_handshakes + r.warmup.counts.tls_handshakes},
         {"resumed", c.tls_resumed + r.warmup.counts.tls_resumed}};
  return t;
}

}  // namespace

nlohmann::ordered_json ci_json(const verdicts& v) {
  json ci = json::object();
  json methods = json::object();
  json unresolved = json::array();
  for (std::size_t i = 0; i < v.response_ci.size() && i < std::size(summary_percentiles); ++i) {
    if (!v.response_ci[i].available()) continue;
    const std::string key = percentile_key(summary_percentiles[i]);
    ci[key] = json::array({v.response_ci[i].lo, v.response_ci[i].hi});
    methods[key] = v.response_ci[i].method;
    if (v.response_ci[i].unresolved) unresolved.push_back(key);
  }
  return json{{"ci", ci}, {"methods", methods}, {"unresolved", unresolved}};
}

json validity_json(const verdicts& v) {
  json checks = json::array();
  for (const auto& c : v.validity.checks) {
    checks.push_back({{"name", c.name},
                      {"figure", c.figure},
                      {"relation", c.relation},
                      {"threshold", c.threshold},
                      {"unit", c.unit},
                      {"level", c.level == analysis::check_level::gating ? "gating" : "warning"},
                      {"pass", c.pass},
                      {"note", c.note}});
  }
  return json{{"valid", v.validity.valid()}, {"checks", checks}};
}

json slo_json(const verdicts& v) {
  if (!v.slo) return json(nullptr);
  json results = json::array();
  for (const auto& r : v.slo->results) {
    results.push_back({{"expression", r.text},
                       {"view", r.view},
                       {"figure", r.figure},
                       {"bound", r.bound},
                       {"threshold", r.threshold},
                       {"pass", r.pass},
                       {"service_time_fails", r.service_time_fails},
                       {"service_figure", r.service_figure}});
  }
  json j{{"basis", v.slo->basis}, {"refused", v.slo->refused}, {"results", results}};
  if (v.slo->refused) j["refusal"] = v.slo->refusal;
  return j;
}

// Every outcome by name, always all seven (the run's, the warm-up's, a name's, a session's).
nlohmann::ordered_json outcomes_json(const std::array<std::uint64_t, record::outcome_count>& o) {
  nlohmann::ordered_json out = nlohmann::ordered_json::object();
  for (std::size_t i = 0; i < record::outcome_count; ++i) {
    out[std::string(record::outcome_names[i])] = o[i];
  }
  return out;
}

// One latency view as the JSON reports it (the by-name section uses it too).
nlohmann::ordered_json view_json(const hdr::histogram& h, std::uint64_t censored) {
  nlohmann::ordered_json percentiles = nlohmann::ordered_json::object();
  nlohmann::ordered_json lower_bounds = nlohmann::ordered_json::array();
  const double bound_from = lower_bound_from(censored, h.total_count());
  for (const double p : summary_percentiles) {
    percentiles[percentile_key(p)] = h.value_at_percentile(p);
    if (p >= bound_from) lower_bounds.push_back(percentile_key(p));
  }
  return nlohmann::ordered_json{{"count", h.total_count()},
                                {"censored", censored},
                                {"over_range", h.over_range_count()},
                                {"min_ns", h.min()},
                                {"mean_ns", h.mean()},
                                {"max_ns", h.max()},
                                {"stddev_ns", h.stddev()},
                                {"percentiles_ns", percentiles},
                                {"lower_bound_percentiles", lower_bounds}};
}

void write_json(std::ostream& out, const run::config& config, const run::result& r,
                const verdicts& v, std::string_view text_report) {
  const auto& c = r.measured.counts;
  json socket_errors = json::object();
  for (std::size_t i = 0; i < record::socket_reason_count; ++i) {
    socket_errors[std::string(record::socket_reason_names[i])] = c.socket_errors[i];
  }
  json status = json::object();
  for (std::size_t s = 0; s < c.status.size(); ++s) {
    if (c.status[s]) status[std::to_string(s)] = c.status[s];
  }
  json doc{{"schema_version", schema_version},
           {"punctual", {{"version", "0.1.0"}}},
           {"command_line", config.command_line},
           {"target", config.target_url},
           {"run_id", config.run_id},
           {"workload", workload_json(config)},
           {"model", model_json(config, r)},
           {"correction", correction_json(config)},
           {"schedule", schedule_json(config, r)},
           {"interrupted", r.interrupted},
           {"outcomes", outcomes_json(c.outcomes)},
           {"socket_errors", socket_errors},
           {"status_counts", status},
           {"rates_per_s",
            {{"planned", per_second(c.planned, r.window)},
             {"sent", per_second(c.sent_in_window, r.window)},
             {"completed", per_second(c.completed_in_window, r.window)}}},
           {"bytes", {{"sent", c.bytes_sent}, {"received", c.bytes_received}}},
           {"protocol", protocol_json(config, r)},
           {"retry_policy", retry_policy_json(config)},
           {"attempts", attempts_json(config, r)},
           {"latency", latency_json(r, config, v)},
           {"validity", validity_json(v)},
           {"slo", slo_json(v)},
           {"warmup",
            {{"planned", r.warmup.counts.planned},
             {"outcomes", outcomes_json(r.warmup.counts.outcomes)}}},
           {"generator", generator_json(config, r)},
           {"worst_interval", worst_interval_json(r, holders_of(config, r, v))},
           {"series", series_json(config, r)},
           {"text_report", text_report},
           {"histograms", histograms_json(config, r)}};
  if (config.tls.enabled) doc["tls"] = tls_json(config, r);
  if (r.remote_write) doc["remote_write"] = remote_write_json(*r.remote_write);
  if (!config.mix.empty()) doc["by_name"] = by_name_json(config, r);
  if (config.hybrid()) {
    doc["sessions"] = sessions_json(config, r);
    doc["worst_step"] = worst_step_json(config, r, holders_of(config, r, v));
    const auto http_errors = c.outcomes[record::index(record::outcome::http_error)];
    doc["http_errors"] = {{"status", http_errors - c.body_missing - c.capture_missing},
                          {"body", c.body_missing},
                          {"capture", c.capture_missing}};
  }
  out << doc.dump(2) << '\n';
}

}  // namespace punctual::report
