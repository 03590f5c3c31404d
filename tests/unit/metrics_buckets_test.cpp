// The classic histograms' buckets (metrics/buckets.hpp): their bounds, how HdrHistogram counts
// fill them, and the bound docs/design.md states on how far Prometheus's histogram_quantile()
// over them can be from the exact percentile.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "metrics/buckets.hpp"
#include "record/view_set.hpp"

namespace punctual::metrics {
namespace {

TEST(metrics_buckets, the_bounds_run_from_50us_to_60s_log_spaced) {
  EXPECT_EQ(latency_bounds.front(), 50e-6);
  EXPECT_EQ(latency_bounds.back(), 60);
  double widest = 0;
  for (std::size_t i = 1; i < bound_count; ++i) {
    ASSERT_GT(latency_bounds[i], latency_bounds[i - 1]);
    widest = std::max(widest, latency_bounds[i] / latency_bounds[i - 1]);
  }
  EXPECT_LE(widest, max_bound_ratio);
  EXPECT_GT(widest, 1.27);  // the stated ratio is the real one, not a loose one
}

TEST(metrics_buckets, a_value_goes_into_the_first_bucket_at_or_above_it) {
  hdr::histogram h(record::latency_params());
  h.record(40'000);               // 40 us: the first bucket
  h.record(50'000);               // on the first bound: still the first
  h.record(52'000);               // the second (63 us)
  h.record(1'000'000'000);        // 1 s: the bucket of le=1
  h.record_n(61'000'000'000, 2);  // past 60 s: +Inf
  bucket_counts b;
  b.add(h);
  b.add(h);  // added twice: counts add up
  EXPECT_EQ(b.counts[0], 4u);
  EXPECT_EQ(b.counts[1], 2u);
  const auto one_second = static_cast<std::size_t>(
      std::find(latency_bounds.begin(), latency_bounds.end(), 1.0) - latency_bounds.begin());
  EXPECT_EQ(b.counts[one_second], 2u);
  EXPECT_EQ(b.counts[bound_count], 4u);
  EXPECT_EQ(b.count, 12u);
  EXPECT_EQ(b.cumulative()[bound_count], 12u);
  EXPECT_NEAR(b.sum_seconds, 2 * (40e-6 + 50e-6 + 52e-6 + 1 + 122), 2 * 123 * 1e-3);
}

// Prometheus's histogram_quantile() over classic buckets (promql/quantile.go, bucketQuantile):
// the rank's bucket, linearly interpolated from its lower bound (0 for the first); the +Inf
// bucket answers the highest finite bound.
double histogram_quantile(double q, const bucket_counts& b) {
  const auto cumulative = b.cumulative();
  const double observations = static_cast<double>(cumulative[bound_count]);
  double rank = q * observations;
  std::size_t i = 0;
  while (i < bound_count && static_cast<double>(cumulative[i]) < rank) ++i;
  if (i == bound_count) return latency_bounds[bound_count - 1];
  double start = 0;
  double count = static_cast<double>(cumulative[i]);
  if (i > 0) {
    start = latency_bounds[i - 1];
    count -= static_cast<double>(cumulative[i - 1]);
    rank -= static_cast<double>(cumulative[i - 1]);
  }
  return start + (latency_bounds[i] - start) * (rank / count);
}

// For percentiles between the first and the last bound: within a factor of max_bound_ratio,
// widened by HdrHistogram's own resolution (3 digits: a slot is at most 0.1% wide).
TEST(metrics_buckets, histogram_quantile_stays_within_the_stated_factor_of_the_exact_value) {
  std::mt19937_64 rng(7);
  const double hdr_resolution = 1.001;
  double worst = 1;
  for (int trial = 0; trial < 40; ++trial) {
    // Log-normal response times, medians from 100 us to 2 s, spreads from tight to wide.
    const double median_s = 100e-6 * std::pow(20000.0, trial / 39.0);
    std::lognormal_distribution<double> d(std::log(median_s), 0.1 + 0.05 * (trial % 20));
    hdr::histogram h(record::latency_params());
    for (int i = 0; i < 20000; ++i) h.record(static_cast<std::int64_t>(d(rng) * 1e9));
    bucket_counts b;
    b.add(h);
    for (const double p : {50.0, 90.0, 99.0, 99.9}) {
      const double exact = static_cast<double>(h.value_at_percentile(p)) / 1e9;
      if (exact < latency_bounds.front() || exact > latency_bounds.back()) continue;
      const double estimate = histogram_quantile(p / 100, b);
      const double factor = std::max(estimate / exact, exact / estimate);
      worst = std::max(worst, factor);
      EXPECT_LE(factor, max_bound_ratio * hdr_resolution)
          << "p" << p << " exact " << exact << " estimate " << estimate;
    }
  }
  EXPECT_GT(worst, 1.05);  // the distributions did fall between bounds
}

// Below the first bound the estimate lies in [0, 50 us]; above the last it is 60 s.
TEST(metrics_buckets, outside_the_bounds_the_estimate_is_clamped_as_stated) {
  hdr::histogram low(record::latency_params());
  low.record_n(10'000, 100);
  bucket_counts b;
  b.add(low);
  EXPECT_LE(histogram_quantile(0.99, b), 50e-6);
  hdr::histogram high(record::latency_params());
  high.record_n(90'000'000'000, 100);
  bucket_counts c;
  c.add(high);
  EXPECT_EQ(histogram_quantile(0.99, c), 60);
}

}  // namespace
}  // namespace punctual::metrics
