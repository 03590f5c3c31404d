// The classic histograms' fixed bucket bounds, and how an HdrHistogram's counts fill them.
//
// The bounds are the R10 preferred numbers (1, 1.25, 1.6, 2, 2.5, 3.15, 4, 5, 6.3, 8 per decade)
// from 50 us to 50 s, then 60 s: 62 finite bounds and +Inf. One fixed set for every run and every
// view, so that dashboards and histogram_quantile() over several runs or shards add buckets that
// mean the same thing. Neighbouring bounds differ by a factor of at most 1.28, which bounds how
// far histogram_quantile() can be from the exact percentile (docs/design.md, "Live metrics").
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "punctual/histogram/histogram.hpp"

namespace punctual::metrics {

inline constexpr std::size_t bound_count = 62;
// Seconds, ascending.
extern const std::array<double, bound_count> latency_bounds;
// The largest ratio of a bound to the one below it.
inline constexpr double max_bound_ratio = 1.28;

// One classic histogram: counts per bucket (not cumulative; the last is +Inf), the sum of the
// values in seconds, and their count.
struct bucket_counts {
  std::array<std::uint64_t, bound_count + 1> counts{};
  double sum_seconds = 0;
  std::uint64_t count = 0;

  // Adds every value of `h` (nanoseconds). A value goes into the first bucket whose bound is
  // at least the lowest value of its HdrHistogram slot: exact but for values within the slot's
  // width (0.1%) of a bound. The sum is the count times the mean (HdrHistogram keeps no sum).
  void add(const hdr::histogram& h);
  // Cumulative counts, as the `le` series give them.
  std::array<std::uint64_t, bound_count + 1> cumulative() const noexcept;
};

}  // namespace punctual::metrics
