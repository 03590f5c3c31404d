#include "cli/renderings.hpp"

#include <sstream>

#include "cli/atomic_file.hpp"
#include "report/html_report.hpp"
#include "report/junit.hpp"
#include "report/timeline_csv.hpp"

namespace punctual::cli {

void write_renderings(const nlohmann::ordered_json& report, const std::string& html_path,
                      const std::string& timeline_path) {
  if (!html_path.empty()) {
    std::ostringstream html;
    report::write_html(html, report);
    write_file_atomically(html_path, html.str());
  }
  if (!timeline_path.empty()) {
    std::ostringstream csv;
    report::write_timeline_csv(csv, report);
    write_file_atomically(timeline_path, csv.str());
  }
}

void write_junit(const nlohmann::ordered_json& report, const std::string& suite,
                 const std::string& junit_path) {
  if (junit_path.empty()) return;
  write_file_atomically(junit_path, report::junit_xml(suite, report::run_junit_cases(report)));
}

}  // namespace punctual::cli
