#include "report/merged_parts.hpp"

#include <algorithm>
#include <cmath>
#include <map>
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

// How close a check came to failing: figure over threshold, turned so that larger is worse.
double strain(const analysis::check& c) {
  if (c.relation == ">=")
    return c.figure > 0 ? c.threshold / c.figure : (c.threshold > 0 ? 1e300 : 0);
  return c.threshold > 0 ? c.figure / c.threshold : (c.figure > 0 ? 1e300 : 0);
}

// The shards' instances of one check: the failing one with the worst figure, naming the other
// failing shards, else the passing one closest to failing.
analysis::check worst_of_checks(const std::vector<analysis::check>& checks) {
  const auto worse = [](const analysis::check& a, const analysis::check& b) {
    if (a.pass != b.pass) return !a.pass;
    return strain(a) > strain(b);
  };
  const auto worst = std::min_element(checks.begin(), checks.end(), worse);
  analysis::check out = *worst;
  std::string others;
  for (auto it = checks.begin(); it != checks.end(); ++it) {
    if (it->pass || it == worst) continue;
    others += (others.empty() ? "" : ", ") + it->note.substr(0, it->note.find(':'));
  }
  if (!others.empty()) out.note += " (also failed: " + others + ")";
  return out;
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

void carry_shard_checks(const std::vector<shard_report>& shards,
                        analysis::validity_report& report) {
  std::vector<std::string> order;  // the carried names, in the order the shards list them
  std::map<std::string, std::vector<analysis::check>> found;
  for (const auto& s : shards) {
    const auto index = s.doc["schedule"]["shard"]["index"].get<std::uint32_t>();
    const std::string shard =
        "shard " + std::to_string(index) + " of " + std::to_string(shards.size());
    for (const auto& j : s.doc["validity"]["checks"]) {
      std::string name = j["name"].get<std::string>();
      const bool cpu = name.starts_with("worker_cpu_");
      if (!cpu && std::find(std::begin(shard_checks), std::end(shard_checks), name) ==
                      std::end(shard_checks))
        continue;
      if (cpu) name = "shard_" + std::to_string(index) + "_" + name;  // each shard's workers apart
      if (!found.contains(name)) order.push_back(name);
      analysis::check c = check_of(j, shard);
      c.name = name;
      found[name].push_back(std::move(c));
    }
  }
  for (const auto& name : order) report.checks.push_back(worst_of_checks(found[name]));
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
    const record::interval_row& r = sums.rows.at(index);  // every row was summarised
    row["response_time"] = summary_json(r.response_time);
    row["service_time"] = summary_json(r.service_time);
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

void merge_attempts(const std::vector<shard_report>& shards, std::uint64_t planned, json& doc) {
  json& attempts = doc["attempts"];
  attempts["amplification"] = planned
                                  ? static_cast<double>(attempts["total"].get<std::uint64_t>()) /
                                        static_cast<double>(planned)
                                  : 0.0;
  if (!attempts.contains("per_second")) return;
  std::map<std::int64_t, std::pair<std::uint64_t, std::uint64_t>> seconds;  // planned, attempts
  for (const auto& s : shards) {
    for (const auto& e : s.doc["attempts"]["per_second"]) {
      auto& [p, a] = seconds[e["second"].get<std::int64_t>()];
      p += e["planned"].get<std::uint64_t>();
      a += e["attempts"].get<std::uint64_t>();
    }
  }
  json out = json::array();
  double most = 0;
  for (const auto& [second, pa] : seconds) {
    const auto [p, a] = pa;
    const double amplification = p ? static_cast<double>(a) / static_cast<double>(p) : 0.0;
    if (p) most = std::max(most, amplification);
    out.push_back({{"second", second},
                   {"planned", p},
                   {"attempts", a},
                   {"amplification", p ? json(amplification) : json(nullptr)}});
  }
  attempts["per_second"] = out;
  attempts["amplification_max"] = most;
}

// Connections and HTTP/2 counts add up; the run's protocol is again the one most of the
// connections spoke; a stream limit is each shard's own setting, the same in every shard.
void merge_protocol(const std::vector<shard_report>& shards, json& doc) {
  if (!doc.contains("protocol")) return;
  json& protocol = doc["protocol"];
  json connections = json::object();
  json h2 = json::object();
  for (const auto& s : shards) {
    const json& p = s.doc.value("protocol", json::object());
    add_numbers(connections, p.value("connections", json::object()));
    const json& other = p.value("h2", json::object());
    add_numbers(h2, {{"unprocessed", other.value("unprocessed", json(0))},
                     {"rst_codes", other.value("rst_codes", json::object())}});
  }
  protocol["connections"] = connections;
  const auto spoken = [&](const char* name) { return connections.value(name, std::uint64_t{0}); };
  protocol["name"] = spoken("h2") > spoken("http/1.1") ? "h2" : "http/1.1";
  if (!protocol.contains("h2")) return;
  protocol["h2"]["unprocessed"] = h2["unprocessed"];
  protocol["h2"]["rst_codes"] = h2["rst_codes"];
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
