// `punctual report`: one stream of an HdrHistogram interval log, summarised; or a saved JSON run
// report rendered again (its text report with no option; --html, --timeline). The file's content
// says which it is.
#pragma once

#include <string>

namespace punctual::cli {

struct report_options {
  std::string file;
  std::string tag;
  std::string hgrm_out;
  std::string json_out;
  double unit_ratio = 1e6;
  std::string html_out;
  std::string timeline_out;
};

int report_command(const report_options& o);

// A JSON document starts with '{' (after any white space); an interval log never does. Throws
// usage_error when the file cannot be opened.
bool is_json_report(const std::string& path);

}  // namespace punctual::cli
