// The sums a merge of shards' reports judges (report/merged_parts.hpp): counts and whole-run
// histograms from each JSON, each second's histograms from the interval log beside it.
#include <algorithm>
#include <cmath>
#include <optional>
#include <set>
#include <sstream>

#include "punctual/histogram/codec.hpp"
#include "punctual/histogram/interval_log.hpp"
#include "report/merged_parts.hpp"

namespace punctual::report {
namespace {

using json = nlohmann::ordered_json;
using std::chrono::nanoseconds;

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
  c.attempts.resent = a.value("resent", std::uint64_t{0});
  c.attempts.first = a.value("first", c.attempts.total - c.attempts.retries - c.attempts.resent);
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
// (the shard's measured window) in interval lengths. Read one interval at a time, so a long run
// of many shards needs no more than its rows' non-empty slots.
void add_seconds(const shard_report& s, std::map<std::int64_t, second_counts>& seconds,
                 std::optional<double>* log_start) {
  if (s.log_path.empty()) return;
  const double length = s.doc["series"]["interval_ns"].get<double>() / 1e9;
  if (!(length > 0)) throw merge_refused(s.name + ": series.interval_ns is not a length");
  const auto on_interval = [&](const hdr::interval_log& header, hdr::log_interval&& iv) {
    const double offset = (iv.start_unix_seconds - header.start_time_unix_seconds) / length;
    if (!(std::fabs(offset) < 1e9)) return;  // not a second of this run
    if (log_start && !*log_start) *log_start = header.start_time_unix_seconds;
    seconds[std::llround(offset)][iv.tag].add(iv.value, record::latency_params());
  };
  const auto read = hdr::read_interval_log_file(s.log_path, on_interval);
  if (!read) {
    throw merge_refused(
        s.name + ": its interval log " + s.log_path +
        " cannot be read (the merge takes each second's histograms from it): " + read.error);
  }
}

void add_load(const json& schedule, record::per_second_load& load) {
  record::per_second_load shard;
  shard.planned = schedule["per_second_planned"].get<std::vector<std::uint64_t>>();
  shard.late = schedule["per_second_late"].get<std::vector<std::uint64_t>>();
  shard.attempts.assign(shard.planned.size(), 0);
  load.add(shard);
}

// The view a stream's tag names ("" the response time), or none for a name's or a session's.
std::optional<record::view> view_of(const std::string& tag) {
  if (tag.empty()) return record::view::response_time;
  const auto* it = std::find(record::view_names.begin() + 1, record::view_names.end(), tag);
  if (it == record::view_names.end()) return std::nullopt;
  return static_cast<record::view>(it - record::view_names.begin());
}

// Each row's summary, its streams into the merged log, and the rows in order for the confidence
// intervals; each second's sparse counts are dropped once written.
void summarise_rows(const std::set<std::int64_t>& rows,
                    std::map<std::int64_t, second_counts>& seconds, double length_s,
                    merged_sums& sums) {
  std::ostringstream log;
  hdr::interval_log_writer writer(log, sums.log_start_unix_s);
  writer.write_header("[Merged by punctual 0.1.0]");
  record::view_set views;
  hdr::histogram stream(record::latency_params());
  for (const auto row : rows) {
    views.reset();
    if (const auto found = seconds.find(row); found != seconds.end()) {
      for (const auto& [tag, counts] : found->second) {
        stream.reset();
        counts.add_to(stream);
        writer.write_interval(tag, static_cast<double>(row) * length_s, length_s, stream);
        if (const auto view = view_of(tag)) views[*view].add(stream);
      }
      seconds.erase(found);
    }
    sums.series.add(views);
    sums.rows[row] = record::summarize_interval(row, views);
  }
  sums.log_text = log.str();
}

}  // namespace

merged_sums add_shards(const std::vector<shard_report>& shards,
                       std::span<const double> slo_percentiles) {
  merged_sums sums(slo_percentiles);
  std::map<std::int64_t, second_counts> seconds;
  std::optional<double> log_start;
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
    add_seconds(s, seconds, &log_start);
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
  sums.log_start_unix_s = log_start.value_or(0);
  summarise_rows(rows, seconds, shards.front().doc["series"]["interval_ns"].get<double>() / 1e9,
                 sums);
  return sums;
}

}  // namespace punctual::report
