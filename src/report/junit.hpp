// JUnit XML for CI gates (the format Ant's junit task writes and Jenkins, GitLab and GitHub
// reporters read; tests/data/junit has the schema it is validated against): a run's or a
// merge's SLOs and gating validity checks, a search's answer, and a comparison's rows, each one
// testcase.
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

// A search's gates (the JSON of search/search_report.hpp): one case for its answer, failed
// exactly when the search exits non-zero (no rate sustained, the generator's or the connections'
// limit, an interruption), then the cases of the step that decided it (run_junit_cases of its
// run report, classname "stepN." before each): the last step that passed at the sustained rate,
// else the last step.
std::vector<junit_case> search_junit_cases(const nlohmann::ordered_json& search_report);

// A comparison's gates: each run's gating validity checks, and one case per row (a regression
// fails, an inconclusive row is skipped).
std::vector<junit_case> compare_junit_cases(const nlohmann::ordered_json& comparison,
                                            const nlohmann::ordered_json& base_report,
                                            const nlohmann::ordered_json& candidate_report);

}  // namespace punctual::report
