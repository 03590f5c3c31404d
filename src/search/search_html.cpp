// The knee on one page: the SLO percentiles (point and 95% interval) and the completed rate
// against the offered rate, the thresholds as lines, then the steps. Drawn from the JSON report
// only, so the page shows exactly what the JSON says.
#include <fmt/format.h>

#include <map>

#include "analysis/text.hpp"
#include "report/svg_chart.hpp"
#include "search/search_report.hpp"

namespace punctual::search {

namespace {

using json = nlohmann::ordered_json;
using report::chart_point;
using report::chart_series;
using report::xml_escape;

constexpr const char* css =
    "body{font-family:system-ui,sans-serif;margin:1.5em;color:#222}table{border-collapse:"
    "collapse;font-size:.9em}td,th{padding:.2em .6em;border-bottom:1px solid #eee;text-align:"
    "right}th{background:#f6f6f6}td:nth-child(2),th:nth-child(2){text-align:left}.answer{"
    "padding:.5em .8em;border-left:5px solid #1e7b34;background:#eef7f0;margin:.6em 0}"
    "svg.chart{width:100%;max-width:1000px;height:auto;display:block}figure{margin:.6em 0 1em}"
    "figcaption{color:#555;font-size:.9em;max-width:1000px}";
constexpr const char* colours[] = {"#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#8c564b"};

// One step per rate, in rate order: the last run at each rate, the one the search counted (a
// re-run replaces its first run).
std::vector<const json*> steps_by_rate(const json& search) {
  std::map<double, const json*> last;
  for (const auto& s : search["steps"]) last[s["rate_per_s"].get<double>()] = &s;
  std::vector<const json*> steps;
  for (const auto& [rate, step] : last) steps.push_back(step);
  return steps;
}

std::string latency_chart(const json& search) {
  report::chart_spec chart;
  chart.id = "knee-latency";
  chart.title = "SLO percentiles against the offered rate (95% interval dashed)";
  chart.x_title = "offered rate (req/s)";
  chart.y_title = "response time";
  chart.y_axis = report::y_axis_kind::latency;
  std::map<std::string, std::size_t> index;
  const auto steps = steps_by_rate(search);
  for (const json* step : steps) {
    for (const auto& slo : (*step)["slos"]) {
      if (slo["unit"] != "ns") continue;
      const std::string text = slo["text"].get<std::string>();
      auto [it, added] = index.emplace(text, chart.series.size());
      if (added) {
        const std::string colour = colours[(it->second / 3) % std::size(colours)];
        const std::string name = text.substr(0, text.find_first_of("<>="));
        chart.series.push_back({name, colour, {}, ""});
        chart.series.push_back({name + " low", colour, {}, "4 3"});
        chart.series.push_back({name + " high", colour, {}, "4 3"});
        chart.thresholds.push_back({text, slo["threshold"].get<double>(), colour});
      }
      const double x = (*step)["rate_per_s"].get<double>();
      chart.series[it->second].points.push_back({x, slo["point"].get<double>()});
      chart.series[it->second + 1].points.push_back({x, slo["lo"].get<double>()});
      chart.series[it->second + 2].points.push_back({x, slo["bound"].get<double>()});
    }
  }
  return report::render_svg(chart);
}

std::string rate_chart(const json& search) {
  report::chart_spec chart;
  chart.id = "knee-rate";
  chart.title = "Completed and sent rate against the offered rate";
  chart.x_title = "offered rate (req/s)";
  chart.y_title = "req/s";
  chart_series offered{"offered", "#999999", {}, "2 4"};
  chart_series sent{"sent", "#2ca02c", {}, ""};
  chart_series completed{"completed", "#1f77b4", {}, ""};
  for (const json* step : steps_by_rate(search)) {
    const double x = (*step)["rate_per_s"].get<double>();
    offered.points.push_back({x, x});
    sent.points.push_back({x, (*step)["rates_per_s"]["sent"].get<double>()});
    completed.points.push_back({x, (*step)["rates_per_s"]["completed"].get<double>()});
  }
  chart.series = {offered, sent, completed};
  return report::render_svg(chart);
}

std::string steps_table(const json& search) {
  std::string out =
      "<table id=\"steps\"><tr><th>step</th><th>why</th><th>offered/s</th><th>sent/s</th>"
      "<th>completed/s</th><th>connections</th><th>valid</th><th>errors</th><th>verdict</th>"
      "<th>cooldown</th></tr>\n";
  for (const auto& s : search["steps"]) {
    fmt::format_to(std::back_inserter(out),
                   "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td>"
                   "<td>{}</td><td>{}%</td><td>{}</td><td>{}</td></tr>\n",
                   s["index"].get<int>(), xml_escape(s["why"].get<std::string>()),
                   analysis::number_text(s["rate_per_s"].get<double>()),
                   analysis::number_text(s["rates_per_s"]["sent"].get<double>()),
                   analysis::number_text(s["rates_per_s"]["completed"].get<double>()),
                   s["connections"].get<int>(), s["valid"].get<bool>() ? "yes" : "no",
                   analysis::number_text(100 * s["error_share"].get<double>()),
                   xml_escape(s["counted"].get<std::string>()),
                   analysis::duration_text(s["cooldown_ns"].get<double>()));
  }
  return out + "</table>\n";
}

}  // namespace

std::string html_page(const nlohmann::ordered_json& doc) {
  const json& search = doc["search"];
  std::string out = fmt::format(
      "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>punctual search"
      "</title><style>{}</style></head><body>\n<h1>punctual search: {}</h1>\n"
      "<p class=\"answer\" id=\"answer\">{}</p>\n",
      css, xml_escape(doc["target"].get<std::string>()),
      xml_escape(search["answer"].get<std::string>()));
  out += "<figure>" + latency_chart(search) +
         "<figcaption>Each SLO's percentile of response time at every step, with its 95% "
         "confidence interval; the horizontal lines are the thresholds.</figcaption></figure>\n";
  out += "<figure>" + rate_chart(search) +
         "<figcaption>Where completed falls below offered, the server no longer keeps "
         "up.</figcaption></figure>\n";
  out += steps_table(search);
  return out + "</body></html>\n";
}

}  // namespace punctual::search
