#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "analysis/send_gaps.hpp"
#include "test_numbers.hpp"

namespace {

using punctual::analysis::erlang_cdf;
using punctual::analysis::fit_erlang;
using punctual::analysis::gap_fit;
using punctual::analysis::poisson_ks_threshold;
using punctual::hdr::histogram;
using punctual::hdr::histogram_params;

constexpr std::size_t sample_count = 100'000;

using punctual::test::uniform;

// Inverse CDF of Exp(rate): -ln(U) / rate, in ns.
double exponential_ns(std::mt19937_64& rng, double rate_per_s) {
  return -std::log(uniform(rng)) / rate_per_s * 1e9;
}

std::vector<std::int64_t> erlang_samples(std::uint64_t seed, int shape, double rate_per_s,
                                         std::size_t count = sample_count) {
  std::mt19937_64 rng(seed);
  std::vector<std::int64_t> out;
  out.reserve(count);
  for (std::size_t i = 0; i < count; ++i) {
    double gap = 0;
    for (int k = 0; k < shape; ++k) gap += exponential_ns(rng, rate_per_s);
    out.push_back(std::llround(gap));
  }
  return out;
}

histogram record_all(const std::vector<std::int64_t>& values, const histogram_params& params = {}) {
  histogram h(params);
  for (const auto v : values) h.record(v);
  return h;
}

// KS distance straight from the raw samples (no histogram): for sorted x_1..x_n the supremum is
// attained at a sample, just below it (i-1)/n or at it i/n.
double exact_ks(std::vector<std::int64_t> values, std::uint32_t shape, double rate_per_s) {
  std::sort(values.begin(), values.end());
  const double n = static_cast<double>(values.size());
  double d = 0;
  for (std::size_t i = 0; i < values.size(); ++i) {
    const double f = erlang_cdf(shape, rate_per_s / 1e9, static_cast<double>(values[i]));
    d = std::max({d, std::abs(f - static_cast<double>(i) / n),
                  std::abs(static_cast<double>(i + 1) / n - f)});
  }
  return d;
}

// Independent reference: the plain textbook sum in long double (fine for y up to ~10000).
double naive_erlang_cdf(int shape, long double y) {
  long double term = std::exp(-y);
  long double sum = term;
  for (int k = 1; k < shape; ++k) {
    term *= y / k;
    sum += term;
  }
  return static_cast<double>(1 - sum);
}

TEST(analysis_send_gaps, shape_one_is_exponential) {
  const double rate = 5e-6;  // per ns
  for (const double x : {1.0, 1e3, 5e4, 2e5, 1e6, 5e6}) {
    EXPECT_NEAR(erlang_cdf(1, rate, x), -std::expm1(-rate * x), 1e-15) << x;
  }
}

TEST(analysis_send_gaps, shape_two_closed_form) {
  const double rate = 1e-6;
  for (const double x : {1.0, 1e3, 1e5, 1e6, 2e6, 3e6, 1e7, 4e7}) {
    const double y = rate * x;
    EXPECT_NEAR(erlang_cdf(2, rate, x), 1 - std::exp(-y) * (1 + y), 1e-14) << x;
  }
  // Tiny y: F ~ y^2 / 2 must keep its relative precision (no 1 - (1 - eps) cancellation).
  EXPECT_NEAR(erlang_cdf(2, 1e-9, 1.0) / 5e-19, 1.0, 1e-6);
}

TEST(analysis_send_gaps, matches_textbook_sum_for_large_shapes) {
  for (const int shape : {3, 7, 16, 63, 64}) {
    for (const double y :
         {0.5, 5.0, 20.0, 40.0, 60.0, 63.5, 64.0, 64.5, 70.0, 90.0, 150.0, 400.0}) {
      EXPECT_NEAR(erlang_cdf(static_cast<std::uint32_t>(shape), 1e-3, y * 1e3),
                  naive_erlang_cdf(shape, y), 1e-13)
          << "shape " << shape << " y " << y;
    }
  }
  // Past 127 workers ln(n!) comes from Stirling's series: same check around the bulk.
  for (const int shape : {128, 129, 200, 1000}) {
    for (const double z : {-6.0, -3.0, -1.0, -0.2, 0.0, 0.2, 1.0, 3.0, 6.0}) {
      const double y = shape + z * std::sqrt(static_cast<double>(shape));
      EXPECT_NEAR(erlang_cdf(static_cast<std::uint32_t>(shape), 1.0, y), naive_erlang_cdf(shape, y),
                  1e-12)
          << "shape " << shape << " y " << y;
    }
  }
}

TEST(analysis_send_gaps, limits_and_monotone) {
  for (const std::uint32_t shape : {1u, 2u, 8u, 64u, 1000u}) {
    EXPECT_EQ(erlang_cdf(shape, 1e-6, 0.0), 0.0);
    EXPECT_EQ(erlang_cdf(shape, 1e-6, -5.0), 0.0);
    EXPECT_EQ(erlang_cdf(shape, 1e-6, 1e300), 1.0);
    EXPECT_NEAR(erlang_cdf(shape, 1e-6, shape * 1e6 * 100), 1.0, 1e-15);
    double previous = 0;
    // Geometric steps from 1e-4 to 1e4 times the mean shape / rate.
    for (double x = shape * 1e2; x < shape * 1e10; x *= 1.01) {
      const double f = erlang_cdf(shape, 1e-6, x);
      ASSERT_TRUE(std::isfinite(f)) << shape << " " << x;
      ASSERT_GE(f, previous) << shape << " " << x;
      ASSERT_LE(f, 1.0);
      previous = f;
    }
    EXPECT_EQ(previous, 1.0) << shape;
  }
  // Erlang(1000): mean 1000, sd ~31.6, so the median sits near the mean (1000 - 1/3).
  EXPECT_NEAR(erlang_cdf(1000, 1.0, 999.667), 0.5, 1e-3);
  EXPECT_LT(erlang_cdf(1000, 1.0, 1000 - 5 * 31.6), 1e-5);
  EXPECT_GT(erlang_cdf(1000, 1.0, 1000 + 5 * 31.6), 1 - 1e-5);
}

TEST(analysis_send_gaps, exponential_samples_fit) {
  const auto values = erlang_samples(1, 1, 5000);
  const gap_fit fit = fit_erlang(record_all(values), 1, 5000);
  EXPECT_EQ(fit.samples, sample_count);
  EXPECT_LT(fit.ks_distance, 0.01);
}

TEST(analysis_send_gaps, sum_of_two_needs_shape_two) {
  const auto values = erlang_samples(2, 2, 5000);
  const histogram h = record_all(values);
  EXPECT_LT(fit_erlang(h, 2, 5000).ks_distance, 0.01);
  EXPECT_GT(fit_erlang(h, 1, 5000).ks_distance, poisson_ks_threshold(sample_count));
  // Same mean, wrong shape: still far off (sup |e^-y/2 - e^-y (1 + y)| ~ 0.13 near y = 1).
  EXPECT_GT(fit_erlang(h, 1, 2500).ks_distance, poisson_ks_threshold(sample_count));
}

TEST(analysis_send_gaps, one_ms_tick_batching_is_flagged) {
  // Poisson intended times at 5000 req/s sent on the next 1 ms tick: gaps become multiples of 1 ms,
  // mostly 0 (about 5 requests share a tick).
  std::mt19937_64 rng(3);
  constexpr std::int64_t tick = 1'000'000;
  double intended = 0;
  std::int64_t previous_send = 0;
  histogram h;
  for (std::size_t i = 0; i <= sample_count; ++i) {
    intended += exponential_ns(rng, 5000);
    const auto send = (static_cast<std::int64_t>(std::ceil(intended / tick))) * tick;
    if (i > 0) h.record(send - previous_send);
    previous_send = send;
  }
  const gap_fit fit = fit_erlang(h, 1, 5000);
  EXPECT_EQ(fit.samples, sample_count);
  EXPECT_GT(fit.ks_distance, poisson_ks_threshold(sample_count));
}

TEST(analysis_send_gaps, constant_shift_matches_theory) {
  // Every gap stretched by s: no gap is shorter than s, so D >= F(s) = 1 - e^{-R s}, and since
  // F(x) - F(x - s) = e^{-R (x - s)} (1 - e^{-R s}) falls for x > s the deterministic part of D is
  // exactly that. The tolerance covers sampling noise near x = s (sd sqrt(p(1-p)/n) ~ 0.0008).
  constexpr double rate = 1000;
  constexpr std::int64_t shift = 60'000;
  auto values = erlang_samples(4, 1, rate);
  for (auto& v : values) v += shift;
  const gap_fit fit = fit_erlang(record_all(values), 1, rate);
  const double expected = -std::expm1(-rate * 1e-9 * static_cast<double>(shift));
  EXPECT_GT(fit.ks_distance, poisson_ks_threshold(sample_count));
  EXPECT_NEAR(fit.ks_distance, expected, 0.003);
}

TEST(analysis_send_gaps, histogram_bound_brackets_exact_distance) {
  // The documented guarantee: ks_distance <= D_true <= ks_distance + bucket_slack. Checked with
  // 3 digits (the run's layout), with 1 digit (wide slots, so the slack matters) and with a
  // coarse lowest discernible value (slot 0 spans several values).
  struct layout {
    histogram_params params;
    int shape;
    double rate;
  };
  const layout layouts[] = {{{}, 1, 5000},
                            {{1, 3'600'000'000'000, 1}, 4, 20000},
                            {{1000, 3'600'000'000'000, 2}, 2, 5000}};
  for (const auto& l : layouts) {
    const auto values = erlang_samples(5, l.shape, l.rate);
    const gap_fit fit =
        fit_erlang(record_all(values, l.params), static_cast<std::uint32_t>(l.shape), l.rate);
    const double exact = exact_ks(values, static_cast<std::uint32_t>(l.shape), l.rate);
    EXPECT_LE(fit.ks_distance, exact + 1e-12) << l.params.significant_digits;
    EXPECT_LE(exact, fit.ks_distance + fit.bucket_slack + 1e-12) << l.params.significant_digits;
    EXPECT_GT(fit.bucket_slack, 0.0);
  }
  // With 3 digits the slack is below the 0.1% slot width times max x f(x) = 1/e.
  const auto values = erlang_samples(6, 1, 5000);
  EXPECT_LT(fit_erlang(record_all(values), 1, 5000).bucket_slack, 0.001 / std::exp(1.0) * 1.01);
}

TEST(analysis_send_gaps, all_samples_in_one_slot) {
  // One slot [lo, hi]: D = max(F(lo), 1 - F(hi)) exactly.
  histogram h;
  h.record_n(200'000, 50);
  const double lo = static_cast<double>(h.lowest_equivalent_value(200'000));
  const double hi = static_cast<double>(h.highest_equivalent_value(200'000));
  const gap_fit fit = fit_erlang(h, 1, 5000);
  EXPECT_EQ(fit.samples, 50u);
  EXPECT_DOUBLE_EQ(fit.ks_distance, std::max(erlang_cdf(1, 5e-6, lo), 1 - erlang_cdf(1, 5e-6, hi)));
}

TEST(analysis_send_gaps, empty_histogram) {
  const gap_fit fit = fit_erlang(histogram{}, 4, 5000);
  EXPECT_EQ(fit.samples, 0u);
  EXPECT_EQ(fit.ks_distance, 0.0);
  EXPECT_EQ(fit.bucket_slack, 0.0);
}

TEST(analysis_send_gaps, threshold_is_the_effect_over_the_sampling_noise) {
  // 1.63 / sqrt(n): the 99% critical value of D for a perfect process.
  EXPECT_NEAR(poisson_ks_threshold(6'400), 0.02 + 1.63 / 80, 1e-12);
  EXPECT_NEAR(poisson_ks_threshold(1'000'000), 0.02 + 0.00163, 1e-12);
  EXPECT_GT(poisson_ks_threshold(5'000), poisson_ks_threshold(50'000));
}

// A perfect Poisson process of a healthy run's size stays below the threshold in (nearly) every
// draw: of 200 seeded runs of 6,000 gaps, at most 2 (1% expected) may reach it.
TEST(analysis_send_gaps, perfect_runs_of_a_tests_size_rarely_warn) {
  int warned = 0;
  for (int seed = 1; seed <= 200; ++seed) {
    const histogram h =
        record_all(erlang_samples(static_cast<std::uint64_t>(seed) + 1000, 1, 1000, 6'000));
    if (fit_erlang(h, 1, 1000).ks_distance > poisson_ks_threshold(6'000)) ++warned;
  }
  EXPECT_LE(warned, 2);
}

}  // namespace
