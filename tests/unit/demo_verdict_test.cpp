// The demo's verdict: the truth tests' tolerance band at its edges, and the sentences and
// pass/fail computed from synthetic tables. Expected bounds are worked out by hand from
// truth_lib.py's formula (0.99 * truth - 1 ms, 1.05 * truth + 5 ms).
#include "cli/demo_verdict.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include "test_numbers.hpp"

namespace {

using punctual::cli::demo_column;
using punctual::cli::demo_columns;
using punctual::cli::judge_demo;
using punctual::cli::within_truth_tolerance;

using punctual::test::ms;

bool has_line(const punctual::cli::demo_verdict& v, const std::string& line) {
  for (const auto& l : v.lines) {
    if (l == line) return true;
  }
  return false;
}

TEST(demo_verdict, band_around_a_100_ms_truth_is_98_to_110_ms) {
  const std::int64_t truth = 100 * ms;
  EXPECT_TRUE(within_truth_tolerance(truth, truth));
  EXPECT_TRUE(within_truth_tolerance(truth, 98 * ms));
  EXPECT_FALSE(within_truth_tolerance(truth, 98 * ms - 1));
  EXPECT_TRUE(within_truth_tolerance(truth, 110 * ms));
  EXPECT_FALSE(within_truth_tolerance(truth, 110 * ms + 1));
}

TEST(demo_verdict, a_1_ms_truth_uses_the_band_down_to_zero) {
  // 0.99 ms - 1 ms < 0, so any small value passes; the top is 1.05 ms + 5 ms.
  EXPECT_TRUE(within_truth_tolerance(ms, 0));
  EXPECT_TRUE(within_truth_tolerance(ms, 6'050'000));
  EXPECT_FALSE(within_truth_tolerance(ms, 6'050'001));
}

TEST(demo_verdict, a_sub_millisecond_truth_must_be_measured_sub_millisecond) {
  for (const std::int64_t truth : {std::int64_t{0}, std::int64_t{40'000}, ms - 1}) {
    EXPECT_TRUE(within_truth_tolerance(truth, 0)) << truth;
    EXPECT_TRUE(within_truth_tolerance(truth, ms - 1)) << truth;
    EXPECT_FALSE(within_truth_tolerance(truth, ms)) << truth;
  }
}

// The shape of the README's table: the closed run misses the stall, the other two follow it.
demo_columns readme_like() {
  return {{"closed (as wrk)", 140'000, 280'000},
          {"closed, reconstructed", 510'390'000, 951'060'000},
          {"open (punctual)", 505'940'000, 950'530'000},
          {"truth (from stall log)", 499'380'000, 949'490'000}};
}

TEST(demo_verdict, passes_and_states_each_columns_distance_from_the_truth) {
  const auto v = judge_demo(readme_like());
  EXPECT_TRUE(v.passed);
  EXPECT_EQ(v.failure, "");
  // (505.94 - 499.38) / 499.38 = 1.31%; (950.53 - 949.49) / 949.49 = 0.11%.
  EXPECT_TRUE(has_line(v,
                       "open (punctual): p90 505.94 ms vs truth 499.38 ms (+1.3%), "
                       "p99 950.53 ms vs truth 949.49 ms (+0.1%)"));
  // (510.39 - 499.38) / 499.38 = 2.20%; (951.06 - 949.49) / 949.49 = 0.17%.
  EXPECT_TRUE(has_line(v,
                       "closed, reconstructed: p90 510.39 ms vs truth 499.38 ms (+2.2%), "
                       "p99 951.06 ms vs truth 949.49 ms (+0.2%)"));
  EXPECT_TRUE(has_line(v,
                       "closed (as wrk): p90 0.14 ms vs truth 499.38 ms (-100.0%), "
                       "p99 0.28 ms vs truth 949.49 ms (-100.0%)"));
}

TEST(demo_verdict, the_closed_sentence_says_how_far_below_the_truth_it_is) {
  const auto v = judge_demo(readme_like());
  // 499.38 - 0.14 = 499.24; 949.49 - 0.28 = 949.21.
  ASSERT_GE(v.lines.size(), 4u);
  EXPECT_EQ(v.lines[3].rfind("The closed run is 499.24 ms below the truth at p90 and 949.21 ms "
                             "below at p99: it stopped sending",
                             0),
            0u)
      << v.lines[3];
  auto caught_up = readme_like();
  caught_up.closed = {"closed (as wrk)", 499'380'000, 949'490'000};
  const auto w = judge_demo(caught_up);
  EXPECT_EQ(w.lines[3].find("stopped sending"), std::string::npos) << w.lines[3];
  EXPECT_NE(w.lines[3].find("does not show coordinated omission"), std::string::npos) << w.lines[3];
}

TEST(demo_verdict, reconstruction_outside_the_band_is_said_so) {
  auto c = readme_like();
  c.reconstructed.p99_ns = 1'001'964'501;  // 1 ns above 1.05 * 949.49 + 5 = 1001.9645 ms
  const auto v = judge_demo(c);
  EXPECT_TRUE(v.passed);  // only the open column decides
  EXPECT_NE(v.lines[4].find("misses the truth at p99"), std::string::npos) << v.lines[4];
  EXPECT_NE(judge_demo(readme_like()).lines[4].find("lands within the tolerance"),
            std::string::npos);
}

TEST(demo_verdict, open_just_inside_both_edges_passes) {
  auto c = readme_like();
  c.open.p90_ns = 493'386'200;    // 0.99 * 499.38 - 1 = 493.3862 ms
  c.open.p99_ns = 1'001'964'500;  // 1.05 * 949.49 + 5 = 1001.9645 ms
  EXPECT_TRUE(judge_demo(c).passed);
}

TEST(demo_verdict, open_just_above_the_band_at_p99_fails) {
  auto c = readme_like();
  c.open.p99_ns = 1'001'964'501;
  const auto v = judge_demo(c);
  EXPECT_FALSE(v.passed);
  EXPECT_EQ(v.failure,
            "the open run missed the truth at p99: 1001.96 ms is outside [939.00, 1001.96] ms "
            "around the truth 949.49 ms");
  EXPECT_TRUE(has_line(v, "The open run missed the truth tests' tolerance at p99."));
}

TEST(demo_verdict, open_just_below_the_band_at_p90_fails) {
  auto c = readme_like();
  c.open.p90_ns = 493'386'199;
  const auto v = judge_demo(c);
  EXPECT_FALSE(v.passed);
  EXPECT_EQ(v.failure.rfind("the open run missed the truth at p90: ", 0), 0u) << v.failure;
  c.open.p99_ns = 900'000'000;  // below 0.99 * 949.49 - 1 = 938.9951 ms as well
  EXPECT_TRUE(
      has_line(judge_demo(c), "The open run missed the truth tests' tolerance at p90 and p99."));
}

TEST(demo_verdict, a_truth_of_exactly_1_ms_is_compared_in_percent) {
  demo_columns c{{"closed (as wrk)", 0, 0},
                 {"closed, reconstructed", 0, 0},
                 {"open (punctual)", 1'500'000, 3 * ms},
                 {"truth (from stall log)", ms, 2 * ms}};
  const auto v = judge_demo(c);
  EXPECT_TRUE(v.passed) << v.failure;  // 1.5 ms <= 6.05 ms and 3 ms <= 7.1 ms
  EXPECT_TRUE(has_line(v,
                       "open (punctual): p90 1.50 ms vs truth 1.00 ms (+50.0%), "
                       "p99 3.00 ms vs truth 2.00 ms (+50.0%)"));
}

TEST(demo_verdict, sub_millisecond_truths_need_sub_millisecond_measurements) {
  demo_columns c{{"closed (as wrk)", 100'000, 200'000},
                 {"closed, reconstructed", 100'000, 200'000},
                 {"open (punctual)", 40'000, ms - 1},
                 {"truth (from stall log)", 0, 0}};
  const auto pass = judge_demo(c);
  EXPECT_TRUE(pass.passed) << pass.failure;
  // Against a zero truth a percentage means nothing: the difference is given in ms.
  EXPECT_TRUE(has_line(pass,
                       "open (punctual): p90 0.04 ms vs truth 0.00 ms (+0.04 ms), "
                       "p99 1.00 ms vs truth 0.00 ms (+1.00 ms)"));
  c.open.p99_ns = ms;
  const auto fail = judge_demo(c);
  EXPECT_FALSE(fail.passed);
  EXPECT_EQ(fail.failure,
            "the open run missed the truth at p99: 1.00 ms where the truth (0.00 ms) is "
            "sub-millisecond");
}

}  // namespace
