#include "report/junit.hpp"

#include <fmt/format.h>

#include <cctype>
#include <cmath>

#include "analysis/text.hpp"
#include "report/svg_chart.hpp"

namespace punctual::report {
namespace {

using json = nlohmann::ordered_json;

// Text for an XML attribute or element: escaped as the HTML report escapes, newlines and tabs
// kept as character references (an attribute would fold them into spaces), and the control
// characters XML 1.0 cannot carry at all dropped.
std::string xml_text(std::string_view text) {
  std::string out;
  for (const char c : xml_escape(text)) {
    if (c == '\n') {
      out += "&#10;";
    } else if (c == '\t') {
      out += "&#9;";
    } else if (static_cast<unsigned char>(c) >= 0x20) {
      out += c;
    }
  }
  return out;
}

// "p99.9<=100ms" -> "99.9"; "" when the expression is not a percentile's.
std::string percentile_key(const std::string& expression) {
  const auto colon = expression.find(':');
  std::string_view e = expression;
  if (colon != std::string::npos) return {};  // a name's SLO: no interval in the run's views
  if (e.empty() || e.front() != 'p') return {};
  std::size_t end = 1;
  while (end < e.size() && (std::isdigit(static_cast<unsigned char>(e[end])) || e[end] == '.'))
    ++end;
  return std::string(e.substr(1, end - 1));
}

junit_case slo_case(const json& result, const json& run_report, const std::string& basis) {
  junit_case c;
  c.classname = "slo";
  c.name = result.value("expression", "");
  if (result.value("pass", false)) return c;
  c.result = junit_case::state::failed;
  const std::string key = percentile_key(c.name);
  const double figure = result.value("figure", 0.0);
  const double threshold = result.value("threshold", 0.0);
  std::string measured =
      key.empty() ? analysis::number_text(figure) : analysis::duration_text(figure);
  std::string limit =
      key.empty() ? analysis::number_text(threshold) : analysis::duration_text(threshold);
  std::string ci;
  if (!key.empty() && run_report["latency"].contains(basis)) {
    const json& cis = run_report["latency"][basis].value("percentiles_ci_ns", json::object());
    if (cis.contains(key)) {
      ci = fmt::format(" (95% interval {} to {})",
                       analysis::duration_text(cis[key][0].get<double>()),
                       analysis::duration_text(cis[key][1].get<double>()));
    }
  }
  c.message = fmt::format("{}: measured {}{}, threshold {} ({} bound)", c.name, measured, ci, limit,
                          result.value("bound", "point"));
  c.detail = c.message;
  return c;
}

}  // namespace

std::string junit_xml(std::string_view suite, const std::vector<junit_case>& cases) {
  int failures = 0;
  int skipped = 0;
  for (const auto& c : cases) {
    failures += c.result == junit_case::state::failed;
    skipped += c.result == junit_case::state::skipped;
  }
  std::string out = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  out += fmt::format("<testsuites name=\"punctual\" tests=\"{0}\" failures=\"{1}\" errors=\"0\">\n",
                     cases.size(), failures);
  out += fmt::format(
      "  <testsuite name=\"{}\" tests=\"{}\" failures=\"{}\" errors=\"0\" skipped=\"{}\" "
      "time=\"0\">\n",
      xml_text(suite), cases.size(), failures, skipped);
  for (const auto& c : cases) {
    out += fmt::format("    <testcase classname=\"{}\" name=\"{}\" time=\"0\"",
                       xml_text(c.classname), xml_text(c.name));
    if (c.result == junit_case::state::passed) {
      out += "/>\n";
      continue;
    }
    out += ">\n";
    if (c.result == junit_case::state::skipped) {
      out += fmt::format("      <skipped>{}</skipped>\n", xml_text(c.message));
    } else {
      out += fmt::format("      <failure message=\"{}\" type=\"{}\">{}</failure>\n",
                         xml_text(c.message), xml_text(c.classname), xml_text(c.detail));
    }
    out += "    </testcase>\n";
  }
  out += "  </testsuite>\n</testsuites>\n";
  return out;
}

std::vector<junit_case> run_junit_cases(const json& run_report) {
  std::vector<junit_case> cases;
  const json& slo = run_report.value("slo", json());
  if (slo.is_object()) {
    const std::string basis = slo.value("basis", "response_time");
    if (slo.value("refused", false)) {
      junit_case c{"slo",
                   "slo",
                   junit_case::state::failed,
                   "SLO verdict refused: " + slo.value("refusal", ""),
                   {}};
      c.detail = c.message;
      cases.push_back(c);
    }
    for (const auto& r : slo.value("results", json::array()))
      cases.push_back(slo_case(r, run_report, basis));
  }
  for (const auto& check : run_report["validity"]["checks"]) {
    if (check.value("level", "") != "gating") continue;
    junit_case c;
    c.classname = "validity";
    c.name = check.value("name", "");
    if (!check.value("pass", true)) {
      c.result = junit_case::state::failed;
      const std::string unit = check.value("unit", "");
      const auto text = [&](double v) {
        return unit == "ns" ? analysis::duration_text(v) : analysis::number_text(v) + " " + unit;
      };
      c.message = fmt::format("{}: measured {}, required {} {} (gating: the run is INVALID)",
                              c.name, text(check.value("figure", 0.0)), check.value("relation", ""),
                              text(check.value("threshold", 0.0)));
      c.detail = check.value("note", "");
    }
    cases.push_back(c);
  }
  return cases;
}

std::vector<junit_case> search_junit_cases(const json& search_report) {
  const json& search = search_report.at("search");
  const std::string limit = search.value("limit", "");
  const bool sustained = search["sustained_rate_per_s"].is_number();
  junit_case answer{"search", "sustained rate", junit_case::state::passed, {}, {}};
  if (!sustained || limit == "generator" || limit == "connections" || limit == "interrupted") {
    answer.result = junit_case::state::failed;
    answer.message = search.value("answer", "");
    answer.detail = "limit: " + limit + "; stopped by " + search.value("stopped_by", "");
  }
  std::vector<junit_case> cases{answer};
  const json& steps = search["steps"];
  if (steps.empty()) return cases;
  const json* deciding = &steps.back();
  if (answer.result == junit_case::state::passed) {
    const double rate = search["sustained_rate_per_s"].get<double>();
    for (const auto& step : steps) {
      if (step["counted"] == "pass" && step["rate_per_s"].get<double>() == rate) deciding = &step;
    }
  }
  const std::string prefix = "step" + std::to_string((*deciding)["index"].get<int>()) + ".";
  for (auto c : run_junit_cases((*deciding)["report"])) {
    c.classname = prefix + c.classname;
    cases.push_back(std::move(c));
  }
  return cases;
}

std::vector<junit_case> compare_junit_cases(const json& comparison, const json& base_report,
                                            const json& candidate_report) {
  std::vector<junit_case> cases;
  for (const auto& [side, report] :
       {std::pair{"base", &base_report}, std::pair{"candidate", &candidate_report}}) {
    for (auto c : run_junit_cases(*report)) {
      if (c.classname != "validity") continue;
      c.classname = std::string(side) + ".validity";
      cases.push_back(c);
    }
  }
  for (const auto& r : comparison["rows"]) {
    junit_case c;
    const std::string name = r["name"];
    c.classname = name.empty() ? "compare" : "compare." + name;
    c.name = r["metric"];
    const std::string verdict = r["verdict"];
    const bool share = r["unit"] == "share";
    const auto text = [&](double v) {
      return share ? analysis::number_text(v * 100) + "%" : analysis::duration_text(v);
    };
    const auto signed_text = [&](double v) { return (v < 0 ? "-" : "+") + text(std::fabs(v)); };
    std::string interval = "no interval";
    if (r["ci95"].is_array())
      interval = "95% interval " + signed_text(r["ci95"][0].get<double>()) + " to " +
                 signed_text(r["ci95"][1].get<double>());
    const std::string summary =
        fmt::format("{} {}: base {}, candidate {}, change {} ({}), threshold {}", c.classname,
                    c.name, text(r["base"].get<double>()), text(r["candidate"].get<double>()),
                    signed_text(r["difference"].get<double>()), interval,
                    "+" + text(r["threshold_value"].get<double>()));
    if (verdict == "regression") {
      c.result = junit_case::state::failed;
      c.message = "regression: " + summary;
      c.detail = fmt::format("Holm-adjusted p = {:.3g}", r["p_regression_holm"].get<double>());
    } else if (verdict == "inconclusive" || verdict == "not judged") {
      c.result = junit_case::state::skipped;
      c.message = verdict + ": " + summary +
                  (r["note"].get<std::string>().empty() ? "" : "; " + r["note"].get<std::string>());
    }
    cases.push_back(c);
  }
  return cases;
}

}  // namespace punctual::report
