// Small per-interval summaries of a run, kept so that confidence intervals (batch means) and the
// connection-cap check can see how the run changed over time. No histogram is kept: each interval
// costs a few dozen bytes, so an hour-long run at one interval per second stays well under 1 MB.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "record/view_set.hpp"

namespace punctual::analysis {

// The percentiles every report shows (docs/report.schema.json, "percentiles_ns").
inline constexpr std::array<double, 7> summary_percentiles{50, 75, 90, 99, 99.9, 99.99, 100};

// Percentiles typed by users go through decimal text, so compare with a tolerance.
bool same_percentile(double a, double b) noexcept;

struct interval_summary {
  std::int64_t response_count = 0;
  std::int64_t service_count = 0;
  double service_mean_ns = 0;
  std::int64_t service_p50_ns = 0;
};

class interval_series {
 public:
  // Tracks summary_percentiles plus `extra_percentiles` (e.g. the SLO ones), each in (0, 100].
  explicit interval_series(std::span<const double> extra_percentiles = {});

  // Call once per finished interval, in order (from engine::interval_sink).
  void add(const record::view_set& views);

  std::size_t size() const noexcept { return rows_.size(); }
  // Bytes held (capacity), for memory accounting.
  std::size_t bytes() const noexcept {
    return rows_.capacity() * sizeof(interval_summary) + values_.capacity() * sizeof(std::int64_t);
  }
  const std::vector<double>& percentiles() const noexcept { return percentiles_; }
  std::optional<std::size_t> percentile_index(double percentile) const noexcept;

  const interval_summary& at(std::size_t interval) const noexcept { return rows_[interval]; }
  // Response time at percentiles()[k] in interval i, ns (0 when the interval had no sample).
  std::int64_t response_at(std::size_t interval, std::size_t k) const noexcept {
    return values_[interval * percentiles_.size() + k];
  }
  // The response time at `percentile` of every interval that has samples; empty when the
  // percentile is not tracked.
  std::vector<std::int64_t> response_values(double percentile) const;

 private:
  std::vector<double> percentiles_;
  std::vector<interval_summary> rows_;
  std::vector<std::int64_t> values_;  // rows_.size() x percentiles_.size()
};

}  // namespace punctual::analysis
