// 95% confidence intervals for percentiles, computed two ways:
//
// - binomial: order statistics read off the whole-run histogram. For n samples and q = p/100,
//   the ranks are l = floor(n*q - z*s) + 1 and u = floor(n*q + z*s) + 1 with s = sqrt(n*q*(1-q))
//   and z = 1.96, clamped to [1, n]: the normal approximation to the binomial quantiles with a
//   continuity correction (the sample X(l) <= true percentile <= X(u) exactly when the number of
//   samples below it, Binomial(n, q), lies in [l, u-1]). Ranks map to values through the
//   histogram: lo is the lowest value of rank l's bucket, hi the highest value of rank u's
//   bucket, so the histogram's 3-digit rounding widens the interval instead of biasing it.
//   Assumes independent samples.
// - batch means: the same ranks, but with the share's spread measured instead of assumed. For
//   each of the k >= 5 intervals that have samples, the share of its samples at or below the
//   whole run's point estimate (read between the interval's tracked percentiles); the 95%
//   half-width of the run's share is t(0.975, k-1) times the standard error of those shares
//   (batch means of an indicator), and the interval is the ranks n(q -+ that half-width).
//   Respects correlation: a stall that fills one second with huge values makes that second's
//   share an outlier and the interval wide. It is centred on the whole run's distribution, not
//   on the mean of the per-interval percentiles, which a stall drags away from the whole run's
//   percentile (the simulation measured how often each covers the truth; docs/design.md).
//
// percentile_interval() reports the wider of the two and names it.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "analysis/interval_series.hpp"
#include "punctual/histogram/histogram.hpp"

namespace punctual::analysis {

inline constexpr std::string_view method_binomial = "binomial";
inline constexpr std::string_view method_batch_means = "batch-means";
inline constexpr std::string_view method_none = "none";

struct value_interval {
  std::int64_t lo = 0;  // ns
  std::int64_t hi = 0;  // ns
  // Batch means: the share's interval reaches down to 0 (q - half-width <= 0), so the interval
  // runs to the fastest response: the per-interval shares disagree too much for it to say
  // anything, and a longer run would.
  bool unresolved = false;
  std::int64_t width() const noexcept { return hi - lo; }
};

struct percentile_ci {
  std::int64_t lo = 0;                    // ns
  std::int64_t hi = 0;                    // ns
  std::string_view method = method_none;  // method_binomial, method_batch_means, or method_none
  bool unresolved = false;                // batch means only: see value_interval
  bool available() const noexcept { return method != method_none; }
};

// Two-sided 95% Student t quantile t(0.975, df); df >= 1 (table to 30, Cornish-Fisher beyond).
double student_t_975(int df) noexcept;

// Counts slot holding the sample of 1-based rank `rank` (clamped to [1, total_count]).
// Precondition: the histogram is not empty.
std::int32_t index_at_rank(const hdr::histogram& h, std::int64_t rank) noexcept;

// nullopt when the histogram is empty.
std::optional<value_interval> binomial_interval(const hdr::histogram& h,
                                                double percentile) noexcept;
// nullopt when the histogram is empty, fewer than 5 intervals have samples or the percentile is
// not tracked.
std::optional<value_interval> batch_means_interval(const hdr::histogram& h,
                                                   const interval_series& series,
                                                   double percentile);

// The wider of the two (binomial when batch means is not available); method_none when the
// histogram is empty. `series` may be one that saw no intervals (binomial only).
percentile_ci percentile_interval(const hdr::histogram& h, const interval_series& series,
                                  double percentile);

}  // namespace punctual::analysis
