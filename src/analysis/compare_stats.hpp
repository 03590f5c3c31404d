// The statistics behind `punctual compare` (docs/design.md, "Comparing two runs"): how far a
// percentile (or the error share) of one run may be from the truth, estimated by a circular
// block bootstrap over the run's per-interval histograms, and how two runs' estimates combine
// into an interval for their difference, a one-sided test against a threshold, and Holm's
// step-down correction over many rows.
//
// Why blocks of intervals: latencies within a run are correlated in time (a stall fills a
// second with late answers), so resampling single requests as if independent would make the
// interval far too narrow and call false regressions. An interval (one second of the .hlog) is
// the unit; consecutive intervals are resampled together in blocks of about K^(1/3), so that
// what spills from one second into the next stays together.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <utility>
#include <vector>

#include "punctual/histogram/histogram.hpp"

namespace punctual::analysis {

inline constexpr double compare_confidence = 0.95;
inline constexpr double compare_alpha = 0.05;  // family-wise, over every row (Holm)
inline constexpr int compare_resamples = 1000;
// Fewer usable intervals than this in either run: no interval, the row is inconclusive.
inline constexpr std::size_t compare_min_intervals = 4;

// A run's stream (one view, or one name's response time) as the counts of each of its
// intervals, in time order: the unit the bootstrap resamples.
class interval_stream {
 public:
  // Interval `row` (0 = the first of the window) gets h's counts; rows may come in any order
  // and a row may be added to twice (its counts add up).
  void add(std::int64_t row, const hdr::histogram& h);
  // Rows with no samples are kept as empty units: an idle second is part of the run.
  std::size_t intervals() const noexcept { return rows_.size(); }
  std::int64_t total_count() const noexcept;
  // The (index, count) slots of every row, in row order (layout: record::latency_params()).
  const std::vector<std::vector<std::pair<std::int32_t, std::int64_t>>>& rows() const noexcept {
    return rows_;
  }

 private:
  std::int64_t first_row_ = 0;
  std::vector<std::vector<std::pair<std::int32_t, std::int64_t>>> rows_;
};

// One run's figure and how much it would vary from run to run of the same length.
struct run_estimate {
  double point = 0;     // the figure over the whole run (ns, or a share in [0, 1])
  double variance = 0;  // its bootstrap variance
  int blocks = 0;       // blocks per resample; 0: no variance could be estimated
  bool usable() const noexcept { return blocks >= 2; }
};

// Each percentile of `percentiles` (in (0, 100]) of the stream: the whole-run value as
// HdrHistogram's valueAtPercentile gives it, and its variance over `resamples` circular block
// bootstrap resamples drawn from `seed`. blocks = 0 when fewer than compare_min_intervals rows.
std::vector<run_estimate> bootstrap_percentiles(const interval_stream& stream,
                                                std::span<const double> percentiles,
                                                std::uint64_t seed,
                                                int resamples = compare_resamples);

// The share errors / total, from per-interval counts (in time order), bootstrapped the same way.
run_estimate bootstrap_share(std::span<const std::pair<std::int64_t, std::int64_t>> errors_totals,
                             std::uint64_t seed, int resamples = compare_resamples);

// candidate − scale × base, and how uncertain it is: its standard error, and the degrees of
// freedom of a Student t for it (Welch–Satterthwaite over the two runs' blocks − 1).
struct contrast {
  double point = 0;
  double se = 0;
  double df = 1;
  double lo = 0;  // the two-sided compare_confidence interval
  double hi = 0;
  // How many times longer both runs would have to be for the interval to clear zero, one way or
  // the other (variance falls as 1/duration); 0 when it already does, infinity when the point
  // is exactly zero.
  double settle_factor() const noexcept;
  // One-sided p-value of "the true value is <= 0" (small: it is above zero).
  double p_above_zero() const noexcept;
  // One-sided p-value of "the true value is >= 0" (small: it is below zero).
  double p_below_zero() const noexcept;
};
// nullopt when either estimate is not usable.
std::optional<contrast> contrast_of(const run_estimate& base, const run_estimate& candidate,
                                    double scale = 1.0, double offset = 0.0);

// Holm's step-down adjusted p-values, in the input's order: reject a hypothesis at family-wise
// level alpha exactly when its adjusted value is <= alpha.
std::vector<double> holm_adjust(std::span<const double> p);

// Student t: the upper-tail probability P(T > t) for df degrees of freedom (df may be
// fractional), and the two-sided quantile for `confidence`.
double student_t_upper_tail(double t, double df) noexcept;
double student_t_quantile(double confidence, double df) noexcept;

}  // namespace punctual::analysis
