#include "cli/compare_command.hpp"

#include <unistd.h>

#include <fstream>
#include <iostream>
#include <sstream>

#include "cli/atomic_file.hpp"
#include "cli/command.hpp"
#include "cli/merge_command.hpp"
#include "report/compare_report.hpp"
#include "report/junit.hpp"

namespace punctual::cli {
namespace {

// A file that cannot be read is exit 1; one that reads but is not a report is bad input (2).
report::compare_input read_input(const std::string& path) {
  report::compare_input in;
  in.name = path;
  std::ifstream file(path, std::ios::binary);
  if (!file) throw run_error(path + ": cannot be read");
  try {
    in.doc = nlohmann::ordered_json::parse(file);
  } catch (const nlohmann::json::exception& e) {
    throw usage_error(path + ": not valid JSON (" + std::string(e.what()) + ")");
  }
  if (!in.doc.is_object()) throw usage_error(path + ": not a run report");
  const std::string log = log_beside(path);
  if (access(log.c_str(), R_OK) != 0)
    throw run_error(path + ": its interval log " + log + " cannot be read (run it with --hlog " +
                    log + ")");
  const auto on_interval = [&](const hdr::interval_log& header, hdr::log_interval&& iv) {
    in.add_interval(header, iv);
  };
  const auto read = hdr::read_interval_log_file(log, on_interval);
  if (!read) throw usage_error(log + ": " + read.error);
  return in;
}

}  // namespace

int compare_command(const compare_command_options& o) {
  if (o.inconclusive != "warn" && o.inconclusive != "fail")
    throw usage_error("--inconclusive: expected warn or fail, not '" + o.inconclusive + "'");
  report::compare_settings s;
  s.view = o.view;
  s.allow_different = o.allow_different;
  s.inconclusive_fails = o.inconclusive == "fail";
  s.command_line = command_line();
  report::comparison result;
  report::compare_input base;
  report::compare_input candidate;
  try {
    if (!o.max_regression.empty()) s.thresholds = report::parse_max_regression(o.max_regression);
    base = read_input(o.base);
    candidate = read_input(o.candidate);
    result = report::compare_runs(base, candidate, s);
  } catch (const report::compare_refused& e) {
    throw usage_error(e.what());
  } catch (const nlohmann::json::exception& e) {
    throw usage_error(std::string("a report lacks what compare needs: ") + e.what());
  }
  std::ostream& text = o.json_out == "-" ? std::cerr : std::cout;
  report::write_compare_text(text, result.doc);
  if (o.json_out == "-") {
    std::cout << result.doc.dump(2) << "\n";
  } else if (!o.json_out.empty()) {
    write_file_atomically(o.json_out, result.doc.dump(2) + "\n");
  }
  if (!o.markdown_out.empty())
    write_file_atomically(o.markdown_out, report::compare_markdown(result.doc));
  if (!o.html_out.empty()) write_file_atomically(o.html_out, report::compare_html(result.doc));
  if (!o.junit_out.empty()) {
    write_file_atomically(o.junit_out, report::junit_xml("punctual compare",
                                                         report::compare_junit_cases(
                                                             result.doc, base.doc, candidate.doc)));
  }
  return result.exit_code;
}

}  // namespace punctual::cli
