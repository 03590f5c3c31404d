// The HTML report's charts: the percentile spectrum (whole run) and the series over time (row by
// row of the .hlog interval), with the worst second of the run shown where it happened.
#include <fmt/format.h>

#include <iterator>
#include <string>
#include <vector>

#include "analysis/slo.hpp"
#include "report/html_report.hpp"
#include "report/html_sections.hpp"

namespace punctual::report {

chart_spec html_spectrum_spec(std::string id, std::string title) {
  chart_spec c;
  c.id = std::move(id);
  c.title = std::move(title);
  c.x_title = "percentile";
  c.y_title = "latency";
  c.x_axis = x_axis_kind::percentile;
  c.y_axis = y_axis_kind::latency;
  c.height = 360;
  return c;
}

chart_spec html_time_spec(std::string id, std::string title, y_axis_kind y, int height) {
  chart_spec c;
  c.id = std::move(id);
  c.title = std::move(title);
  c.x_title = "seconds into the measured window";
  c.y_title = y == y_axis_kind::latency ? "latency" : "requests per row";
  c.y_axis = y;
  c.height = height;
  return c;
}

namespace {

constexpr std::string_view chart_summary_keys[] = {"50", "75", "90", "99", "99.9", "99.99", "100"};

// The spectrum of a view that has no histogram (an older report): its summary percentiles only.
std::vector<chart_point> chart_summary_points(const html_json* view) {
  std::vector<chart_point> points;
  const html_json* p = html_find(view, "percentiles_ns");
  if (html_number(view, "count") <= 0) return points;
  if (const html_json* min = html_find(view, "min_ns"); min && min->is_number()) {
    points.push_back({0, min->get<double>()});
  }
  for (const auto key : chart_summary_keys) {
    if (const html_json* v = html_find(p, key); v && v->is_number()) {
      points.push_back({std::stod(std::string(key)), v->get<double>()});
    }
  }
  return points;
}

// The whole-run percentile SLOs as lines at their bounds ("p99<=200ms"); scoped ones belong to
// a name's spectrum, and the others are no latency.
std::vector<chart_threshold> chart_slo_lines(const html_json& report) {
  std::vector<chart_threshold> lines;
  const html_json* results = html_find(html_find(report, "slo"), "results");
  if (!results || !results->is_array()) return lines;
  for (const auto& r : *results) {
    const auto e = analysis::try_parse_slo(html_string(&r, "expression"));
    if (!e || e->metric != analysis::slo_metric::percentile || !e->scope.empty()) continue;
    lines.push_back({"SLO " + e->text, e->threshold});
  }
  return lines;
}

// Each row's value at `key` (or `key`.`sub`), at the middle of the interval the row covers.
std::vector<chart_point> chart_column(const html_json& rows, double interval_s,
                                      std::string_view key, std::string_view sub = {}) {
  std::vector<chart_point> points;
  points.reserve(rows.size());
  for (const auto& row : rows) {
    const html_json* holder = sub.empty() ? &row : html_find(row, key);
    const std::string_view leaf = sub.empty() ? key : sub;
    points.push_back({html_row_middle_s(row, interval_s), html_number(holder, leaf)});
  }
  return points;
}

std::string chart_component_words(std::string_view component) {
  if (component == "service_time") return "service time";
  if (component == "queue_wait") return "queue wait";
  if (component == "connect_time") return "connect time";
  if (component == "send_lag") return "send lag";
  return std::string(component);
}

// The worst second (by intended time) as a band: its start relative to the measured window.
std::optional<chart_band> chart_worst_band(const html_json& report) {
  const html_json* w = html_find(report, "worst_interval");
  const html_json* start = html_find(w, "intended_start_mono_ns");
  const html_json* schedule = html_find(report, "schedule");
  if (!start || !start->is_number() || !html_find(schedule, "start_mono_ns")) return std::nullopt;
  const double from = (start->get<double>() - html_number(schedule, "start_mono_ns") -
                       html_number(schedule, "warmup_ns")) /
                      1e9;
  const double width =
      (html_number(w, "intended_end_mono_ns", start->get<double>() + 1e9) - start->get<double>()) /
      1e9;
  return chart_band{fmt::format("worst second ({})", html_number(w, "second")), from, from + width};
}

// "12:34:56.123 UTC" of "2026-11-30 12:34:56.123 UTC": a second after the start, its date goes
// without saying.
std::string chart_clock_time(const std::string& utc) {
  return utc.size() > 11 && utc[10] == ' ' ? utc.substr(11) : utc;
}

// Two label/value pairs a row, so the block stays a few lines high under a full-width chart;
// the first pair of each row is what a reader scans for (second, cause).
void chart_worst_block(std::string& out, const html_json& report) {
  if (!report.is_object() || !report.contains("worst_interval")) return;  // an older report
  const html_json* w = html_find(report, "worst_interval");
  if (!w || !w->is_object()) {
    return html_note(out, "no worst second: the window has no whole second with a response");
  }
  const html_json* rt = html_find(w, "response_time");
  const html_json* parts = html_find(w, "components_p99_ns");
  std::string part_text;
  if (parts && parts->is_object()) {
    for (const auto& [k, v] : parts->items()) {
      part_text += (part_text.empty() ? "" : ", ") + xml_escape(chart_component_words(k)) + " " +
                   html_duration(v.is_number() ? v.get<double>() : 0);
    }
  }
  auto o = std::back_inserter(out);
  fmt::format_to(
      o,
      "<div class=\"worst\"><h3>The worst second</h3><table class=\"kv\"><tr><th>second</th>"
      "<td>{} (by intended time)</td><th>response time</th><td>p50 {}, <b>p99 {}</b>, max {}</td>"
      "</tr><tr><th>cause</th><td><b>{}</b> ({} was the largest part at p99)</td><th>p99 of its "
      "parts</th><td>{}</td></tr><tr><th>planned / sent / completed</th><td>{} / {} / {}</td>"
      "<th>intended</th><td>{} .. {}</td></tr>",
      html_count(html_number(w, "second")), html_duration(html_number(rt, "p50_ns")),
      html_duration(html_number(rt, "p99_ns")), html_duration(html_number(rt, "max_ns")),
      xml_escape(html_string(w, "cause")),
      xml_escape(chart_component_words(html_string(w, "cause_component"))), part_text,
      html_count(html_number(w, "planned")), html_count(html_number(w, "sent")),
      html_count(html_number(w, "completed")), html_utc(html_number(w, "intended_start_unix_ns")),
      chart_clock_time(html_utc(html_number(w, "intended_end_unix_ns"))));
  if (const double lost = html_number(w, "samples_lost"); lost > 0) {
    fmt::format_to(o, "<tr><th>samples lost</th><td class=\"warn\">{}</td></tr>", html_count(lost));
  }
  // A merged report: each shard judged its own seconds, and this is the worst of theirs.
  if (const html_json* shard = html_find(w, "shard"); shard && shard->is_number()) {
    fmt::format_to(
        o,
        "<tr><th>from</th><td colspan=\"3\">shard {}: the worst of the shards' own worst "
        "seconds, its counts that shard's</td></tr>",
        html_count(shard->get<double>()));
  }
  out += "</table></div>\n";
}

void chart_latency_over_time(std::string& out, const html_json& report, const html_json& rows,
                             double interval_s) {
  const auto column = [&](const char* view, const char* key) {
    return chart_column(rows, interval_s, view, key);
  };
  chart_spec c = html_time_spec("latency-over-time", "Latency per row", y_axis_kind::latency, 360);
  c.x_end = html_rows_end_s(rows, interval_s);
  c.series = {{"response p50", html_blue, column("response_time", "p50_ns"), "4 3"},
              {"response p99", html_blue, column("response_time", "p99_ns"), ""},
              {"response max", html_purple, column("response_time", "max_ns"), ""},
              {"service p50", html_orange, column("service_time", "p50_ns"), "4 3"},
              {"service p99", html_orange, column("service_time", "p99_ns"), ""},
              {"service max", html_red, column("service_time", "max_ns"), "1 2"}};
  c.thresholds = chart_slo_lines(report);
  c.band = chart_worst_band(report);
  out += "<h2 id=\"over-time\">Over time</h2>\n";
  html_chart(out, c,
             fmt::format("Each point is one row of {} drawn at its middle. Response time is cut "
                         "by completion time, as the .hlog is; the band is the worst second by "
                         "intended time, so a stall's slow responses land in or after it.",
                         html_duration(interval_s * 1e9)));
  chart_worst_block(out, report);
}

void chart_load_over_time(std::string& out, const html_json& rows, double interval_s) {
  const auto column = [&](const char* key) { return chart_column(rows, interval_s, key); };
  chart_spec c = html_time_spec("load-over-time", "Load per row", y_axis_kind::count, 300);
  c.x_end = html_rows_end_s(rows, interval_s);
  // Planned last, drawn on top: its dashes stay visible where sent and completed keep to it.
  c.series = {{"sent", html_blue, column("sent"), ""},
              {"completed", html_green, column("completed"), ""},
              {"errors", html_red, column("errors"), ""},
              {"timeouts", html_purple, column("timeouts"), ""},
              {"planned", html_grey, column("planned"), "4 3"}};
  html_chart(out, c,
             "Planned by intended time, sent by send time, completed and failed by the time "
             "they ended.");
  chart_spec lag = html_time_spec("send-lag-over-time", "Send lag and queue wait per row",
                                  y_axis_kind::latency, 260);
  lag.x_end = c.x_end;
  lag.series = {{"send lag p99", html_red, column("send_lag_p99_ns"), ""},
                {"queue wait p99", html_orange, column("queue_wait_p99_ns"), "4 3"}};
  html_chart(out, lag,
             "Send lag is the generator's own lateness; queue wait is time waiting for a busy "
             "connection.");
}

}  // namespace

void html_spectrum_section(std::string& out, const html_json& report) {
  const html_json* views = html_find(html_find(report, "histograms"), "views");
  const html_json* latency = html_find(report, "latency");
  chart_spec c = html_spectrum_spec("spectrum", "Percentile spectrum");
  constexpr std::pair<const char*, const char*> names[] = {{"response_time", "response time"},
                                                           {"service_time", "service time"},
                                                           {"reconstructed", "reconstructed"}};
  const char* colours[] = {html_blue, html_orange, html_green};
  bool from_summary = false;
  for (std::size_t i = 0; i < std::size(names); ++i) {
    if (auto h = html_histogram(html_find(views, names[i].first))) {
      c.series.push_back({names[i].second, colours[i], spectrum_points(*h), ""});
    } else if (!views && html_find(latency, names[i].first)) {
      c.series.push_back({names[i].second, colours[i],
                          chart_summary_points(html_find(latency, names[i].first)), ""});
      from_summary = true;
    }
  }
  c.thresholds = chart_slo_lines(report);
  out += "<h2 id=\"spectrum-section\">Percentile spectrum</h2>\n";
  if (from_summary) {
    html_note(out,
              "this report has no histograms: the spectrum is drawn through the summary "
              "percentiles only");
  }
  html_chart(out, c,
             "Response time runs from each request's intended time; service time from its actual "
             "send, as closed-loop tools measure.");
}

void html_demo_spectrum(std::string& out, const html_json& demo) {
  const html_json* columns = html_find(demo, "columns");
  const html_json* histograms = html_find(demo, "histograms");
  chart_spec c = html_spectrum_spec("spectrum", "Percentile spectrum of the four views");
  const char* colours[] = {html_orange, html_green, html_blue, html_grey};
  std::size_t i = 0;
  for (const auto& [name, col] : columns->items()) {
    std::vector<chart_point> points;
    if (auto h = html_histogram(html_find(histograms, name))) {
      points = spectrum_points(*h);
    } else if (col.is_object()) {  // pNN_ns columns only
      for (const auto& [k, v] : col.items()) {
        if (k.size() > 4 && k[0] == 'p' && k.ends_with("_ns") && v.is_number()) {
          points.push_back({std::stod(k.substr(1, k.size() - 4)), v.get<double>()});
        }
      }
    }
    c.series.push_back({name, colours[i++ % std::size(colours)], std::move(points),
                        name.starts_with("truth") ? "5 3" : ""});
  }
  html_chart(out, c, "The truth is the open run's samples checked against the server's stall log.");
}

void html_over_time_sections(std::string& out, const html_json& report) {
  const html_json* rows = html_find(html_find(report, "series"), "per_second");
  if (!rows || !rows->is_array() || rows->empty()) {
    out += "<h2 id=\"over-time\">Over time</h2>\n";
    html_note(out,
              "this report has no series: it was written before punctual recorded rows "
              "over time, or the window was empty");
    return chart_worst_block(out, report);
  }
  const double interval_s = html_row_interval_s(report);
  chart_latency_over_time(out, report, *rows, interval_s);
  chart_load_over_time(out, *rows, interval_s);
}

}  // namespace punctual::report
