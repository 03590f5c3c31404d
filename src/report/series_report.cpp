// What the pictures need, in the JSON: the timeline (series.per_second), each view's whole
// histogram (so a report can be re-rendered and runs merged without the .hlog), and the worst
// second by intended time with its cause; and the worst second in words for the text report.
#include <fmt/format.h>
#include <fmt/ostream.h>

#include "analysis/attribution.hpp"
#include "analysis/text.hpp"
#include "punctual/histogram/codec.hpp"
#include "report/json.hpp"
#include "report/run_report.hpp"
#include "report/sections.hpp"

namespace punctual::report {

namespace {

using json = nlohmann::ordered_json;
constexpr nanoseconds one_second{1'000'000'000};

// The schedule's planned requests (by intended time, per second) whose second starts in the row.
std::uint64_t planned_in_row(const run::result& r, std::int64_t row, nanoseconds width) {
  const auto first_second = [&](std::int64_t i) {  // the first second starting at or after row i
    return static_cast<std::size_t>(
        std::max<std::int64_t>(0, (width * i + one_second - nanoseconds{1}) / one_second));
  };
  const auto& planned = r.load.planned;
  std::uint64_t n = 0;
  for (std::size_t s = first_second(row); s < std::min(first_second(row + 1), planned.size()); ++s)
    n += planned[s];
  return n;
}

json row_json(const run::config& c, const run::result& r, const record::interval_row& row) {
  const auto offset = c.interval * row.index;
  const auto unix = r.start.unix + (r.measure_start - r.start.mono) + offset;
  const auto& n = row.counts;
  return json{{"second", row.index},
              {"offset_s", static_cast<double>(offset.count()) / 1e9},
              {"unix_s", static_cast<double>(unix.count()) / 1e9},
              {"planned", c.plan() ? planned_in_row(r, row.index, c.interval) : n.planned},
              {"sent", n.sent},
              {"attempts", n.attempts},
              {"completed", n.completed},
              {"ok", n.ok},
              {"errors", n.errors},
              {"timeouts", n.timeouts},
              {"dropped", n.dropped},
              {"queue_depth_max", n.queue_depth_max},
              {"response_time", summary_json(row.response_time)},
              {"service_time", summary_json(row.service_time)},
              {"send_lag_p99_ns", row.send_lag_p99},
              {"queue_wait_p99_ns", row.queue_wait_p99}};
}

json story_json(const record::second_views& s, const analysis::connection_holders& holders) {
  json components = json::object();
  for (std::size_t i = 0; i < record::component_count; ++i) {
    components[std::string(record::component_names[i])] = s.components[i].value_at_percentile(99);
  }
  const analysis::attribution a = analysis::attribute(s, &holders);
  return json{{"planned", s.planned},
              {"sent", s.sent},
              {"completed", s.completed},
              {"response_time",
               {{"p50_ns", s.response_time.value_at_percentile(50)},
                {"p99_ns", s.response_time.value_at_percentile(99)},
                {"max_ns", s.response_time.max()}}},
              {"components_p99_ns", components},
              {"cause", a.cause},
              {"cause_component", record::component_names[static_cast<std::size_t>(a.component)]},
              {"connections_held_by_server", a.held_by_server}};
}

// "server: all 10 connections were held by slow responses (service time up to 1s), and
// requests queued behind them (queue_wait)".
std::string cause_text(const analysis::attribution& a, const analysis::connection_holders& h) {
  const std::string component(record::component_names[static_cast<std::size_t>(a.component)]);
  if (!a.held_by_server) return fmt::format("{} ({})", a.cause, component);
  return fmt::format(
      "{}: all {} connections were held by slow responses (service time up to {}), and "
      "requests queued behind them ({})",
      a.cause, h.connections, analysis::duration_text(h.longest_service_ns), component);
}

}  // namespace

nlohmann::ordered_json summary_json(const record::latency_summary& s) {
  return json{{"count", s.count}, {"p50_ns", s.p50}, {"p99_ns", s.p99}, {"max_ns", s.max}};
}

worst_range worst_range_of(const run::result& r, const record::second_views& s) {
  const nanoseconds start = r.measure_start + one_second * s.second;
  const nanoseconds to_unix = r.start.unix - r.start.mono;
  return {start, start + one_second, start + to_unix, start + one_second + to_unix};
}

nlohmann::ordered_json series_json(const run::config& c, const run::result& r) {
  json rows = json::array();
  for (const auto& row : r.series) rows.push_back(row_json(c, r, row));
  return json{{"interval_ns", c.interval.count()}, {"per_second", rows}};
}

nlohmann::ordered_json histograms_json(const run::config& c, const run::result& r) {
  json views = json::object();
  for (std::size_t i = 0; i < record::view_count; ++i) {
    const auto v = static_cast<record::view>(i);
    if (!record::reported(v, c.tls.enabled)) continue;
    views[std::string(record::view_names[i])] = hdr::encode_compressed_base64(r.measured.views[v]);
  }
  if (c.expected_interval()) {
    views["reconstructed"] =
        hdr::encode_compressed_base64(reconstructed(r, *c.expected_interval()));
  }
  json doc{{"encoding", "HdrHistogram V2, compressed, base64 (as in .hlog)"}, {"views", views}};
  // Each name's own views (a mix's requests, a scenario's steps and sessions), in the mix's
  // order, so that runs merge by name too.
  if (!c.mix.empty()) {
    json names = json::object();
    for (std::size_t n = 0; n < c.mix.size() && n < r.measured.views.name_count(); ++n) {
      json named = json::object();
      for (std::size_t v = 0; v < record::named_view_count; ++v) {
        named[std::string(record::named_view_names[v])] = hdr::encode_compressed_base64(
            r.measured.views.named(n, static_cast<record::named_view>(v)));
      }
      names[c.mix[n].name] = named;
    }
    doc["names"] = names;
  }
  if (c.hybrid()) {
    json sessions = json::object();
    for (const auto& sc : c.hybrid()->scenarios) {
      if (sc.session_name >= r.measured.views.name_count()) continue;
      sessions[sc.name] = hdr::encode_compressed_base64(
          r.measured.views.named(sc.session_name, record::named_view::response_time));
    }
    doc["sessions"] = sessions;
  }
  return doc;
}

analysis::connection_holders holders_of(const run::config& c, const run::result& r,
                                        const verdicts& v) {
  analysis::connection_holders h;
  h.connections = c.connections * std::max(run::requests_per_connection(c, r), 1U);
  h.longest_service_ns = static_cast<double>(r.measured.views[record::view::service_time].max());
  for (const auto& check : v.validity.checks)
    h.too_few_for_load = h.too_few_for_load || (check.name == "connection_cap" && !check.pass);
  return h;
}

nlohmann::ordered_json worst_interval_json(const run::result& r,
                                           const analysis::connection_holders& holders) {
  if (!r.worst_second) return json(nullptr);
  const auto& s = *r.worst_second;
  const worst_range range = worst_range_of(r, s);
  json j{{"second", s.second},
         {"intended_start_mono_ns", range.start_mono.count()},
         {"intended_end_mono_ns", range.end_mono.count()},
         {"intended_start_unix_ns", range.start_unix.count()},
         {"intended_end_unix_ns", range.end_unix.count()}};
  j.update(story_json(s, holders));
  j["samples_lost"] = r.worst_second_lost;
  return j;
}

const record::second_views* worst_step(const run::result& r) {
  const record::second_views* worst = nullptr;
  for (const auto& s : r.steps) {
    if (s.response_time.total_count() == 0) continue;
    if (!worst || record::worse_than(s, *worst)) worst = &s;
  }
  return worst;
}

nlohmann::ordered_json worst_step_json(const run::config& c, const run::result& r,
                                       const analysis::connection_holders& holders) {
  const record::second_views* s = worst_step(r);
  if (!s) return json(nullptr);
  const auto index = static_cast<std::size_t>(s - r.steps.data());
  json j{{"name", index < c.mix.size() ? c.mix[index].name : std::string()}};
  j.update(story_json(*s, holders));
  return j;
}

// "worst second (by intended time): 7 s into the window, 12:00:07.000-12:00:08.000 UTC".
void write_worst_text(std::ostream& out, const run::config& c, const run::result& r,
                      const analysis::connection_holders& holders) {
  using analysis::duration_text;
  const auto story = [&](const record::second_views& s) {
    const analysis::attribution a = analysis::attribute(s, &holders);
    fmt::print(out, "  response time p50 {}, p99 {}, max {}\n",
               duration_text(s.response_time.value_at_percentile(50)),
               duration_text(s.response_time.value_at_percentile(99)),
               duration_text(s.response_time.max()));
    std::string parts;
    for (std::size_t i = 0; i < record::component_count; ++i) {
      parts += fmt::format("{}{} {}", i ? ", " : "", record::component_names[i],
                           duration_text(s.components[i].value_at_percentile(99)));
    }
    fmt::print(out, "  p99 of {}\n  cause: {}\n", parts, cause_text(a, holders));
  };
  if (r.worst_second) {
    const auto& s = *r.worst_second;
    const worst_range range = worst_range_of(r, s);
    const auto unix_s = static_cast<double>(range.start_unix.count()) / 1e9;
    fmt::print(out,
               "worst second (by intended time): second {} of the window (intended {:.3f} .. "
               "{:.3f} Unix s)\n",
               s.second, unix_s, unix_s + 1.0);
    fmt::print(out, "  planned {}, sent {}, completed {}\n", s.planned, s.sent, s.completed);
    story(s);
  }
  if (!c.hybrid()) return;
  if (const record::second_views* step = worst_step(r)) {
    const auto index = static_cast<std::size_t>(step - r.steps.data());
    fmt::print(out, "worst step: {} (planned {}, sent {}, completed {})\n",
               index < c.mix.size() ? c.mix[index].name : "?", step->planned, step->sent,
               step->completed);
    story(*step);
  }
}

}  // namespace punctual::report
