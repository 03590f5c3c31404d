// How shards' reports become one: additive fields are added key by key, every latency figure is
// recomputed from added histograms (the JSON's for the totals, the interval logs' for each
// second), and validity and the SLOs are judged on the sums (docs/distributed.md, "Merging").
#include "report/merged_report.hpp"

#include <fmt/format.h>
#include <fmt/ostream.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>

#include "analysis/text.hpp"
#include "http/text.hpp"
#include "punctual/histogram/codec.hpp"
#include "report/merged_parts.hpp"
#include "report/sections.hpp"
#include "report/workload_report.hpp"
#include "schedule/plan.hpp"

namespace punctual::report {
namespace {

using json = nlohmann::ordered_json;

struct shard_id {
  std::uint32_t index = 0;
  std::uint32_t count = 0;
  std::string plan;
  json start_at;  // null without --start-at
  run::workload_identity workload;
  std::string run_id;
};

shard_id id_of(const shard_report& s) {
  const json& schedule = s.doc.at("schedule");
  if (!schedule.contains("shard") || !schedule.contains("plan_sha256")) {
    throw merge_refused(s.name +
                        ": not a shard's report (its schedule has no shard and no "
                        "plan_sha256; a closed-model run has no schedule to share out)");
  }
  if (schedule["shard"]["index"].is_null()) {
    throw merge_refused(s.name + ": already a merged report, not a shard's");
  }
  if (!s.doc.contains("workload") || !s.doc.contains("run_id")) {
    throw merge_refused(s.name +
                        ": no workload and no run_id (a report older than schema_version 2): "
                        "run the shard again with this punctual");
  }
  return {schedule["shard"]["index"].get<std::uint32_t>(),
          schedule["shard"]["count"].get<std::uint32_t>(),
          schedule["plan_sha256"].get<std::string>(),
          schedule.value("start_at_unix_ns", json(nullptr)),
          workload_of(s.doc),
          s.doc.at("run_id").get<std::string>()};
}

// Refuses a shard that is not of the same run as the first report: another shard count, another
// workload (first difference named), another plan, another --start-at or another run id.
void check_same_run(const shard_report& s, const shard_id& id, const shard_report& first_report,
                    const shard_id& first) {
  const auto who = [](const shard_report& r, const shard_id& i) {
    return r.name + " (shard " + std::to_string(i.index) + ")";
  };
  if (id.count != first.count) {
    throw merge_refused(s.name + " is a shard of " + std::to_string(id.count) + ", " +
                        first_report.name + " of " + std::to_string(first.count));
  }
  if (const auto difference = run::workload_difference(id.workload, first.workload)) {
    throw merge_refused(who(s, id) + " differs from " + who(first_report, first) +
                        " in workload: " + *difference);
  }
  if (id.plan != first.plan) {
    throw merge_refused(s.name + " ran another plan than " + first_report.name + " (plan_sha256 " +
                        id.plan.substr(0, 12) + "... against " + first.plan.substr(0, 12) + "...)");
  }
  if (id.start_at != first.start_at) {
    throw merge_refused(s.name + " started its window at another --start-at than " +
                        first_report.name + " (" + id.start_at.dump() + " against " +
                        first.start_at.dump() + " Unix ns): not one run");
  }
  if (id.run_id != first.run_id) {
    throw merge_refused(s.name + " is of run " + http::quoted(id.run_id) + ", " +
                        first_report.name + " of run " + http::quoted(first.run_id) +
                        ": not one run (give every shard the same --run-id or --start-at)");
  }
}

// "shard 2 of 3 is missing", "shards 1, 4 and 9 more of 64 are missing".
std::string missing_text(const std::vector<std::uint32_t>& missing, std::uint32_t count) {
  constexpr std::size_t listed = 10;
  std::string list;
  for (std::size_t i = 0; i < missing.size() && i < listed; ++i) {
    list += (i ? ", " : "") + std::to_string(missing[i]);
  }
  if (missing.size() > listed) list += " and " + std::to_string(missing.size() - listed) + " more";
  return (missing.size() == 1 ? "shard " : "shards ") + list + " of " + std::to_string(count) +
         (missing.size() == 1 ? " is missing" : " are missing");
}

// Added over every shard: the whole numbers of `key` (an object of counts), key by key.
json added(const std::vector<shard_report>& shards, const char* key) {
  json sum = shards.front().doc.value(key, json::object());
  for (std::size_t i = 1; i < shards.size(); ++i)
    add_numbers(sum, shards[i].doc.value(key, json::object()));
  return sum;
}

// The worst of the shards' worst seconds (or steps): highest p99, then highest max. Each was
// judged within its shard: the merged run's worst second may be another (docs/distributed.md).
json worst_of(const std::vector<shard_report>& shards, const char* key) {
  json best(nullptr);
  for (const auto& s : shards) {
    const json& w = s.doc.value(key, json(nullptr));
    if (w.is_null()) continue;
    const auto rank = [](const json& j) {
      return std::pair{j["response_time"]["p99_ns"].get<std::int64_t>(),
                       j["response_time"]["max_ns"].get<std::int64_t>()};
    };
    if (best.is_null() || rank(w) > rank(best)) {
      best = w;
      best["shard"] = s.doc["schedule"]["shard"]["index"];
    }
  }
  return best;
}

json shard_list(const std::vector<shard_report>& shards) {
  json list = json::array();
  for (const auto& s : shards) {
    const json& schedule = s.doc["schedule"];
    list.push_back({{"index", schedule["shard"]["index"]},
                    {"file", s.name},
                    {"planned", schedule["planned"]},
                    {"valid", s.doc["validity"]["valid"]},
                    {"start_lag_ns", schedule.value("start_lag_ns", json(nullptr))},
                    {"command_line", s.doc["command_line"]}});
  }
  return list;
}

void merge_schedule(const std::vector<shard_report>& shards, const merged_sums& sums, json& doc) {
  json& schedule = doc["schedule"];
  std::optional<std::int64_t> worst_lag;
  for (const auto& s : shards) {
    const json& lag = s.doc["schedule"].value("start_lag_ns", json(nullptr));
    if (!lag.is_null()) worst_lag = std::max(worst_lag.value_or(0), lag.get<std::int64_t>());
  }
  schedule["planned"] = sums.counts.planned;
  schedule["window_ns"] = sums.window.count();
  schedule["shard"] = {{"index", nullptr}, {"count", shards.size()}};
  schedule["start_lag_ns"] = worst_lag ? json(*worst_lag) : json(nullptr);
  schedule["per_second_planned"] = sums.load.planned;
  schedule["per_second_late"] = sums.load.late;
}

void merge_counts(const std::vector<shard_report>& shards, const merged_sums& sums, json& doc) {
  for (const char* key : {"outcomes", "socket_errors", "status_counts", "bytes", "attempts"}) {
    doc[key] = added(shards, key);
  }
  merge_attempts(shards, sums.counts.planned, doc);
  doc["warmup"] = added(shards, "warmup");
  if (doc.contains("http_errors")) doc["http_errors"] = added(shards, "http_errors");
  if (doc.contains("tls")) {
    const json tls = added(shards, "tls");
    doc["tls"]["handshakes"] = tls["handshakes"];
    doc["tls"]["resumed"] = tls["resumed"];
  }
  const double seconds = static_cast<double>(sums.window.count()) / 1e9;
  const auto rate = [&](std::uint64_t n) {
    return seconds > 0 ? static_cast<double>(n) / seconds : 0.0;
  };
  doc["rates_per_s"] = {{"planned", rate(sums.counts.planned)},
                        {"sent", rate(sums.counts.sent_in_window)},
                        {"completed", rate(sums.counts.completed_in_window)}};
}

void merge_model(const std::vector<shard_report>& shards, json& doc) {
  std::uint64_t connections = 0;
  std::uint64_t threads = 0;
  json workers = json::array();
  for (const auto& s : shards) {
    connections += s.doc["model"]["connections"].get<std::uint64_t>();
    threads += s.doc["model"]["threads"].get<std::uint64_t>();
    for (json w : s.doc["generator"]["workers"]) {
      w["shard"] = s.doc["schedule"]["shard"]["index"];
      workers.push_back(std::move(w));
    }
  }
  doc["model"]["connections"] = connections;
  doc["model"]["threads"] = threads;
  doc["workload"]["connections"] = connections;
  doc["workload"]["threads"] = threads;
  doc["generator"]["workers"] = workers;
  merge_generator(shards, doc);
}

void write_latency(const merged_sums& sums, const verdicts& v, json& doc) {
  json& latency = doc["latency"];
  for (std::size_t i = 0; i < record::view_count; ++i) {
    const std::string name(record::view_names[i]);
    if (!latency.contains(name)) continue;
    const auto view = static_cast<record::view>(i);
    latency[name] =
        view_json(sums.views[view], view == record::view::response_time ? sums.counts.censored : 0);
  }
  const json ci = ci_json(v);
  latency["response_time"]["percentiles_ci_ns"] = ci["ci"];
  latency["response_time"]["percentiles_ci_method"] = ci["methods"];
  latency["response_time"]["percentiles_ci_unresolved"] = ci["unresolved"];
}

verdicts judge_merged(const std::vector<shard_report>& shards, const merged_sums& sums,
                      const merge_settings& settings) {
  verdicts v;
  const auto slo_ps = analysis::slo_percentiles(settings.slos);
  std::uint32_t threads = 0;
  for (const auto& s : shards) threads += s.doc["model"]["threads"].get<std::uint32_t>();
  // The connection cap and the user cap are each shard's (its -c or max_users against its
  // share): they come from the shards' own checks, as do the start lag and what needed data
  // the shards do not write (the worst second's components, the Poisson send gaps).
  v.validity =
      analysis::check_validity({.views = sums.views,
                                .counts = sums.counts,
                                .rate_per_s = std::nullopt,
                                .connections = 0,
                                .worker_cpu_shares = {},
                                .intervals = sums.series,
                                .slo_percentiles = slo_ps,
                                .slo_tails = analysis::slo_tails(settings.slos, sums.views),
                                .window = sums.window,
                                .threads = threads,
                                .load = sums.has_schedule ? &sums.load : nullptr});
  carry_shard_checks(shards, v.validity);
  v.allowed_failure_share = analysis::allowed_failure_share(settings.slos, sums.counts.planned);
  for (const double p : summary_percentiles) {
    v.response_ci.push_back(
        analysis::percentile_interval(sums.views[record::view::response_time], sums.series, p));
  }
  if (!settings.slos.empty()) {
    v.slo = analysis::evaluate_slos(settings.slos, {.views = sums.views,
                                                    .counts = sums.counts,
                                                    .intervals = sums.series,
                                                    .bound = settings.bound,
                                                    .by_name = &sums.by_name});
  }
  return v;
}

// Where the shards' worker counts came from and whether they were pinned, as far as every shard
// says (a report from before these fields leaves them out of the merge): one origin when all
// share it, else "mixed"; pinned only when every shard was (each worker keeps its own
// pinned_cpu, on its own shard's host).
void merge_thread_origin(const std::vector<shard_report>& shards, json& g) {
  std::optional<std::string> from;
  bool pinned = true;
  for (const auto& s : shards) {
    const json& sg = s.doc["generator"];
    if (!sg.contains("threads_from") || !sg.contains("pinned")) {
      g.erase("threads_from");
      g.erase("pinned");
      return;
    }
    const auto shard_from = sg["threads_from"].get<std::string>();
    from = !from || *from == shard_from ? shard_from : std::string("mixed");
    pinned = pinned && sg["pinned"].get<bool>();
  }
  g["threads_from"] = from.value_or("mixed");
  g["pinned"] = pinned;
}

}  // namespace

// The generator's totals: claims cross workers, never shards, so they add up; the longest pause
// is the longest of any shard's; each shard's host steal adds up (absent when no shard's kernel
// reported it); the threads add up, as model.threads does.
void merge_generator(const std::vector<shard_report>& shards, json& doc) {
  json& g = doc["generator"];
  std::uint64_t threads = 0;
  std::uint64_t sent_for_others = 0;
  std::uint64_t claimed_away = 0;
  std::uint64_t longest = 0;
  std::optional<std::uint64_t> steal;
  for (const auto& s : shards) {
    const json& sg = s.doc["generator"];
    threads += s.doc["model"]["threads"].get<std::uint64_t>();
    sent_for_others += sg.value("sent_for_others", std::uint64_t{0});
    claimed_away += sg.value("claimed_away", std::uint64_t{0});
    longest = std::max(longest, sg.value("longest_wake_lateness_ns", std::uint64_t{0}));
    if (sg.contains("host_steal_ns"))
      steal = steal.value_or(0) + sg["host_steal_ns"].get<std::uint64_t>();
  }
  g["threads"] = threads;
  merge_thread_origin(shards, g);
  g["sent_for_others"] = sent_for_others;
  g["claimed_away"] = claimed_away;
  g["longest_wake_lateness_ns"] = longest;
  if (steal) {
    g["host_steal_ns"] = *steal;
  } else {
    g.erase("host_steal_ns");
  }
}

void order_shards(std::vector<shard_report>& shards) {
  if (shards.empty()) throw merge_refused("no reports to merge");
  std::vector<shard_id> ids;
  for (const auto& s : shards) {
    try {
      ids.push_back(id_of(s));
    } catch (const json::exception& e) {
      throw merge_refused(s.name + ": not a punctual run report (" + e.what() + ")");
    }
  }
  const shard_id& first = ids.front();
  if (first.count < 1 || first.count > schedule::max_shards) {
    throw merge_refused(shards[0].name + ": a shard count of " + std::to_string(first.count) +
                        " (expected 1 to " + std::to_string(schedule::max_shards) + ")");
  }
  constexpr std::size_t none = ~std::size_t{0};
  std::vector<std::size_t> at(first.count, none);  // which input is each shard
  for (std::size_t i = 0; i < shards.size(); ++i) {
    const shard_id& id = ids[i];
    check_same_run(shards[i], id, shards[0], first);
    if (id.index >= id.count) throw merge_refused(shards[i].name + ": shard index out of range");
    if (at[id.index] != none) {
      throw merge_refused("shard " + std::to_string(id.index) + " of " + std::to_string(id.count) +
                          " is given twice: " + shards[at[id.index]].name + " and " +
                          shards[i].name);
    }
    at[id.index] = i;
  }
  std::vector<std::uint32_t> missing;
  for (std::uint32_t i = 0; i < first.count; ++i) {
    if (at[i] == none) missing.push_back(i);
  }
  if (!missing.empty()) throw merge_refused(missing_text(missing, first.count));
  std::vector<shard_report> ordered;
  for (const std::size_t i : at) ordered.push_back(std::move(shards[i]));
  shards = std::move(ordered);
}

merged_run merge_runs(const std::vector<shard_report>& shards, const merge_settings& settings) {
  merged_run m;
  try {
    const merged_sums sums = add_shards(shards, analysis::slo_percentiles(settings.slos));
    m.verdict = judge_merged(shards, sums, settings);
    m.log_text = sums.log_text;
    json doc = shards.front().doc;
    doc["command_line"] = settings.command_line;
    doc.erase("text_report");  // a shard's; the merge writes its own beside
    for (const auto& s : shards) m.interrupted = m.interrupted || s.doc["interrupted"].get<bool>();
    doc["interrupted"] = m.interrupted;
    merge_model(shards, doc);
    merge_schedule(shards, sums, doc);
    merge_counts(shards, sums, doc);
    merge_protocol(shards, doc);
    write_latency(sums, m.verdict, doc);
    doc["validity"] = validity_json(m.verdict);
    doc["slo"] = slo_json(m.verdict);
    doc["worst_interval"] = worst_of(shards, "worst_interval");
    if (doc.contains("worst_step")) doc["worst_step"] = worst_of(shards, "worst_step");
    write_series(shards, sums, doc);
    write_names(shards, sums, doc);
    doc["histograms"] = histograms_of(sums, doc["histograms"]);
    doc["shards"] = shard_list(shards);
    m.doc = std::move(doc);
  } catch (const json::exception& e) {
    throw merge_refused(std::string("cannot merge: a report lacks what a run report holds (") +
                        e.what() + ")");
  }
  return m;
}

void write_merged_text(std::ostream& out, const merged_run& m) {
  using analysis::duration_text;
  const json& d = m.doc;
  write_verdict_line(out, m.verdict, m.interrupted);
  const json& schedule = d["schedule"];
  fmt::print(out,
             "merged {} shards of plan {}: {} model, {} for {}, {} planned; {} connections on {} "
             "threads in all\n",
             schedule["shard"]["count"].get<std::size_t>(),
             schedule.value("plan_sha256", std::string()).substr(0, 12),
             d["model"]["kind"].get<std::string>(), d["model"]["schedule"].get<std::string>(),
             duration_text(schedule["duration_ns"].get<double>()),
             schedule["planned"].get<std::uint64_t>(),
             d["model"]["connections"].get<std::uint64_t>(),
             d["model"]["threads"].get<std::uint64_t>());
  for (const auto& s : d["shards"]) {
    const json& lag = s["start_lag_ns"];
    fmt::print(out, "  shard {}: {} planned, {}, start lag {}  ({})\n",
               s["index"].get<std::uint32_t>(), s["planned"].get<std::uint64_t>(),
               s["valid"].get<bool>() ? "valid" : "INVALID on its own",
               lag.is_null() ? std::string("-") : duration_text(lag.get<double>()),
               s["file"].get<std::string>());
  }
  if (!schedule.value("start_at_unix_ns", json(nullptr)).is_null()) {
    fmt::print(out, "clocks: {}\n", clock_assumption);
  } else {
    fmt::print(out,
               "clocks: the shards did not share a --start-at; each second is added by its "
               "offset from each shard's own start\n");
  }
  if (m.interrupted) fmt::print(out, "INTERRUPTED: a shard's measured window ended early\n");
  std::string outcomes;
  for (const auto& [name, n] : d["outcomes"].items())
    outcomes += fmt::format("{}{} {}", outcomes.empty() ? "" : ", ", name, n.get<std::uint64_t>());
  fmt::print(out, "outcomes: {} (planned = sum of outcomes)\n\n", outcomes);
  write_invalid_reasons(out, m.verdict);
  for (const char* view : {"response_time", "service_time"}) {
    const json& p = d["latency"][view]["percentiles_ns"];
    fmt::print(out, "{:<14} p50 {}, p90 {}, p99 {}, p99.9 {}, max {}\n", view,
               duration_text(p["50"].get<double>()), duration_text(p["90"].get<double>()),
               duration_text(p["99"].get<double>()), duration_text(p["99.9"].get<double>()),
               duration_text(p["100"].get<double>()));
  }
  write_slos(out, m.verdict);
  write_validity(out, m.verdict, false);
}

}  // namespace punctual::report
