#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <iostream>
#include <random>
#include <vector>

#include "analysis/confidence.hpp"
#include "analysis/interval_series.hpp"
#include "record/view_set.hpp"
#include "test_numbers.hpp"

namespace {

using punctual::analysis::batch_means_interval;
using punctual::analysis::binomial_interval;
using punctual::analysis::interval_series;
using punctual::analysis::percentile_interval;
using punctual::hdr::histogram;
using punctual::record::view;
using punctual::record::view_set;

using punctual::test::uniform;

double exponential(std::mt19937_64& rng, double mean) {
  return -mean * std::log(uniform(rng));
}

double lognormal(std::mt19937_64& rng, double mu, double sigma) {
  const double normal = std::sqrt(-2 * std::log(uniform(rng))) * std::cos(2 * M_PI * uniform(rng));
  return std::exp(mu + sigma * normal);
}

TEST(analysis_confidence, t_quantiles) {
  EXPECT_NEAR(punctual::analysis::student_t_975(1), 12.706, 1e-3);
  EXPECT_NEAR(punctual::analysis::student_t_975(4), 2.776, 1e-3);
  EXPECT_NEAR(punctual::analysis::student_t_975(30), 2.042, 1e-3);
  // Published values beyond the table: the expansion must match them.
  EXPECT_NEAR(punctual::analysis::student_t_975(40), 2.021, 2e-3);
  EXPECT_NEAR(punctual::analysis::student_t_975(60), 2.000, 2e-3);
  EXPECT_NEAR(punctual::analysis::student_t_975(120), 1.980, 2e-3);
  EXPECT_NEAR(punctual::analysis::student_t_975(1000000), 1.960, 1e-3);
  for (int df = 1; df < 200; ++df) {
    EXPECT_GT(punctual::analysis::student_t_975(df), punctual::analysis::student_t_975(df + 1))
        << df;
  }
}

TEST(analysis_confidence, value_at_rank) {
  histogram h;
  for (int v = 1; v <= 100; ++v) h.record(v);
  h.record_n(500, 3);
  EXPECT_EQ(h.value_from_index(punctual::analysis::index_at_rank(h, 1)), 1);
  EXPECT_EQ(h.value_from_index(punctual::analysis::index_at_rank(h, 37)), 37);
  EXPECT_EQ(h.value_from_index(punctual::analysis::index_at_rank(h, 101)), 500);
  EXPECT_EQ(h.value_from_index(punctual::analysis::index_at_rank(h, 103)), 500);
  EXPECT_EQ(h.value_from_index(punctual::analysis::index_at_rank(h, 0)), 1);       // clamped
  EXPECT_EQ(h.value_from_index(punctual::analysis::index_at_rank(h, 9999)), 500);  // clamped
}

TEST(analysis_confidence, binomial_ranks_on_known_data) {
  // 1..1000 ms: for p99, n*q = 990, z*sqrt(n*q*(1-q)) = 6.17, so ranks 984 and 997.
  histogram h;
  for (int i = 1; i <= 1000; ++i) h.record(std::int64_t{i} * 1'000'000);
  const auto ci = binomial_interval(h, 99);
  ASSERT_TRUE(ci);
  EXPECT_EQ(ci->lo, h.lowest_equivalent_value(984'000'000));
  EXPECT_EQ(ci->hi, h.highest_equivalent_value(997'000'000));
  EXPECT_LE(ci->lo, h.value_at_percentile(99));
  EXPECT_GE(ci->hi, h.value_at_percentile(99));
  EXPECT_FALSE(binomial_interval(histogram{}, 99));
}

// For independent samples the binomial interval must cover the analytic quantile about 95% of
// the time: 1,000 seeded trials of n = 2000.
void expect_coverage(double percentile, double true_value, auto draw) {
  std::mt19937_64 rng(20240601 + static_cast<std::uint64_t>(percentile * 100));
  histogram h(punctual::record::latency_params());
  int covered = 0;
  constexpr int trials = 1000;
  for (int t = 0; t < trials; ++t) {
    h.reset();
    for (int i = 0; i < 2000; ++i) h.record(static_cast<std::int64_t>(std::llround(draw(rng))));
    const auto ci = binomial_interval(h, percentile);
    ASSERT_TRUE(ci);
    if (static_cast<double>(ci->lo) <= true_value && true_value <= static_cast<double>(ci->hi))
      ++covered;
  }
  std::cout << "p" << percentile << ": binomial interval covered the true value in " << covered
            << " of " << trials << " trials\n";
  EXPECT_GE(covered, 920) << "p" << percentile;
  EXPECT_LE(covered, 980) << "p" << percentile;
}

TEST(analysis_confidence, binomial_coverage_exponential) {
  constexpr double mean = 1e6;  // 1 ms
  const auto draw = [](std::mt19937_64& rng) { return exponential(rng, mean); };
  for (const double p : {50.0, 90.0, 99.0}) {
    expect_coverage(p, -mean * std::log(1 - p / 100), draw);
  }
}

TEST(analysis_confidence, binomial_coverage_lognormal) {
  const double mu = std::log(2e6);
  const double sigma = 1.0;
  const auto draw = [mu, sigma](std::mt19937_64& rng) { return lognormal(rng, mu, sigma); };
  // Standard normal quantiles at 0.75 and 0.99.
  expect_coverage(75, std::exp(mu + sigma * 0.6744897501960817), draw);
  expect_coverage(99, std::exp(mu + sigma * 2.3263478740408408), draw);
}

// 20 one-second intervals of 1000 exponential samples (mean 1 ms); interval 7 is a stall in
// which 100 requests took 5 s. p99 of the whole run stays in the normal range, so the binomial
// interval is narrow, but that second's p99 is 5 s.
struct stalled_run {
  view_set total;
  interval_series series;
  std::vector<histogram> intervals;
  stalled_run() {
    std::mt19937_64 rng(7);
    view_set interval;
    for (int i = 0; i < 20; ++i) {
      interval.reset();
      auto& h = interval[view::response_time];
      for (int k = 0; k < 1000; ++k) h.record(std::llround(exponential(rng, 1e6)));
      if (i == 7) h.record_n(5'000'000'000, 100);
      intervals.push_back(h);
      series.add(interval);
      total.add(interval);
    }
  }
};

// The samples of `h` at or below `value`'s bucket.
double at_or_below(const histogram& h, std::int64_t value) {
  double n = 0;
  for (std::int32_t i = 0; i <= h.index_of(value); ++i)
    n += static_cast<double>(h.count_at_index(i));
  return n;
}

TEST(analysis_confidence, stall_chooses_batch_means) {
  const stalled_run run;
  const auto& h = run.total[view::response_time];
  const auto binomial = binomial_interval(h, 99);
  const auto batch = batch_means_interval(h, run.series, 99);
  ASSERT_TRUE(binomial);
  ASSERT_TRUE(batch);
  // Batch means by hand, from each second's exact share at or below the run's p99 (the method
  // reads it between the second's tracked percentiles): the ranks n(0.99 -+ t(0.975, 19) * se).
  const std::int64_t point = h.value_at_percentile(99);
  const double n = static_cast<double>(h.total_count());
  const double share = at_or_below(h, point) / n;
  double squares = 0;
  for (const auto& second : run.intervals) {
    const double residual =
        at_or_below(second, point) - share * static_cast<double>(second.total_count());
    squares += residual * residual;
  }
  const double half = 2.093 * std::sqrt(20 * squares / 19) / n;
  const auto rank_value = [&](double rank) {
    return h.value_from_index(
        punctual::analysis::index_at_rank(h, static_cast<std::int64_t>(std::floor(rank)) + 1));
  };
  EXPECT_NEAR(static_cast<double>(batch->lo), static_cast<double>(rank_value(n * (0.99 - half))),
              0.05 * static_cast<double>(point));
  EXPECT_EQ(batch->hi, h.highest_equivalent_value(rank_value(n * (0.99 + half))));

  const auto ci = percentile_interval(h, run.series, 99);
  EXPECT_EQ(ci.method, punctual::analysis::method_batch_means);
  EXPECT_GT(ci.hi - ci.lo, binomial->width());
  EXPECT_GT(ci.hi, 200'000'000);  // the stall shows: far above the ~5 ms of normal seconds
  EXPECT_LT(binomial->hi, 50'000'000);
  // Centred on the whole run: the lower end stays among the normal seconds' values, where the
  // mean of the seconds' p99 (~250 ms, dragged up by the stalled one) would sit far above it.
  EXPECT_GT(ci.lo, 2'000'000);
  EXPECT_LE(ci.lo, point);
  EXPECT_GE(ci.hi, point);
}

// Independent samples: the seconds' shares spread as the binomial assumes, so the two intervals
// are about as wide.
TEST(analysis_confidence, batch_means_matches_binomial_on_independent_samples) {
  std::mt19937_64 rng(11);
  view_set total;
  interval_series series;
  view_set interval;
  for (int i = 0; i < 30; ++i) {
    interval.reset();
    for (int k = 0; k < 1000; ++k)
      interval[view::response_time].record(std::llround(exponential(rng, 1e6)));
    series.add(interval);
    total.add(interval);
  }
  const auto& h = total[view::response_time];
  for (const double p : {50.0, 90.0, 99.0}) {
    const auto binomial = binomial_interval(h, p);
    const auto batch = batch_means_interval(h, series, p);
    ASSERT_TRUE(binomial && batch);
    const double ratio =
        static_cast<double>(batch->width()) / static_cast<double>(binomial->width());
    EXPECT_GT(ratio, 0.6) << "p" << p;
    EXPECT_LT(ratio, 1.6) << "p" << p;
  }
}

TEST(analysis_confidence, batch_means_needs_five_intervals) {
  interval_series series;
  view_set interval;
  interval[view::response_time].record(1000);
  for (int i = 0; i < 4; ++i) series.add(interval);
  view_set empty;
  for (int i = 0; i < 3; ++i) series.add(empty);  // empty seconds do not count
  EXPECT_FALSE(batch_means_interval(interval[view::response_time], series, 99));
  const auto ci = percentile_interval(interval[view::response_time], series, 99);
  EXPECT_EQ(ci.method, punctual::analysis::method_binomial);
  series.add(interval);
  EXPECT_TRUE(batch_means_interval(interval[view::response_time], series, 99));
  EXPECT_FALSE(batch_means_interval(interval[view::response_time], series, 97.5));  // not tracked
}

TEST(analysis_confidence, empty_histogram_has_no_interval) {
  const interval_series series;
  const auto ci = percentile_interval(histogram{}, series, 99);
  EXPECT_FALSE(ci.available());
  EXPECT_EQ(ci.method, punctual::analysis::method_none);
}

}  // namespace
