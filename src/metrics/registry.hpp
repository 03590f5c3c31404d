// Builds the live metrics' snapshot (series.hpp) from a run's state, on the collecting thread:
// the counts from what the workers handed over (record::live_counts: by intended time, as the
// JSON report counts them), the histograms from the emitted intervals. Once the run has ended
// the counts are the run's own, so the final snapshot equals the JSON report's `outcomes`,
// `by_name` and `sessions` (docs/design.md, "Live metrics", lists the series).
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "metrics/buckets.hpp"
#include "metrics/series.hpp"
#include "record/counters.hpp"
#include "record/view_set.hpp"
#include "run/config.hpp"

namespace punctual::metrics {

// What the counts alone do not say, at the instant of the snapshot.
struct gauges {
  std::chrono::nanoseconds since_start{};  // from the schedule's start (warm-up included)
  std::uint64_t queue_depth = 0;           // the most requests that waited at once, last interval
};

class registry {
 public:
  explicit registry(const run::config& c);

  // Each emitted interval, in order (engine::interval_sink): its histograms join the buckets.
  void add_interval(const record::view_set& v);
  snapshot build(const record::live_counts& counts, const gauges& g,
                 std::chrono::system_clock::time_point taken) const;

  // Every family name the registry can export, with its type (the dashboard's test reads it).
  static std::vector<family> families();

 private:
  struct named_histograms {
    std::size_t name = 0;  // index into config::mix
    bucket_counts response_time;
    bucket_counts service_time;
  };
  struct session_histogram {
    std::string scenario;
    std::size_t name = 0;  // its SCENARIO.session entry
    bucket_counts session_time;
  };

  const run::config& config_;
  std::vector<named_histograms> names_;  // the request names (one, called "", without a mix)
  std::vector<session_histogram> sessions_;
  bucket_counts send_lag_;
  bucket_counts queue_wait_;
};

// The planned rate at `since_start` (requests per second, users per second in the hybrid
// model), of this shard's share; none for the closed model and a replayed trace.
std::optional<double> target_rate(const run::config& c, std::chrono::nanoseconds since_start);

}  // namespace punctual::metrics
