#include "report/merged_parts.hpp"

#include <algorithm>
#include <cmath>
#include <set>

#include "punctual/histogram/codec.hpp"
#include "report/sections.hpp"

namespace punctual::report {
namespace {

using json = nlohmann::ordered_json;
using std::chrono::nanoseconds;

// The counts of a timeline row; the rest of a row is its index, its clock and its latency.
constexpr const char* row_counts[] = {"planned", "sent",     "attempts", "completed",      "ok",
                                      "errors",  "timeouts", "dropped",  "queue_depth_max"};

// The checks carry_shard_checks takes from the shards instead of making them again.
constexpr const char* shard_checks[] = {"connection_cap", "user_cap", "start_lag",
                                        "worst_second_send_lag", "poisson_send_gaps"};

hdr::histogram decode(const json& text, const std::string& what) {
  auto r = hdr::decode_compressed_base64(text.get<std::string>());
  if (!r) throw merge_refused(what + ": " + std::string(hdr::to_string(r.error)));
  return std::move(*r.value);
}

std::uint64_t count_at(const json& j, std::string_view key) {
  const auto it = j.find(std::string(key));
  return it == j.end() ? 0 : it->get<std::uint64_t>();
}

// The sends and completions in a shard's window, back from its rates.
std::uint64_t in_window(const json& doc, const char* rate) {
  const double seconds = doc["schedule"]["window_ns"].get<double>() / 1e9;
  return static_cast<std::uint64_t>(std::llround(doc["rates_per_s"][rate].get<double>() * seconds));
}

record::counters counters_of(const json& doc) {
  record::counters c;
  c.planned = doc["schedule"]["planned"].get<std::uint64_t>();
  for (std::size_t i = 0; i < record::outcome_count; ++i)
    c.outcomes[i] = count_at(doc["outcomes"], record::outcome_names[i]);
  for (std::size_t i = 0; i < record::socket_reason_count; ++i) {
    c.socket_errors[i] = count_at(doc["socket_errors"], record::socket_reason_names[i]);
  }
  for (const auto& [code, n] : doc["status_counts"].items()) {
    const int status = std::atoi(code.c_str());
    if (status >= 0 && static_cast<std::size_t>(status) < c.status.size())
      c.status[static_cast<std::size_t>(status)] += n.get<std::uint64_t>();
  }
  c.censored = doc["latency"]["response_time"]["censored"].get<std::uint64_t>();
  c.sent_in_window = in_window(doc, "sent");
  c.completed_in_window = in_window(doc, "completed");
  c.bytes_sent = doc["bytes"]["sent"].get<std::uint64_t>();
  c.bytes_received = doc["bytes"]["received"].get<std::uint64_t>();
  const json& a = doc["attempts"];
  c.attempts.total = a["total"].get<std::uint64_t>();
  c.attempts.retries = a["retries"].get<std::uint64_t>();
  return c;
}

std::vector<std::string> names_of(const json& doc) {
  std::vector<std::string> names;
  const json& h = doc["histograms"];
  if (h.contains("names")) {
    for (const auto& [name, views] : h["names"].items()) names.push_back(name);
  }
  return names;
}

// A name's counts: a request or step in by_name, a SCENARIO.session in sessions.
record::name_counts name_counts_of(const json& doc, const std::string& name) {
  record::name_counts n;
  const std::string session_suffix = ".session";
  const json* entry = nullptr;
  if (doc.contains("by_name") && doc["by_name"].contains(name)) entry = &doc["by_name"][name];
  if (!entry && doc.contains("sessions") && name.size() > session_suffix.size() &&
      name.ends_with(session_suffix)) {
    const std::string scenario = name.substr(0, name.size() - session_suffix.size());
    if (doc["sessions"].contains(scenario)) entry = &doc["sessions"][scenario];
  }
  if (!entry) return n;
  n.planned = (*entry)["planned"].get<std::uint64_t>();
  for (std::size_t i = 0; i < record::outcome_count; ++i)
    n.outcomes[i] = count_at((*entry)["outcomes"], record::outcome_names[i]);
  return n;
}

void add_views(const shard_report& s, merged_sums& sums) {
  const json& h = s.doc.at("histograms");
  for (std::size_t i = 0; i < record::view_count; ++i) {
    const std::string name(record::view_names[i]);
    if (h["views"].contains(name))
      sums.views[static_cast<record::view>(i)].add(
          decode(h["views"][name], s.name + ": histograms.views." + name));
  }
  for (std::size_t n = 0; n < sums.names.size(); ++n) {
    const json& named = h["names"][sums.names[n]];
    for (std::size_t v = 0; v < record::named_view_count; ++v) {
      const std::string view(record::named_view_names[v]);
      sums.views.named(n, static_cast<record::named_view>(v))
          .add(decode(named[view], s.name + ": histograms.names"));
    }
  }
}

// Each interval of the shard's log into the row it belongs to: its offset from the log's start
// (the shard's measured window) in interval lengths.
void add_seconds(const shard_report& s, merged_sums& sums) {
  const double length = s.doc["series"]["interval_ns"].get<double>() / 1e9;
  if (!(length > 0)) throw merge_refused(s.name + ": series.interval_ns is not a length");
  for (const auto& iv : s.log.intervals) {
    std::size_t view = 0;
    if (!iv.tag.empty()) {
      const auto* it = std::find(record::view_names.begin() + 1, record::view_names.end(), iv.tag);
      if (it == record::view_names.end()) continue;  // a name's or a session's stream
      view = static_cast<std::size_t>(it - record::view_names.begin());
    }
    const auto row = std::llround((iv.start_unix_seconds - s.log.start_time_unix_seconds) / length);
    sums.seconds[row][static_cast<record::view>(view)].add(iv.value);
  }
}

void add_load(const json& schedule, record::per_second_load& load) {
  record::per_second_load shard;
  shard.planned = schedule["per_second_planned"].get<std::vector<std::uint64_t>>();
  shard.late = schedule["per_second_late"].get<std::vector<std::uint64_t>>();
  shard.attempts.assign(shard.planned.size(), 0);
  load.add(shard);
}

// A check as a shard's report wrote it. relation and unit are views: they point into a set that
// lives as long as the program.
analysis::check check_of(const json& j, const std::string& shard) {
  static std::set<std::string, std::less<>> words;
  const auto word = [](const json& w) {
    return std::string_view(*words.insert(w.get<std::string>()).first);
  };
  analysis::check c;
  c.name = j["name"].get<std::string>();
  c.figure = j["figure"].get<double>();
  c.threshold = j["threshold"].get<double>();
  c.relation = word(j["relation"]);
  c.unit = word(j["unit"]);
  c.pass = j["pass"].get<bool>();
  c.level = j["level"].get<std::string>() == "gating" ? analysis::check_level::gating
                                                      : analysis::check_level::warning;
  c.note = j["note"].get<std::string>();
  if (!c.pass && !c.note.starts_with(shard)) c.note = shard + ": " + c.note;
  return c;
}

}  // namespace

void add_numbers(json& dst, const json& src) {
  if (!src.is_object()) return;
  for (const auto& [key, value] : src.items()) {
    if (!dst.contains(key)) {
      dst[key] = value;
    } else if (value.is_number_integer() && dst[key].is_number_integer()) {
      dst[key] = dst[key].get<std::uint64_t>() + value.get<std::uint64_t>();
    } else if (value.is_object()) {
      add_numbers(dst[key], value);
    }
  }
}

merged_sums add_shards(const std::vector<shard_report>& shards,
                       std::span<const double> slo_percentiles) {
  merged_sums sums(slo_percentiles);
  sums.names = names_of(shards.front().doc);
  sums.views = record::view_set(sums.names.size());
  sums.by_name.resize(sums.names.size());
  for (const auto& s : shards) {
    if (names_of(s.doc) != sums.names)
      throw merge_refused(s.name + ": its request names differ from " + shards.front().name + "'s");
    sums.counts.add(counters_of(s.doc));
    for (std::size_t n = 0; n < sums.names.size(); ++n)
      sums.by_name[n].add(name_counts_of(s.doc, sums.names[n]));
    add_views(s, sums);
    add_seconds(s, sums);
    const json& schedule = s.doc["schedule"];
    if (schedule.contains("per_second_planned")) {
      sums.has_schedule = true;
      add_load(schedule, sums.load);
    }
    sums.window = std::max(sums.window, nanoseconds{schedule["window_ns"].get<std::int64_t>()});
  }
  // The rows the shards' timelines have, in order (each row's views, or none if no log had it).
  std::set<std::int64_t> rows;
  for (const auto& s : shards) {
    for (const auto& row : s.doc["series"]["per_second"])
      rows.insert(row["second"].get<std::int64_t>());
  }
  for (const auto row : rows) sums.series.add(sums.seconds[row]);
  return sums;
}

void carry_shard_checks(const std::vector<shard_report>& shards,
                        analysis::validity_report& report) {
  for (const char* name : shard_checks) {
    std::optional<analysis::check> chosen;
    for (const auto& s : shards) {
      const std::string shard =
          "shard " + std::to_string(s.doc["schedule"]["shard"]["index"].get<std::uint32_t>()) +
          " of " + std::to_string(shards.size());
      for (const auto& j : s.doc["validity"]["checks"]) {
        if (j["name"] != name) continue;
        const bool failed = !j["pass"].get<bool>();
        if (!chosen || (failed && chosen->pass)) chosen = check_of(j, shard);
      }
    }
    if (chosen) report.checks.push_back(std::move(*chosen));
  }
  std::stable_partition(report.checks.begin(), report.checks.end(), [](const analysis::check& c) {
    return c.level == analysis::check_level::gating;
  });
}

void write_series(const std::vector<shard_report>& shards, const merged_sums& sums, json& doc) {
  std::map<std::int64_t, json> rows;
  for (const auto& s : shards) {
    for (const auto& row : s.doc["series"]["per_second"]) {
      const auto index = row["second"].get<std::int64_t>();
      auto [it, fresh] = rows.emplace(index, row);
      if (fresh) continue;
      for (const char* key : row_counts)
        it->second[key] = it->second[key].get<std::uint64_t>() + row[key].get<std::uint64_t>();
    }
  }
  json out = json::array();
  for (auto& [index, row] : rows) {
    const auto found = sums.seconds.find(index);
    const record::interval_row r = record::summarize_interval(
        index, found == sums.seconds.end() ? record::view_set() : found->second);
    const auto summary = [](const record::latency_summary& l) {
      return json{{"count", l.count}, {"p50_ns", l.p50}, {"p99_ns", l.p99}, {"max_ns", l.max}};
    };
    row["response_time"] = summary(r.response_time);
    row["service_time"] = summary(r.service_time);
    row["send_lag_p99_ns"] = r.send_lag_p99;
    row["queue_wait_p99_ns"] = r.queue_wait_p99;
    out.push_back(std::move(row));
  }
  doc["series"]["per_second"] = out;
}

void write_names(const std::vector<shard_report>& shards, const merged_sums& sums, json& doc) {
  for (const char* section : {"by_name", "sessions"}) {
    if (!doc.contains(section)) continue;
    json& merged = doc[section];
    for (auto& [name, entry] : merged.items()) {
      for (std::size_t i = 1; i < shards.size(); ++i) {
        const json& other = shards[i].doc[section][name];
        entry["planned"] =
            entry["planned"].get<std::uint64_t>() + other["planned"].get<std::uint64_t>();
        add_numbers(entry["outcomes"], other["outcomes"]);
        if (entry.contains("failed_at")) add_numbers(entry["failed_at"], other["failed_at"]);
      }
      const std::string key = std::string(section) == "sessions" ? name + ".session" : name;
      const auto at = std::find(sums.names.begin(), sums.names.end(), key);
      if (at == sums.names.end()) continue;
      const auto n = static_cast<std::size_t>(at - sums.names.begin());
      const std::uint64_t censored = sums.by_name[n].censored();
      const auto& rt = sums.views.named(n, record::named_view::response_time);
      if (entry.contains("session_time")) entry["session_time"] = view_json(rt, censored);
      if (entry.contains("response_time")) entry["response_time"] = view_json(rt, censored);
      if (entry.contains("service_time"))
        entry["service_time"] = view_json(sums.views.named(n, record::named_view::service_time), 0);
    }
  }
}

json histograms_of(const merged_sums& sums, const json& like) {
  json out = like;
  for (std::size_t i = 0; i < record::view_count; ++i) {
    const std::string name(record::view_names[i]);
    if (out["views"].contains(name))
      out["views"][name] = hdr::encode_compressed_base64(sums.views[static_cast<record::view>(i)]);
  }
  for (std::size_t n = 0; n < sums.names.size(); ++n) {
    for (std::size_t v = 0; v < record::named_view_count; ++v) {
      out["names"][sums.names[n]][std::string(record::named_view_names[v])] =
          hdr::encode_compressed_base64(sums.views.named(n, static_cast<record::named_view>(v)));
    }
  }
  if (out.contains("sessions")) {
    for (auto& [scenario, text] : out["sessions"].items()) {
      const auto at = std::find(sums.names.begin(), sums.names.end(), scenario + ".session");
      if (at == sums.names.end()) continue;
      text = hdr::encode_compressed_base64(sums.views.named(
          static_cast<std::size_t>(at - sums.names.begin()), record::named_view::response_time));
    }
  }
  return out;
}

}  // namespace punctual::report
