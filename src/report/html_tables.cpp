// The HTML report's per-name sections (a --requests mix's names, a hybrid run's steps and
// sessions), its retries (the attempts behind the logical requests) and the generator's threads.
#include <fmt/format.h>

#include <iterator>
#include <string>
#include <vector>

#include "report/html_report.hpp"
#include "report/html_sections.hpp"

namespace punctual::report {

namespace {

double table_outcome(const html_json& entry, std::string_view name) {
  return html_number(html_find(entry, "outcomes"), name);
}

void table_by_name(std::string& out, const html_json& by_name, std::string_view title) {
  fmt::format_to(std::back_inserter(out),
                 "<h3>{}</h3>\n<table><tr><th>name</th><th>planned</th><th>ok</th><th>errors</th>"
                 "<th>timeouts</th><th>other</th><th>response p50</th><th>p90</th><th>p99</th>"
                 "<th>p99.9</th><th>service p99</th></tr>",
                 xml_escape(title));
  for (const auto& [name, e] : by_name.items()) {
    const html_json* rt = html_find(e, "response_time");
    const double errors = table_outcome(e, "http_error") + table_outcome(e, "socket_error");
    const double other =
        table_outcome(e, "dropped") + table_outcome(e, "skipped") + table_outcome(e, "unfinished");
    fmt::format_to(std::back_inserter(out),
                   "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td>"
                   "<td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
                   xml_escape(name), html_count(html_number(&e, "planned")),
                   html_count(table_outcome(e, "ok")), html_count(errors),
                   html_count(table_outcome(e, "timeout")), html_count(other),
                   html_view_cell(rt, "50"), html_view_cell(rt, "90"), html_view_cell(rt, "99"),
                   html_view_cell(rt, "99.9"), html_view_cell(html_find(e, "service_time"), "99"));
  }
  out += "</table>\n";
}

std::string table_failed_at(const html_json* failed_at) {
  std::string text;
  if (!failed_at || !failed_at->is_object()) return text;
  for (const auto& [step, n] : failed_at->items()) {
    if (n.is_number() && n.get<double>() > 0) {
      text += (text.empty() ? "" : ", ") + step + " " + html_count(n.get<double>());
    }
  }
  return text;
}

void table_sessions(std::string& out, const html_json& sessions) {
  out +=
      "<h3>Sessions</h3>\n<table><tr><th>scenario</th><th>planned</th><th>ok</th>"
      "<th>failed</th><th>skipped</th><th>other</th><th>session p50</th><th>p90</th>"
      "<th>p99</th><th>max</th><th>failed at</th></tr>";
  for (const auto& [name, s] : sessions.items()) {
    const html_json* t = html_find(s, "session_time");
    const double failed = table_outcome(s, "http_error") + table_outcome(s, "socket_error") +
                          table_outcome(s, "timeout");
    fmt::format_to(std::back_inserter(out),
                   "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td>"
                   "<td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
                   xml_escape(name), html_count(html_number(&s, "planned")),
                   html_count(table_outcome(s, "ok")), html_count(failed),
                   html_count(table_outcome(s, "skipped")),
                   html_count(table_outcome(s, "dropped") + table_outcome(s, "unfinished")),
                   html_view_cell(t, "50"), html_view_cell(t, "90"), html_view_cell(t, "99"),
                   html_view_cell(t, "100"),
                   xml_escape(table_failed_at(html_find(s, "failed_at"))));
  }
  out += "</table>\n";
}

void table_session_spectrum(std::string& out, const html_json& report) {
  const html_json* sessions = html_find(html_find(report, "histograms"), "sessions");
  if (!sessions || !sessions->is_object() || sessions->empty()) return;
  chart_spec c = html_spectrum_spec("session-spectrum", "Session time spectrum");
  c.y_title = "session time";
  const char* colours[] = {html_blue, html_orange, html_green, html_purple, html_red, html_grey};
  for (const auto& [name, text] : sessions->items()) {
    if (auto h = html_histogram(&text)) {
      c.series.push_back(
          {name, colours[c.series.size() % std::size(colours)], spectrum_points(*h), ""});
    }
  }
  html_chart(out, c, "From each user's arrival to its last step's completion or its failure.");
}

void table_worst_step(std::string& out, const html_json& report) {
  const html_json* w = html_find(report, "worst_step");
  if (!w || !w->is_object()) return;
  const html_json* rt = html_find(w, "response_time");
  fmt::format_to(std::back_inserter(out),
                 "<p>worst step: <b>{}</b>, response time p50 {}, p99 {}, max {}; cause: {}</p>\n",
                 xml_escape(html_string(w, "name")), html_duration(html_number(rt, "p50_ns")),
                 html_duration(html_number(rt, "p99_ns")), html_duration(html_number(rt, "max_ns")),
                 xml_escape(html_string(w, "cause")));
}

// Attempts and amplification per row: from the series, else from the older attempts.per_second.
void table_retry_charts(std::string& out, const html_json& report) {
  const html_json* rows = html_find(html_find(report, "series"), "per_second");
  const bool from_series = rows && rows->is_array() && !rows->empty();
  if (!from_series) rows = html_find(html_find(report, "attempts"), "per_second");
  if (!rows || !rows->is_array() || rows->empty()) return;
  const char* base = from_series ? "sent" : "planned";
  // attempts.per_second's rows are whole seconds.
  const double interval_s = from_series ? html_row_interval_s(report) : 1;
  std::vector<chart_point> attempts, firsts, amplification;
  for (const auto& row : *rows) {
    const double x = html_row_middle_s(row, interval_s);
    const double a = html_number(&row, "attempts");
    const double b = html_number(&row, base);
    attempts.push_back({x, a});
    firsts.push_back({x, b});
    if (b > 0) amplification.push_back({x, a / b});
  }
  chart_spec c = html_time_spec("attempts-over-time", "Attempts per row", y_axis_kind::count, 280);
  c.x_end = html_rows_end_s(*rows, interval_s);
  c.series = {{"attempts", html_red, std::move(attempts), ""},
              {base, html_blue, std::move(firsts), "4 3"}};
  html_chart(out, c, "");
  chart_spec amp =
      html_time_spec("amplification-over-time", "Amplification per row", y_axis_kind::count, 280);
  amp.y_title = fmt::format("attempts / {}", base);
  amp.series = {{"amplification", html_purple, std::move(amplification), ""}};
  amp.x_end = c.x_end;
  amp.thresholds = {{"no retries", 1.0, html_grey}};
  html_chart(out, amp, "");
}

}  // namespace

void html_named_sections(std::string& out, const html_json& report) {
  const bool hybrid = html_string(html_find(report, "model"), "kind") == "hybrid";
  const html_json* by_name = html_find(report, "by_name");
  const html_json* sessions = html_find(report, "sessions");
  const bool names = by_name && by_name->is_object() && !by_name->empty();
  if (!hybrid && !names) return;
  out += hybrid ? "<h2 id=\"hybrid\">Scenario steps and sessions</h2>\n"
                : "<h2 id=\"by-name\">By name</h2>\n";
  if (names) table_by_name(out, *by_name, hybrid ? "Steps" : "Requests by name");
  if (sessions && sessions->is_object()) table_sessions(out, *sessions);
  table_worst_step(out, report);
  table_session_spectrum(out, report);
}

void html_retry_section(std::string& out, const html_json& report) {
  const html_json* policy = html_find(report, "retry_policy");
  const html_json* attempts = html_find(report, "attempts");
  if (html_number(policy, "retries") <= 0 && html_number(attempts, "retries") <= 0) return;
  auto o = std::back_inserter(out);
  out += "<h2 id=\"retries\">Retries</h2>\n";
  if (const std::string d = html_string(policy, "description"); !d.empty()) {
    out += "<p>" + xml_escape(d) + "</p>\n";
  }
  fmt::format_to(o,
                 "<table class=\"kv\"><tr><th>attempts</th><td>{} ({} first, {} retries)</td></tr>"
                 "<tr><th>amplification</th><td>{} overall, {} in the worst second</td></tr>"
                 "<tr><th>refused by the budget</th><td>{}</td></tr><tr><th>past the deadline"
                 "</th><td>{}</td></tr>",
                 html_count(html_number(attempts, "total")),
                 html_count(html_number(attempts, "first")),
                 html_count(html_number(attempts, "retries")),
                 html_count(html_number(attempts, "amplification")),
                 html_count(html_number(attempts, "amplification_max",
                                        html_number(attempts, "amplification"))),
                 html_count(html_number(attempts, "refused_by_budget")),
                 html_count(html_number(attempts, "past_deadline")));
  std::string causes;
  if (const html_json* c = html_find(attempts, "retries_by_cause"); c && c->is_object()) {
    for (const auto& [k, v] : c->items()) {
      causes += fmt::format("{}{} {}", causes.empty() ? "" : ", ", k,
                            html_count(v.is_number() ? v.get<double>() : 0));
    }
  }
  out += "<tr><th>retries by cause</th><td>" + xml_escape(causes) + "</td></tr></table>\n";
  table_retry_charts(out, report);
}

std::string html_shard_text(const html_json& report) {
  const html_json* shard = html_find(html_find(report, "schedule"), "shard");
  const double count = html_number(shard, "count", 1);
  if (!shard || count <= 1) return {};
  const std::string plan = html_string(html_find(report, "schedule"), "plan_sha256").substr(0, 12);
  const html_json* index = html_find(shard, "index");
  if (index && index->is_number()) {
    return xml_escape(
        fmt::format("shard {} of {} (plan {})", index->get<std::uint64_t>(), count, plan));
  }
  double worst_lag = -1;
  const html_json* shards = html_find(report, "shards");
  if (shards && shards->is_array()) {
    for (const auto& s : *shards)
      worst_lag = std::max(worst_lag, html_number(&s, "start_lag_ns", -1));
  }
  return xml_escape(
      fmt::format("merged from {} shards (plan {}){}", count, plan,
                  worst_lag >= 0 ? "; start lags up to " + html_duration(worst_lag) : ""));
}

void html_generator_section(std::string& out, const html_json& report) {
  const html_json* g = html_find(report, "generator");
  const html_json* workers = html_find(g, "workers");
  if (!workers || !workers->is_array() || workers->empty()) return;
  out += "<h2 id=\"generator\">Generator</h2>\n<p>";
  const double claimed = html_number(g, "sent_for_others");
  out += claimed > 0 ? fmt::format("{} requests sent for a paused worker (longest pause {})",
                                   html_count(claimed),
                                   html_duration(html_number(g, "longest_wake_lateness_ns")))
                     : std::string("no request was sent for a paused worker");
  if (html_find(g, "host_steal_ns")) {
    out += "; host stole " + html_duration(html_number(g, "host_steal_ns"));
  }
  out +=
      "</p>\n<table><tr><th>worker</th><th>planned</th><th>sent for others</th>"
      "<th>claimed away</th><th>outcomes</th><th>longest pause</th><th>CPU share</th></tr>";
  std::size_t k = 0;
  for (const auto& w : *workers) {
    fmt::format_to(
        std::back_inserter(out),
        "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td>"
        "<td>{:.1f}%</td></tr>",
        k++, html_count(html_number(&w, "planned")), html_count(html_number(&w, "sent_for_others")),
        html_count(html_number(&w, "claimed_away")), html_count(html_number(&w, "outcomes")),
        html_duration(html_number(&w, "longest_wake_lateness_ns")),
        100 * html_number(&w, "cpu_share"));
  }
  out += "</table>\n";
}

}  // namespace punctual::report
