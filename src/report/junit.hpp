// JUnit XML for CI gates (the format Ant's junit task writes and Jenkins, GitLab and GitHub
// reporters read; tests/data/junit has the schema it is validated against): a run's or a
// merge's SLOs and gating validity checks, and a comparison's rows, each one testcase.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "report/json.hpp"

namespace punctual::report {

struct junit_case {
  enum class state { passed, failed, skipped };
  std::string classname;
  std::string name;
  state result = state::passed;
  std::string message;  // failed: the one-line reason; skipped: why
  std::string detail;   // failed: the body under the message
};

// One <testsuites> with one <testsuite> named `suite`.
std::string junit_xml(std::string_view suite, const std::vector<junit_case>& cases);

// A run report's gates (run, merge): one case per --slo expression, one per gating validity check.
std::vector<junit_case> run_junit_cases(const nlohmann::ordered_json& run_report);

// A comparison's gates: each run's gating validity checks, and one case per row (a regression
// fails, an inconclusive row is skipped).
std::vector<junit_case> compare_junit_cases(const nlohmann::ordered_json& comparison,
                                            const nlohmann::ordered_json& base_report,
                                            const nlohmann::ordered_json& candidate_report);

}  // namespace punctual::report
