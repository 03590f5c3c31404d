// A search's JUnit cases from its JSON: the answer's case fails exactly when the search exits
// non-zero, and the cases after it are the deciding step's. The simulation checks them on real
// searches (tests/sim/sim_search_test.cpp); here the limits no simulated search reaches cheaply.
#include <gtest/gtest.h>

#include "report/junit.hpp"

namespace punctual::report {
namespace {

using json = nlohmann::ordered_json;
using state = junit_case::state;

json step(int index, double rate, const std::string& counted, bool send_lag_passes) {
  json check{{"name", "send_lag_p99"}, {"level", "gating"},    {"pass", send_lag_passes},
             {"figure", 4e6},          {"threshold", 1e6},     {"relation", "<="},
             {"unit", "ns"},           {"note", "fell behind"}};
  return {{"index", index},
          {"rate_per_s", rate},
          {"counted", counted},
          {"report", {{"validity", {{"checks", json::array({check})}}}}}};
}

// 400 req/s passed, then 800 req/s met the generator's limit: exit 4 although a rate passed.
json search_doc(const std::string& limit) {
  return {{"search",
           {{"sustained_rate_per_s", 400.0},
            {"limit", limit},
            {"stopped_by", "x"},
            {"answer", "the answer line"},
            {"steps",
             json::array({step(1, 400, "pass", true), step(2, 800, "generator limit", false)})}}}};
}

TEST(report_junit, a_generator_limit_after_a_sustained_rate_fails_on_the_last_step) {
  const auto cases = search_junit_cases(search_doc("generator"));
  ASSERT_EQ(cases.size(), 2u);
  EXPECT_EQ(cases[0].result, state::failed);
  EXPECT_EQ(cases[0].message, "the answer line");
  EXPECT_EQ(cases[1].classname, "step2.validity");
  EXPECT_EQ(cases[1].result, state::failed);
}

TEST(report_junit, a_sustained_rate_passes_on_its_own_step) {
  for (const char* limit : {"server", "to", "time", "steps"}) {
    const auto cases = search_junit_cases(search_doc(limit));
    ASSERT_EQ(cases.size(), 2u) << limit;
    EXPECT_EQ(cases[0].result, state::passed) << limit;
    EXPECT_EQ(cases[1].classname, "step1.validity") << limit;
    EXPECT_EQ(cases[1].result, state::passed) << limit;
  }
  for (const char* limit : {"connections", "interrupted"})
    EXPECT_EQ(search_junit_cases(search_doc(limit))[0].result, state::failed) << limit;
}

}  // namespace
}  // namespace punctual::report
