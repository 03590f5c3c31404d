// The comparison as one self-contained HTML page in the run report's style: the verdict, both
// spectra overlaid, the candidate's change with its interval against the percentile, and the
// table of rows.
#include <fmt/format.h>

#include <iterator>

#include "report/compare_report.hpp"
#include "report/html_sections.hpp"

namespace punctual::report {
namespace {

using json = nlohmann::ordered_json;

std::vector<chart_point> points_of(const json& spectrum) {
  std::vector<chart_point> out;
  for (const auto& p : spectrum) out.push_back({p[0].get<double>(), p[1].get<double>()});
  return out;
}

// The whole run's percentile rows: where the candidate may lie by the interval of its change,
// drawn from the baseline (base + low end, base + high end) beside the regression threshold.
void change_chart(std::string& out, const json& doc) {
  chart_spec c =
      html_spectrum_spec("compare-change", "The candidate's change, with its 95% interval");
  chart_series base{"base", html_blue, {}, ""};
  chart_series cand{"candidate", html_orange, {}, ""};
  chart_series lo{"base + low end of the change", html_grey, {}, "4 3"};
  chart_series hi{"base + high end of the change", html_grey, {}, "4 3"};
  chart_series limit{"base + threshold", html_red, {}, "2 2"};
  for (const auto& r : doc["rows"]) {
    const std::string metric = r["metric"];
    if (!r["name"].get<std::string>().empty() || metric == "errors") continue;
    const double p = std::stod(metric.substr(1));
    const double b = r["base"].get<double>();
    base.points.push_back({p, b});
    cand.points.push_back({p, r["candidate"].get<double>()});
    limit.points.push_back({p, b + r["threshold_value"].get<double>()});
    if (r["ci95"].is_array()) {
      lo.points.push_back({p, b + r["ci95"][0].get<double>()});
      hi.points.push_back({p, b + r["ci95"][1].get<double>()});
    }
  }
  c.series = {base, cand, lo, hi, limit};
  html_chart(
      out, c,
      "At each compared percentile: the baseline, the candidate, the baseline plus either end "
      "of the 95% interval of the change, and the baseline plus the regression threshold. A "
      "regression is a change whose whole interval lies above the threshold (after Holm's "
      "correction over every row).");
}

void rows_table(std::string& out, const json& doc) {
  out +=
      "<table><tr><th>name</th><th>figure</th><th>base</th><th>candidate</th><th>change</th>"
      "<th>95% interval of the change</th><th>threshold</th><th>verdict</th></tr>\n";
  for (const auto& r : doc["rows"]) {
    const bool share = r["unit"] == "share";
    const auto v = [&](double x) {
      return share ? fmt::format("{:.3g}%", x * 100) : html_duration(x);
    };
    const auto sv = [&](double x) { return (x < 0 ? "&minus;" : "+") + v(std::fabs(x)); };
    const std::string verdict = r["verdict"];
    const char* cls = verdict == "regression"     ? "fail"
                      : verdict == "inconclusive" ? "warn"
                                                  : "pass";
    const std::string name = r["name"];
    fmt::format_to(
        std::back_inserter(out),
        "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>+{}</td>"
        "<td class=\"{}\">{}</td></tr>\n",
        xml_escape(name.empty() ? "(all)" : name), xml_escape(r["metric"].get<std::string>()),
        v(r["base"].get<double>()), v(r["candidate"].get<double>()),
        sv(r["difference"].get<double>()),
        r["ci95"].is_array()
            ? sv(r["ci95"][0].get<double>()) + " to " + sv(r["ci95"][1].get<double>())
            : "-",
        v(r["threshold_value"].get<double>()), cls, xml_escape(verdict));
  }
  out += "</table>\n";
}

}  // namespace

std::string compare_html(const nlohmann::ordered_json& doc) {
  std::string out;
  html_page_start(out, "punctual compare: " + doc["candidate"]["file"].get<std::string>() +
                           " against " + doc["base"]["file"].get<std::string>());
  const std::string result = doc["verdict"]["result"];
  fmt::format_to(std::back_inserter(out), "<div class=\"verdict{}\" id=\"verdict\">{}</div>\n",
                 result == "no regression" ? "" : " bad",
                 xml_escape(doc["verdict"]["line"].get<std::string>()));
  const json& m = doc["method"];
  html_note(out, fmt::format("{}, {}; {:.0f}% intervals; Holm's correction over {} rows.",
                             m["name"].get<std::string>(), m["view"].get<std::string>(),
                             m["confidence"].get<double>() * 100, doc["rows"].size()));
  out += "<h2>Spectra</h2>\n";
  chart_spec spectra = html_spectrum_spec("compare-spectra", "Both runs' spectra");
  spectra.series = {{"base", html_blue, points_of(doc["spectra"]["base"]), ""},
                    {"candidate", html_orange, points_of(doc["spectra"]["candidate"]), ""}};
  html_chart(out, spectra,
             "The " + m["view"].get<std::string>() + " of each run, over its whole window.");
  out += "<h2>Change</h2>\n";
  change_chart(out, doc);
  out += "<h2>Rows</h2>\n";
  rows_table(out, doc);
  out += "</body></html>\n";
  return out;
}

}  // namespace punctual::report
