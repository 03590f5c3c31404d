// The comparison's statistics (analysis/compare_stats.hpp) and threshold parsing
// (report/compare_report.hpp): the t distribution against tables, Holm's step-down against
// hand-worked cases, the block bootstrap's point and its response to correlation, and
// --max-regression's grammar and refusals. JUnit's escaping is checked too.
#include "analysis/compare_stats.hpp"

#include <gtest/gtest.h>

#include <cmath>

#include "record/view_set.hpp"
#include "report/compare_report.hpp"
#include "report/junit.hpp"

namespace punctual {
namespace {

using analysis::run_estimate;

TEST(compare_stats, student_t_matches_the_tables) {
  EXPECT_NEAR(analysis::student_t_quantile(0.95, 1), 12.706, 1e-3);
  EXPECT_NEAR(analysis::student_t_quantile(0.95, 5), 2.571, 1e-3);
  EXPECT_NEAR(analysis::student_t_quantile(0.95, 30), 2.042, 1e-3);
  EXPECT_NEAR(analysis::student_t_quantile(0.95, 1e6), 1.960, 1e-3);
  EXPECT_NEAR(analysis::student_t_upper_tail(2.228, 10), 0.025, 1e-4);
  EXPECT_NEAR(analysis::student_t_upper_tail(0, 7), 0.5, 1e-12);
  EXPECT_NEAR(analysis::student_t_upper_tail(-2.228, 10), 0.975, 1e-4);
}

TEST(compare_stats, holm_adjusts_step_down) {
  // Sorted 0.01, 0.02, 0.03, 0.5 over m = 4: 0.04, 0.06, 0.06 (monotone), 0.5.
  const std::vector<double> p{0.03, 0.5, 0.01, 0.02};
  const auto a = analysis::holm_adjust(p);
  EXPECT_DOUBLE_EQ(a[2], 0.04);
  EXPECT_DOUBLE_EQ(a[3], 0.06);
  EXPECT_DOUBLE_EQ(a[0], 0.06);
  EXPECT_DOUBLE_EQ(a[1], 0.5);
  EXPECT_DOUBLE_EQ(analysis::holm_adjust(std::vector<double>{0.9, 0.8})[0], 1.0);
}

hdr::histogram of(std::initializer_list<std::pair<std::int64_t, std::int64_t>> values) {
  hdr::histogram h(record::latency_params());
  for (const auto& [v, n] : values) h.record_n(v, n);
  return h;
}

TEST(compare_stats, the_point_is_the_whole_runs_percentile) {
  analysis::interval_stream s;
  hdr::histogram whole(record::latency_params());
  for (int row = 0; row < 10; ++row) {
    const auto h = of({{1'000'000 + row * 1000, 90}, {5'000'000 + row * 7000, 10}});
    s.add(row, h);
    whole.add(h);
  }
  const double ps[] = {50, 90, 99};
  const auto e = analysis::bootstrap_percentiles(s, ps, 1, 200);
  for (std::size_t k = 0; k < 3; ++k) {
    EXPECT_EQ(e[k].point, static_cast<double>(whole.value_at_percentile(ps[k])));
    EXPECT_TRUE(e[k].usable());
    EXPECT_GT(e[k].variance, 0);
  }
}

TEST(compare_stats, a_stall_in_one_interval_widens_the_tail) {
  // Ten quiet seconds, and the same with one second of late answers: the late second's p99
  // share must show as variance, as a stall's correlated samples do.
  analysis::interval_stream quiet;
  analysis::interval_stream stalled;
  for (int row = 0; row < 10; ++row) {
    quiet.add(row, of({{1'000'000, 99}, {2'000'000, 1}}));
    stalled.add(row, row == 4 ? of({{1'000'000, 70}, {300'000'000, 30}})
                              : of({{1'000'000, 99}, {2'000'000, 1}}));
  }
  const double p99[] = {99};
  const auto q = analysis::bootstrap_percentiles(quiet, p99, 3, 500);
  const auto s = analysis::bootstrap_percentiles(stalled, p99, 3, 500);
  EXPECT_GT(std::sqrt(s[0].variance), 10 * std::sqrt(q[0].variance) + 1e6);
}

TEST(compare_stats, too_few_intervals_give_no_variance) {
  analysis::interval_stream s;
  for (int row = 0; row < 3; ++row) s.add(row, of({{1'000'000, 10}}));
  const double p50[] = {50};
  EXPECT_FALSE(analysis::bootstrap_percentiles(s, p50, 1, 50)[0].usable());
  EXPECT_FALSE(analysis::contrast_of(run_estimate{1, 1, 0}, run_estimate{1, 1, 3}).has_value());
}

TEST(compare_stats, a_contrast_with_no_noise_is_certain) {
  const run_estimate b{100, 0, 5};
  const run_estimate c{120, 0, 5};
  const auto d = analysis::contrast_of(b, c, 1.05);
  ASSERT_TRUE(d);
  EXPECT_DOUBLE_EQ(d->point, 15);
  EXPECT_EQ(d->p_above_zero(), 0.0);
  EXPECT_EQ(d->settle_factor(), 0.0);
}

TEST(compare_stats, settle_factor_scales_with_the_squared_ratio) {
  const run_estimate b{100, 50, 5};
  const run_estimate c{101, 50, 5};
  const auto d = analysis::contrast_of(b, c);
  ASSERT_TRUE(d);
  const double half = (d->hi - d->lo) / 2;
  EXPECT_NEAR(d->settle_factor(), half * half, 1e-9);  // |point| = 1
}

TEST(compare_thresholds, max_regression_parses_and_refuses) {
  const auto t = report::parse_max_regression("p99:+10%,p50:+2ms,errors:+0.5%");
  EXPECT_EQ(t.at("p99"), (report::compare_threshold{true, 0.10}));
  EXPECT_EQ(t.at("p50"), (report::compare_threshold{false, 2e6}));
  EXPECT_EQ(t.at("errors"), (report::compare_threshold{false, 0.005}));
  EXPECT_EQ(t.at("p90"), (report::compare_threshold{true, 0.05}));  // the default stays
  EXPECT_EQ(report::parse_max_regression("p99.9:250us").at("p99.9"),
            (report::compare_threshold{false, 250e3}));
  for (const char* bad : {"p98:+5%", "p99", "p99:+fast", "errors:+2ms", "p99:-5%", "p99:+5%,"}) {
    EXPECT_THROW(report::parse_max_regression(bad), report::compare_refused) << bad;
  }
}

TEST(compare_junit, text_is_escaped_and_counted) {
  std::vector<report::junit_case> cases(3);
  cases[0] = {"slo", "p99<=\"1ms\" & more", report::junit_case::state::failed, "a<b", "line\nnext"};
  cases[1] = {"compare", "p50", report::junit_case::state::skipped, "inconclusive", {}};
  cases[2] = {"compare", "p90", report::junit_case::state::passed, {}, {}};
  const std::string x = report::junit_xml("punctual run", cases);
  EXPECT_NE(x.find("name=\"p99&lt;=&quot;1ms&quot; &amp; more\""), std::string::npos) << x;
  EXPECT_NE(x.find("tests=\"3\" failures=\"1\" errors=\"0\" skipped=\"1\""), std::string::npos)
      << x;
  EXPECT_NE(x.find("<skipped>inconclusive</skipped>"), std::string::npos) << x;
  EXPECT_NE(x.find("line&#10;next"), std::string::npos) << x;
}

}  // namespace
}  // namespace punctual
