// `punctual compare BASE.json CAND.json`: the candidate run against the baseline, a verdict
// with confidence (report/compare_report.hpp). Exit codes: 0 nothing regressed, 3 a regression
// (or an inconclusive row under --inconclusive fail), 4 a run was invalid, 2 a mismatch or bad
// input, 1 a file that cannot be read.
#pragma once

#include <string>

namespace punctual::cli {

struct compare_command_options {
  std::string base;
  std::string candidate;
  std::string view = "response_time";
  std::string max_regression;
  std::string inconclusive = "warn";  // or fail
  bool allow_different = false;
  std::string json_out;
  std::string markdown_out;
  std::string html_out;
  std::string junit_out;
};

int compare_command(const compare_command_options& o);

}  // namespace punctual::cli
