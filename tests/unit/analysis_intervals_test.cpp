#include <gtest/gtest.h>

#include <vector>

#include "analysis/interval_series.hpp"

namespace {

using punctual::analysis::interval_series;
using punctual::record::view;
using punctual::record::view_set;

TEST(analysis_intervals, percentiles_are_summary_plus_slo_sorted_without_duplicates) {
  const std::vector<double> extra{99.5, 99.9, 42};
  const interval_series series(extra);
  const std::vector<double> want{42, 50, 75, 90, 99, 99.5, 99.9, 99.99, 100};
  EXPECT_EQ(series.percentiles(), want);
  EXPECT_EQ(series.percentile_index(99.5), 5u);
  EXPECT_FALSE(series.percentile_index(98));
}

TEST(analysis_intervals, keeps_per_interval_summaries) {
  interval_series series;
  view_set v;
  for (int i = 1; i <= 100; ++i) v[view::response_time].record(i * 1000);
  v[view::service_time].record(10);
  v[view::service_time].record(20);
  v[view::service_time].record(60);
  series.add(v);
  series.add(view_set{});
  const auto p50_histogram_value = v[view::response_time].highest_equivalent_value(50'000);
  v.reset();
  v[view::response_time].record(7);
  series.add(v);

  ASSERT_EQ(series.size(), 3u);
  EXPECT_EQ(series.at(0).response_count, 100);
  EXPECT_EQ(series.at(0).service_count, 3);
  EXPECT_DOUBLE_EQ(series.at(0).service_mean_ns, 30.0);
  EXPECT_EQ(series.at(0).service_p50_ns, 20);
  const auto p50 = *series.percentile_index(50);
  EXPECT_EQ(series.response_at(0, p50), p50_histogram_value);
  EXPECT_EQ(series.at(1).response_count, 0);
  EXPECT_EQ(series.response_at(1, p50), 0);
  // Empty intervals are skipped in the per-interval values.
  const std::vector<std::int64_t> max_values = series.response_values(100);
  ASSERT_EQ(max_values.size(), 2u);
  EXPECT_GE(max_values[0], 100'000);
  EXPECT_EQ(max_values[1], 7);
}

}  // namespace
