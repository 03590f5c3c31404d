#include "metrics/buckets.hpp"

namespace punctual::metrics {
// R10 from 5e-5 to 50, then 60.
const std::array<double, bound_count> latency_bounds{
    0.00005, 0.000063, 0.00008, 0.0001, 0.000125, 0.00016, 0.0002, 0.00025, 0.000315,
    0.0004,  0.0005,   0.00063, 0.0008, 0.001,    0.00125, 0.0016, 0.002,   0.0025,
    0.00315, 0.004,    0.005,   0.0063, 0.008,    0.01,    0.0125, 0.016,   0.02,
    0.025,   0.0315,   0.04,    0.05,   0.063,    0.08,    0.1,    0.125,   0.16,
    0.2,     0.25,     0.315,   0.4,    0.5,      0.63,    0.8,    1,       1.25,
    1.6,     2,        2.5,     3.15,   4,        5,       6.3,    8,       10,
    12.5,    16,       20,      25,     31.5,     40,      50,     60};

void bucket_counts::add(const hdr::histogram& h) {
  const std::int64_t total = h.total_count();
  if (total == 0) return;
  std::array<std::int64_t, bound_count> bound_ns{};
  for (std::size_t i = 0; i < bound_count; ++i)
    bound_ns[i] = static_cast<std::int64_t>(latency_bounds[i] * 1e9 + 0.5);
  const std::int32_t first = h.index_of(h.min());
  const std::int32_t last = h.index_of(h.max());
  std::size_t b = 0;
  for (std::int32_t i = first; i <= last && i < h.counts_length(); ++i) {
    const std::int64_t n = h.count_at_index(i);
    if (n == 0) continue;
    const std::int64_t value = h.value_from_index(i);
    while (b < bound_count && value > bound_ns[b]) ++b;
    counts[b] += static_cast<std::uint64_t>(n);
  }
  count += static_cast<std::uint64_t>(total);
  sum_seconds += h.mean() * static_cast<double>(total) / 1e9;
}

std::array<std::uint64_t, bound_count + 1> bucket_counts::cumulative() const noexcept {
  std::array<std::uint64_t, bound_count + 1> c{};
  std::uint64_t running = 0;
  for (std::size_t i = 0; i <= bound_count; ++i) c[i] = running += counts[i];
  return c;
}

}  // namespace punctual::metrics
