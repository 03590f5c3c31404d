// The comparison as a text table (stdout) and as a pull-request comment in Markdown, both from
// its JSON document.
#include <fmt/format.h>

#include <cmath>
#include <ostream>
#include <sstream>

#include "analysis/text.hpp"
#include "report/compare_report.hpp"

namespace punctual::report {
namespace {

using json = nlohmann::ordered_json;

bool is_share(const json& r) {
  return r["unit"] == "share";
}

std::string figure(const json& r, double v) {
  if (is_share(r)) return analysis::number_text(v * 100) + "%";
  return analysis::duration_text(v);
}

std::string signed_figure(const json& r, double v) {
  const std::string magnitude = is_share(r) ? analysis::number_text(std::fabs(v) * 100) + "pp"
                                            : analysis::duration_text(std::fabs(v));
  return (v < 0 ? "-" : "+") + magnitude;
}

std::string change(const json& r) {
  std::string out = signed_figure(r, r["difference"].get<double>());
  if (!is_share(r) && r["relative_difference"].is_number())
    out += fmt::format(" ({:+.1f}%)", r["relative_difference"].get<double>() * 100);
  return out;
}

std::string interval(const json& r) {
  if (!r["ci95"].is_array()) return "-";
  return "[" + signed_figure(r, r["ci95"][0].get<double>()) + ", " +
         signed_figure(r, r["ci95"][1].get<double>()) + "]";
}

std::string threshold(const json& r) {
  const json& t = r["threshold"];
  if (t.contains("relative"))
    return fmt::format("+{}%", analysis::number_text(t["relative"].get<double>() * 100));
  if (t.contains("absolute_share"))
    return "+" + analysis::number_text(t["absolute_share"].get<double>() * 100) + "pp";
  return "+" + analysis::duration_text(t["absolute_ns"].get<double>());
}

std::string name_of(const json& r) {
  const std::string n = r["name"];
  return n.empty() ? "(all)" : n;
}

std::string figure_label(const json& r) {
  return r["metric"].get<std::string>() + (r["lower_bound"].get<bool>() ? " (>=)" : "");
}

struct table_row {
  std::string cells[8];
};

std::vector<table_row> table_of(const json& doc) {
  std::vector<table_row> rows;
  rows.push_back(
      {{"name", "figure", "base", "candidate", "change", "95% interval", "threshold", "verdict"}});
  for (const auto& r : doc["rows"]) {
    rows.push_back({{name_of(r), figure_label(r), figure(r, r["base"].get<double>()),
                     figure(r, r["candidate"].get<double>()), change(r), interval(r), threshold(r),
                     r["verdict"].get<std::string>()}});
  }
  return rows;
}

void write_header(std::ostream& out, const json& doc) {
  const json& m = doc["method"];
  out << fmt::format("compare: {} (base) -> {} (candidate), {}\n",
                     doc["base"]["file"].get<std::string>(),
                     doc["candidate"]["file"].get<std::string>(), m["view"].get<std::string>());
  out << fmt::format("method: {}, {:.0f}% intervals, Holm over {} rows (family-wise {:.0f}%)\n",
                     m["name"].get<std::string>(), m["confidence"].get<double>() * 100,
                     doc["rows"].size(), m["family_wise_alpha"].get<double>() * 100);
  const json& w = doc["workload"];
  std::string varied;
  for (const auto& v : w["varied"])
    varied += fmt::format("{}{} {} vs {}", varied.empty() ? "" : ", ",
                          v["field"].get<std::string>(), v["base"].dump(), v["candidate"].dump());
  out << fmt::format("workload: {}{}\n",
                     w["same"].get<bool>() ? "the same" : "DIFFERENT (--allow-different)",
                     varied.empty() ? "" : "; differed: " + varied);
  for (const auto& d : w["differences"]) {
    out << fmt::format("  {}: {} vs {}\n", d["field"].get<std::string>(),
                       d["base"].get<std::string>(), d["candidate"].get<std::string>());
  }
  for (const char* side : {"base", "candidate"}) {
    const json& run = doc[side];
    if (run["valid"].get<bool>()) continue;
    out << fmt::format("{} run {} is INVALID:\n", side, run["file"].get<std::string>());
    for (const auto& reason : run["invalid_reasons"])
      out << "  " << reason.get<std::string>() << "\n";
  }
}

std::string verdict_mark(const json& doc) {
  const std::string result = doc["verdict"]["result"];
  if (result == "regression") return "❌";
  if (result == "invalid") return "⛔";
  if (result == "inconclusive") return "⚠️";
  return "✅";
}

std::string arrow(const json& r) {
  const double d = r["difference"].get<double>();
  if (d > 0) return "▲ ";
  if (d < 0) return "▼ ";
  return "";
}

// | and newlines would break a Markdown table cell.
std::string cell(std::string text) {
  std::string out;
  for (const char c : text) {
    if (c == '|') {
      out += "\\|";
    } else if (c == '\n') {
      out += ' ';
    } else {
      out += c;
    }
  }
  return out;
}

}  // namespace

void write_compare_text(std::ostream& out, const nlohmann::ordered_json& doc) {
  write_header(out, doc);
  const auto rows = table_of(doc);
  std::size_t width[8] = {};
  for (const auto& r : rows) {
    for (std::size_t c = 0; c < 8; ++c) width[c] = std::max(width[c], r.cells[c].size());
  }
  for (const auto& r : rows) {
    std::string line;
    for (std::size_t c = 0; c < 8; ++c)
      line += fmt::format("{:<{}}", r.cells[c], c == 7 ? 0 : width[c] + 2);
    out << line << "\n";
  }
  for (const auto& r : doc["rows"]) {
    const std::string note = r["note"];
    if (!note.empty())
      out << fmt::format("{} {}: {}\n", name_of(r), r["metric"].get<std::string>(), note);
  }
  const std::string result = doc["verdict"]["result"];
  if (result == "inconclusive") out << "warning: ";
  out << "verdict: " << doc["verdict"]["line"].get<std::string>() << "\n";
}

std::string compare_markdown(const nlohmann::ordered_json& doc) {
  std::ostringstream out;
  out << "### punctual compare " << verdict_mark(doc) << " "
      << doc["verdict"]["result"].get<std::string>() << "\n\n";
  const auto rows = table_of(doc);
  out << "| " << rows[0].cells[0];
  for (std::size_t c = 1; c < 8; ++c) out << " | " << rows[0].cells[c];
  out << " |\n|---|---|--:|--:|--:|---|--:|---|\n";
  std::size_t i = 0;
  for (const auto& r : doc["rows"]) {
    const auto& t = rows[++i].cells;
    const std::string verdict = r["verdict"] == "regression" ? "**regression**" : t[7];
    out << "| " << cell(t[0]) << " | " << cell(t[1]) << " | " << t[2] << " | " << t[3] << " | "
        << arrow(r) << t[4] << " | " << t[5] << " | " << t[6] << " | " << verdict << " |\n";
  }
  out << "\n**Verdict:** " << cell(doc["verdict"]["line"].get<std::string>()) << "\n\n";
  const json& m = doc["method"];
  out << fmt::format(
      "<sub>{} (base) vs {} (candidate), {}: {}, {:.0f}% intervals, Holm over {} rows. "
      "▲ higher in the candidate, ▼ lower.</sub>\n",
      cell(doc["base"]["file"].get<std::string>()),
      cell(doc["candidate"]["file"].get<std::string>()), m["view"].get<std::string>(),
      m["name"].get<std::string>(), m["confidence"].get<double>() * 100, doc["rows"].size());
  return out.str();
}

}  // namespace punctual::report
