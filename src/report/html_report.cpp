// The page of the HTML report and its first sections: what was run, how every planned request
// ended, and whether to believe the figures. The charts and tables follow in html_charts.cpp and
// html_tables.cpp.
#include "report/html_report.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <ctime>
#include <iterator>
#include <stdexcept>

#include "analysis/slo.hpp"
#include "analysis/text.hpp"
#include "punctual/histogram/codec.hpp"
#include "punctual/histogram/iteration.hpp"
#include "report/html_sections.hpp"

namespace punctual::report {

namespace {

// Inline so the page fetches nothing; system fonts for the same reason.
constexpr std::string_view html_css =
    "body{font-family:system-ui,sans-serif;margin:1em auto;max-width:72em;padding:0 1em;"
    "color:#222;line-height:1.4}h1{font-size:1.45em;margin:.3em 0 .5em}h2{font-size:1.2em;"
    "border-bottom:1px solid #ccc;margin-top:1.5em}h3{font-size:1.05em;margin:.8em 0 .3em}"
    "table{border-collapse:collapse;margin:.4em 0}th,td{padding:.2em .6em;border-bottom:1px "
    "solid #eee;text-align:right;vertical-align:top}th{background:#f6f6f6}th:first-child,"
    "td:first-child,table.kv td,table.kv th,.text{text-align:left}td.nowrap,table.kv th{"
    "white-space:nowrap}.worst table{max-width:1000px}"
    "td.zero{color:#aaa}.alarm{background:#fdecea;border:2px solid #c0392b;color:#8e1b10;"
    "padding:.5em .8em;font-weight:bold}.pass{color:#1e7b34}.fail{color:#c0392b;font-weight:"
    "bold}.warn{color:#a05a00}.note{color:#666;font-style:italic}code{background:#f4f4f4;"
    "padding:.1em .3em;word-break:break-all}"
    // Two label/value pairs a line: the whole workload in a few lines above the verdict.
    "dl.facts{display:grid;grid-template-columns:max-content minmax(0,1fr) max-content "
    "minmax(0,1fr);gap:.1em 1em;margin:.3em 0 .8em}dl.facts dt{font-weight:bold;color:#555}"
    "dl.facts dd{margin:0}dl.facts .wide{grid-column:2/-1}"
    ".verdict{padding:.5em .8em;border-left:5px solid #1e7b34;background:#eef7f0;margin:.6em 0}"
    ".verdict.bad{border-color:#c0392b;background:#fdecea}"
    // The charts take the page's width up to 1000px; their viewBox is 960 units wide.
    "svg.chart{width:100%;max-width:1000px;height:auto;display:block}figure{margin:.6em 0 1em}"
    "figcaption{color:#555;font-size:.9em;max-width:1000px}";

constexpr std::string_view html_outcome_names[] = {
    "ok", "http_error", "socket_error", "timeout", "dropped", "skipped", "unfinished"};

// One label/value pair of the workload's grid; `wide` takes the rest of the line.
void html_fact(std::string& out, std::string_view key, std::string_view value_html,
               bool wide = false) {
  fmt::format_to(std::back_inserter(out), "<dt>{}</dt><dd{}>{}</dd>", xml_escape(key),
                 wide ? " class=\"wide\"" : "", value_html);
}

std::string html_pass(bool pass) {
  return pass ? "<span class=\"pass\">&#10003; pass</span>"
              : "<span class=\"fail\">&#10007; fail</span>";
}

std::string html_slo_value(double v, const std::optional<analysis::slo_expression>& e) {
  if (!e || e->unit == analysis::slo_unit::nanoseconds) return html_duration(v);
  if (e->unit == analysis::slo_unit::percent) return fmt::format("{:.4g}%", v);
  return html_count(v);
}

std::string html_command_line(const html_json* line) {
  if (!line || !line->is_array()) return "";
  std::string text;
  for (const auto& arg : *line) {
    const std::string a = arg.is_string() ? arg.get<std::string>() : arg.dump();
    const bool quote = a.empty() || a.find_first_of(" \t'\"<>&|;$") != std::string::npos;
    text += (text.empty() ? "" : " ") + (quote ? "'" + a + "'" : a);
  }
  return text;
}

std::string html_rate(const html_json* model) {
  const html_json* rate = html_find(model, "rate_per_s");
  if (rate && rate->is_number()) {
    return xml_escape(analysis::number_text(rate->get<double>()) + " req/s");
  }
  return html_string(model, "kind") == "closed" ? "none: a closed model has no rate"
                                                : "no single rate (see the schedule)";
}

std::string html_correction(const html_json& report) {
  const html_json* c = html_find(report, "correction");
  std::string text = html_string(c, "kind");
  if (const html_json* e = html_find(c, "expected_interval_ns"); e && e->is_number()) {
    text += ", expected interval " + html_duration(e->get<double>());
  }
  return xml_escape(text.empty() ? "not stated" : text);
}

// Alarms that change how every figure below reads; the invalid run's is the verdict's.
void html_alarms(std::string& out, const html_json& report) {
  const html_json* tls = html_find(report, "tls");
  if (const html_json* v = html_find(tls, "verify"); v && v->is_boolean() && !v->get<bool>()) {
    out +=
        "<p class=\"alarm\">certificate verification was OFF (--insecure): the server was not "
        "authenticated</p>\n";
  }
  if (const html_json* i = html_find(report, "interrupted"); i && i->is_boolean() && *i) {
    out +=
        "<p class=\"alarm\">the run was interrupted: the window ends at the interruption, and "
        "requests still in flight then are counted as unfinished</p>\n";
  }
}

std::string html_model_text(const html_json* model) {
  std::string text = html_string(model, "kind");
  if (const std::string a = html_string(model, "arrival"); !a.empty()) {
    text += " (" + a + " arrivals)";
  }
  return xml_escape(text);
}

// "h2 (--http auto): 9 connections h2, 1 http/1.1; up to 100 streams each".
std::string html_protocol_text(const html_json* protocol) {
  std::string text = html_string(protocol, "name");
  if (const std::string asked = html_string(protocol, "requested"); !asked.empty()) {
    text += " (--http " + asked + ")";
  }
  const html_json* connections = html_find(protocol, "connections");
  const double h2 = html_number(connections, "h2");
  const double http1 = html_number(connections, "http/1.1");
  if (h2 > 0) {
    text += ": " + html_count(h2) + " connections h2, " + html_count(http1) + " http/1.1";
    const double streams = html_number(html_find(protocol, "h2"), "max_streams");
    if (streams > 0) text += "; up to " + html_count(streams) + " streams each";
  }
  return xml_escape(text);
}

void html_workload(std::string& out, const html_json& report) {
  const html_json* model = html_find(report, "model");
  const html_json* schedule = html_find(report, "schedule");
  html_alarms(out, report);
  out += "<dl class=\"facts\" id=\"workload\">";
  html_fact(out, "target", xml_escape(html_string(&report, "target")));
  html_fact(out, "model", html_model_text(model));
  html_fact(out, "rate", html_rate(model));
  if (const std::string text = html_string(model, "schedule"); !text.empty()) {
    html_fact(out, "schedule", xml_escape(text));
  }
  if (const std::string shards = html_shard_text(report); !shards.empty())
    html_fact(out, "shards", shards, true);
  html_fact(out, "connections / threads",
            html_count(html_number(model, "connections")) + " / " +
                html_count(html_number(model, "threads")));
  html_fact(out, "correction", html_correction(report));
  if (const html_json* p = html_find(report, "protocol"))
    html_fact(out, "protocol", html_protocol_text(p));
  if (const std::string f = html_string(html_find(model, "scenario"), "file"); !f.empty()) {
    html_fact(out, "scenario file", xml_escape(f));
  }
  if (const html_json* t = html_find(model, "think_ns"); t && t->is_number()) {
    html_fact(out, "think time", html_duration(t->get<double>()));
  }
  html_fact(out, "window",
            fmt::format("{} after {} of warm-up", html_duration(html_number(schedule, "window_ns")),
                        html_duration(html_number(schedule, "warmup_ns"))));
  html_fact(out, "started", html_utc(html_number(schedule, "start_unix_ns")));
  html_fact(out, "precision", xml_escape(html_string(model, "precision")));
  html_fact(out, "punctual", xml_escape(html_string(html_find(report, "punctual"), "version")));
  if (const html_json* tls = html_find(report, "tls")) {
    const html_json* verify = html_find(tls, "verify");
    const bool on = verify && verify->is_boolean() && verify->get<bool>();
    html_fact(
        out, "TLS",
        xml_escape(fmt::format("{} {}, certificate verification {}", html_string(tls, "version"),
                               html_string(tls, "cipher"), on ? "on" : "OFF (--insecure)")),
        true);
  }
  html_fact(out, "command line",
            "<code>" + xml_escape(html_command_line(html_find(report, "command_line"))) + "</code>",
            true);
  out += "</dl>\n";
}

// The names of the failed checks at `level` ("gating" or "warning").
std::vector<std::string> html_failed_checks(const html_json* validity, std::string_view level) {
  std::vector<std::string> names;
  const html_json* checks = html_find(validity, "checks");
  if (!checks || !checks->is_array()) return names;
  for (const auto& c : *checks) {
    const html_json* pass = html_find(c, "pass");
    if (pass && pass->is_boolean() && !*pass && html_string(&c, "level") == level) {
      names.push_back(html_string(&c, "name"));
    }
  }
  return names;
}

std::string html_joined(const std::vector<std::string>& names) {
  std::string text;
  for (const auto& n : names) text += (text.empty() ? "" : ", ") + xml_escape(n);
  return text;
}

// Valid or not and why, in words; the checks themselves are in the details.
std::string html_validity_verdict(const html_json& report, bool& bad) {
  const html_json* validity = html_find(report, "validity");
  const html_json* valid = html_find(validity, "valid");
  if (!valid || !valid->is_boolean()) return "No validity verdict in this report.";
  const std::vector<std::string> warnings = html_failed_checks(validity, "warning");
  const std::string warned =
      warnings.empty()
          ? std::string()
          : fmt::format(" Warning{}: {}.", warnings.size() == 1 ? "" : "s", html_joined(warnings));
  bad = bad || !*valid;
  if (*valid) return "<b>Valid</b>: the generator kept its schedule." + warned;
  const std::vector<std::string> failed = html_failed_checks(validity, "gating");
  return fmt::format(
      "<b>INVALID</b>: {} failed, so the figures cannot be relied on.{}",
      failed.empty()
          ? std::string("a gating check")
          : fmt::format("gating check{} {}", failed.size() == 1 ? "" : "s", html_joined(failed)),
      warned);
}

std::string html_slo_verdict(const html_json& report, bool& bad) {
  const html_json* slo = html_find(report, "slo");
  if (!slo) return "";
  if (const html_json* r = html_find(slo, "refused"); r && r->is_boolean() && *r) {
    bad = true;
    return " SLOs <span class=\"fail\">refused</span>: " + xml_escape(html_string(slo, "refusal")) +
           ".";
  }
  const html_json* results = html_find(slo, "results");
  if (!results || !results->is_array()) return "";
  std::string text;
  for (const auto& r : *results) {
    const html_json* pass = html_find(r, "pass");
    bad = bad || !(pass && *pass);
    const auto e = analysis::try_parse_slo(html_string(&r, "expression"));
    fmt::format_to(std::back_inserter(text), " SLO {} {} at {}.",
                   xml_escape(html_string(&r, "expression")), html_pass(pass && *pass),
                   html_slo_value(html_number(&r, "figure"), e));
  }
  return text;
}

std::string html_worst_verdict(const html_json& report) {
  const html_json* w = html_find(report, "worst_interval");
  if (!w || !w->is_object()) return "";
  std::string part = html_string(w, "cause_component");
  std::replace(part.begin(), part.end(), '_', ' ');  // "service_time": the JSON's key
  return fmt::format(" The worst second ({}) had p99 {}; cause: <b>{}</b>{}.",
                     html_count(html_number(w, "second")),
                     html_duration(html_number(html_find(w, "response_time"), "p99_ns")),
                     xml_escape(html_string(w, "cause")),
                     part.empty() ? "" : " (" + xml_escape(part) + " was its largest part)");
}

void html_verdict(std::string& out, const html_json& report) {
  // Red when anything failed, an SLO as much as validity: green must mean all is well.
  bool bad = false;
  const std::string validity = html_validity_verdict(report, bad);
  const std::string slos = html_slo_verdict(report, bad);
  fmt::format_to(std::back_inserter(out), "<p class=\"verdict{}\" id=\"verdict\">{}{}{}</p>\n",
                 bad ? " bad" : "", validity, slos, html_worst_verdict(report));
}

// One row of counts over the outcomes, with the planned requests they share out.
void html_outcomes(std::string& out, const html_json& report) {
  const html_json* outcomes = html_find(report, "outcomes");
  const double planned = html_number(html_find(report, "schedule"), "planned");
  const auto share = [&](double n) {
    return planned > 0 ? fmt::format("{:.3g}%", 100 * n / planned) : std::string("-");
  };
  std::string names = "<tr><th></th><th>planned</th>";
  std::string counts = "<tr><th>requests</th><td><b>" + html_count(planned) + "</b></td>";
  std::string shares = "<tr><th>share of planned</th><td>" + share(planned) + "</td>";
  double sum = 0;
  for (const auto name : html_outcome_names) {
    const double n = html_number(outcomes, name);
    sum += n;
    const char* cls = n == 0 ? " class=\"zero\"" : "";
    names += fmt::format("<th>{}</th>", name);
    counts += fmt::format("<td{}>{}</td>", cls, html_count(n));
    shares += fmt::format("<td{}>{}</td>", cls, share(n));
  }
  out += "<h2 id=\"outcomes\">Outcomes</h2>\n<table>" + names + "</tr>" + counts + "</tr>" +
         shares + "</tr></table>\n";
  const html_json* rates = html_find(report, "rates_per_s");
  fmt::format_to(std::back_inserter(out),
                 "<p><span class=\"{}\">{} planned {} {} sum of outcomes {}</span>; rates in the "
                 "window: planned {} /s, sent {} /s, completed {} /s</p>\n",
                 planned == sum ? "pass" : "fail", planned == sum ? "&#10003;" : "&#10007;",
                 html_count(planned), planned == sum ? "=" : "&#8800;", html_count(sum),
                 html_count(html_number(rates, "planned")), html_count(html_number(rates, "sent")),
                 html_count(html_number(rates, "completed")));
  if (html_number(outcomes, "socket_error") > 0) {
    std::string reasons;
    if (const html_json* s = html_find(report, "socket_errors"); s && s->is_object()) {
      for (const auto& [k, v] : s->items()) {
        if (v.is_number() && v.get<double>() > 0) {
          reasons +=
              fmt::format("{}{} {}", reasons.empty() ? "" : ", ", k, html_count(v.get<double>()));
        }
      }
    }
    out += "<p>socket errors: " + xml_escape(reasons) + "</p>\n";
  }
}

std::string html_check_value(double v, std::string_view unit) {
  if (unit == "ns") return html_duration(v);
  if (unit == "share") return fmt::format("{:.3g}%", 100 * v);
  return xml_escape(analysis::number_text(v) + (unit.empty() ? "" : " ") + std::string(unit));
}

void html_validity(std::string& out, const html_json& report) {
  const html_json* validity = html_find(report, "validity");
  const html_json* valid = html_find(validity, "valid");
  out += "<h2 id=\"validity\">Validity checks</h2>\n";
  if (!valid || !valid->is_boolean()) return html_note(out, "this report has no validity verdict");
  out += *valid ? "<p class=\"pass\">valid: the generator kept its schedule</p>\n"
                : "<p class=\"fail\">INVALID: a gating check failed</p>\n";
  const html_json* checks = html_find(validity, "checks");
  if (!checks || !checks->is_array()) return;
  out +=
      "<table><tr><th>check</th><th>figure</th><th>threshold</th><th>level</th><th>result</th>"
      "<th class=\"text\">note</th></tr>";
  for (const auto& c : *checks) {
    const std::string unit = html_string(&c, "unit");
    const html_json* pass = html_find(c, "pass");
    fmt::format_to(
        std::back_inserter(out),
        "<tr><td>{}</td><td class=\"nowrap\">{}</td><td class=\"nowrap\">{} {}</td><td>{}</td>"
        "<td class=\"nowrap\">{}</td>"
        "<td class=\"text\">{}</td></tr>",
        xml_escape(html_string(&c, "name")), html_check_value(html_number(&c, "figure"), unit),
        xml_escape(html_string(&c, "relation")),
        html_check_value(html_number(&c, "threshold"), unit), xml_escape(html_string(&c, "level")),
        pass && *pass                          ? html_pass(true)
        : html_string(&c, "level") == "gating" ? html_pass(false)
                                               : std::string("<span class=\"warn\">! warn</span>"),
        xml_escape(html_string(&c, "note")));
  }
  out += "</table>\n";
}

void html_slos(std::string& out, const html_json& report) {
  const html_json* slo = html_find(report, "slo");
  out += "<h2 id=\"slo\">SLOs</h2>\n";
  if (!slo) return html_note(out, "no SLO was named (--slo)");
  if (const html_json* r = html_find(slo, "refused"); r && r->is_boolean() && *r) {
    out += "<p class=\"fail\">refused: " + xml_escape(html_string(slo, "refusal")) + "</p>\n";
    return;
  }
  fmt::format_to(std::back_inserter(out), "<p>judged on {}</p>\n",
                 xml_escape(html_string(slo, "basis")));
  const html_json* results = html_find(slo, "results");
  if (!results || !results->is_array()) return;
  out +=
      "<table><tr><th>SLO</th><th>figure</th><th>bound</th><th>result</th>"
      "<th>service time alone</th></tr>";
  for (const auto& r : *results) {
    const std::string text = html_string(&r, "expression");
    const auto e = analysis::try_parse_slo(text);
    const bool latency = !e || e->metric == analysis::slo_metric::percentile;
    const html_json* pass = html_find(r, "pass");
    const html_json* st_fails = html_find(r, "service_time_fails");
    fmt::format_to(
        std::back_inserter(out),
        "<tr><td>{}</td><td>{}</td><td>{}</td><td class=\"nowrap\">{}</td><td>{}</td></tr>",
        xml_escape(text), html_slo_value(html_number(&r, "figure"), e),
        xml_escape(html_string(&r, "bound")), html_pass(pass && *pass),
        !latency ? std::string("-")
                 : html_slo_value(html_number(&r, "service_figure"), e) +
                       (st_fails && *st_fails ? " (fails too)" : ""));
  }
  out += "</table>\n";
}

void html_confidence(std::string& out, const html_json& report) {
  const html_json* rt = html_find(html_find(report, "latency"), "response_time");
  const html_json* ci = html_find(rt, "percentiles_ci_ns");
  if (!ci || !ci->is_object() || ci->empty()) return;
  const html_json* methods = html_find(rt, "percentiles_ci_method");
  out +=
      "<h3>Response time with 95% confidence intervals</h3>\n<table><tr><th>percentile</th>"
      "<th>value</th><th>95% interval</th><th>method</th></tr>";
  for (const auto& [key, range] : ci->items()) {
    if (!range.is_array() || range.size() != 2 || !range[0].is_number()) continue;
    fmt::format_to(std::back_inserter(out),
                   "<tr><td>p{}</td><td>{}</td><td>{} .. {}</td><td>{}</td></tr>", xml_escape(key),
                   html_view_cell(rt, key), html_duration(range[0].get<double>()),
                   html_duration(range[1].get<double>()), xml_escape(html_string(methods, key)));
  }
  out += "</table>\n";
}

void html_latency_table(std::string& out, const html_json& report) {
  const html_json* latency = html_find(report, "latency");
  if (!latency || !latency->is_object()) return;
  out +=
      "<h2 id=\"latency\">Latency</h2>\n<table><tr><th>view</th><th>count</th><th>p50</th>"
      "<th>p90</th><th>p99</th><th>p99.9</th><th>p99.99</th><th>max</th></tr>";
  for (const auto& [name, view] : latency->items()) {
    if (!view.is_object()) continue;
    fmt::format_to(std::back_inserter(out),
                   "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td>"
                   "<td>{}</td><td>{}</td></tr>",
                   xml_escape(name), html_count(html_number(&view, "count")),
                   html_view_cell(&view, "50"), html_view_cell(&view, "90"),
                   html_view_cell(&view, "99"), html_view_cell(&view, "99.9"),
                   html_view_cell(&view, "99.99"), html_view_cell(&view, "100"));
  }
  out +=
      "</table>\n<p class=\"note\">&gt;= marks a lower bound: timeouts and unfinished "
      "requests are recorded at the time they were given up.</p>\n";
}

void html_demo_table(std::string& out, const html_json& columns) {
  std::vector<std::string> keys;
  for (const auto& [name, col] : columns.items()) {
    if (!col.is_object()) continue;
    for (const auto& [k, v] : col.items()) {
      if (std::find(keys.begin(), keys.end(), k) == keys.end()) keys.push_back(k);
    }
  }
  out += "<table><tr><th>view</th>";
  for (const auto& k : keys) {
    std::string label = k.ends_with("_ns") ? k.substr(0, k.size() - 3) : k;
    if (label == "p100") label = "max";
    out += "<th>" + xml_escape(label) + "</th>";
  }
  out += "</tr>";
  for (const auto& [name, col] : columns.items()) {
    out += "<tr><td>" + xml_escape(name) + "</td>";
    for (const auto& k : keys) {
      const double v = html_number(&col, k, std::nan(""));
      out += "<td>" +
             (std::isnan(v)        ? std::string("-")
              : k.ends_with("_ns") ? html_duration(v)
                                   : html_count(v)) +
             "</td>";
    }
    out += "</tr>";
  }
  out += "</table>\n";
}

}  // namespace

void html_page_start(std::string& out, std::string_view title) {
  fmt::format_to(std::back_inserter(out),
                 "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><meta "
                 "name=\"viewport\" content=\"width=device-width, initial-scale=1\"><title>{0}"
                 "</title><style>{1}</style></head><body>\n<h1>{0}</h1>\n",
                 xml_escape(title), html_css);
}

const html_json* html_find(const html_json& j, std::string_view key) {
  if (!j.is_object()) return nullptr;
  const auto it = j.find(key);
  return it == j.end() || it->is_null() ? nullptr : &*it;
}

const html_json* html_find(const html_json* j, std::string_view key) {
  return j ? html_find(*j, key) : nullptr;
}

double html_number(const html_json* j, std::string_view key, double fallback) {
  const html_json* v = html_find(j, key);
  return v && v->is_number() ? v->get<double>() : fallback;
}

std::string html_string(const html_json* j, std::string_view key) {
  const html_json* v = html_find(j, key);
  return v && v->is_string() ? v->get<std::string>() : std::string();
}

std::string html_duration(double ns) {
  std::string text = analysis::duration_text(ns);
  if (text.ends_with("us")) text.replace(text.size() - 2, 2, "µs");
  return text;
}

std::string html_count(double n) {
  if (!std::isfinite(n)) return "-";
  if (n != std::floor(n) || std::fabs(n) >= 1e15) return analysis::number_text(n);
  std::string digits = fmt::format("{:.0f}", std::fabs(n));
  for (auto i = static_cast<std::ptrdiff_t>(digits.size()) - 3; i > 0; i -= 3) {
    digits.insert(static_cast<std::size_t>(i), ",");
  }
  return (n < 0 ? "-" : "") + digits;
}

std::string html_utc(double unix_ns) {
  if (!(unix_ns > 0) || unix_ns >= 0x1p63) return "-";  // past 2262 is not a time of a run
  const auto ns = static_cast<long long>(unix_ns);
  const std::time_t s = ns / 1'000'000'000;
  std::tm tm{};
  gmtime_r(&s, &tm);
  return fmt::format("{:04}-{:02}-{:02} {:02}:{:02}:{:02}.{:03} UTC", tm.tm_year + 1900,
                     tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
                     ns % 1'000'000'000 / 1'000'000);
}

std::optional<hdr::histogram> html_histogram(const html_json* text) {
  if (!text || !text->is_string()) return std::nullopt;
  hdr::decode_result r = hdr::decode_compressed_base64(text->get<std::string>());
  if (!r) return std::nullopt;
  return std::move(r.value);
}

void html_chart(std::string& out, const chart_spec& chart, std::string_view caption) {
  out += "<figure>" + render_svg(chart);
  if (!caption.empty()) out += "<figcaption>" + xml_escape(caption) + "</figcaption>";
  out += "</figure>\n";
}

void html_note(std::string& out, std::string_view text) {
  out += "<p class=\"note\">" + xml_escape(text) + "</p>\n";
}

std::string html_view_cell(const html_json* view, std::string_view percentile_key) {
  const html_json* v = html_find(html_find(view, "percentiles_ns"), percentile_key);
  if (!v || !v->is_number() || html_number(view, "count") <= 0) return "-";
  bool bound = false;
  if (const html_json* b = html_find(view, "lower_bound_percentiles"); b && b->is_array()) {
    for (const auto& k : *b)
      bound = bound || (k.is_string() && k.get<std::string>() == percentile_key);
  }
  return (bound ? "&gt;=" : "") + html_duration(v->get<double>());
}

double html_row_interval_s(const html_json& report) {
  const double ns = html_number(html_find(report, "series"), "interval_ns", 1e9);
  return ns > 0 ? ns / 1e9 : 1;
}

double html_row_middle_s(const html_json& row, double interval_s) {
  return html_number(&row, "offset_s", html_number(&row, "second")) + interval_s / 2;
}

double html_rows_end_s(const html_json& rows, double interval_s) {
  double end = 0;
  for (const auto& row : rows)
    end = std::max(end, html_row_middle_s(row, interval_s) + interval_s / 2);
  return end;
}

std::vector<chart_point> spectrum_points(const hdr::histogram& h) {
  std::vector<chart_point> points;
  for (const auto& step : hdr::percentile_steps(h, 5)) {
    points.push_back(
        {step.percentile_level_iterated_to, static_cast<double>(step.value_iterated_to)});
  }
  return points;
}

void write_html(std::ostream& out, const nlohmann::ordered_json& report) {
  if (!html_find(report, "schema_version") || !html_find(report, "outcomes")) {
    throw std::runtime_error("not a punctual run report: it has no schema_version or outcomes");
  }
  std::string page;
  page.reserve(256 * 1024);
  html_page_start(page, "punctual run report: " + html_string(&report, "target"));
  // What was run and what came of it first, then the pictures; the tables behind the verdict
  // last, for whoever needs to check it.
  html_workload(page, report);
  html_verdict(page, report);
  html_outcomes(page, report);
  html_spectrum_section(page, report);
  html_over_time_sections(page, report);
  html_named_sections(page, report);
  html_retry_section(page, report);
  html_validity(page, report);
  html_generator_section(page, report);
  html_slos(page, report);
  html_confidence(page, report);
  html_latency_table(page, report);
  page += "</body></html>\n";
  out << page;
}

void write_demo_html(std::ostream& out, const nlohmann::ordered_json& demo) {
  const html_json* columns = html_find(demo, "columns");
  if (!columns || !columns->is_object()) {
    throw std::runtime_error("not a punctual demo document: it has no columns");
  }
  std::string page;
  html_page_start(page, "punctual demo: one stalling server, four ways to measure it");
  const html_json* server = html_find(demo, "server");
  fmt::format_to(std::back_inserter(page),
                 "<p>server {} stalling {} (stall length / period), punctual {}</p>\n",
                 xml_escape(html_string(server, "url")), xml_escape(html_string(server, "stall")),
                 xml_escape(html_string(html_find(demo, "punctual"), "version")));
  if (const html_json* ok = html_find(demo, "open_within_tolerance"); ok && ok->is_boolean()) {
    page += *ok ? "<p class=\"verdict\">&#10003; the open model agrees with the truth</p>\n"
                : "<p class=\"alarm\">the open model is NOT within tolerance of the truth</p>\n";
  }
  html_demo_table(page, *columns);
  html_demo_spectrum(page, demo);
  if (const html_json* lines = html_find(demo, "verdict"); lines && lines->is_array()) {
    page += "<ul>";
    for (const auto& l : *lines) {
      if (l.is_string()) page += "<li>" + xml_escape(l.get<std::string>()) + "</li>";
    }
    page += "</ul>\n";
  }
  page += "</body></html>\n";
  out << page;
}

}  // namespace punctual::report
