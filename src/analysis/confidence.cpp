#include "analysis/confidence.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <vector>

namespace punctual::analysis {
namespace {

constexpr double z_975 = 1.959963984540054;
constexpr std::size_t min_batches = 5;

// t(0.975, df) for df = 1..30 (standard tables).
constexpr std::array<double, 30> t_table{12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306,
                                         2.262,  2.228, 2.201, 2.179, 2.160, 2.145, 2.131, 2.120,
                                         2.110,  2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064,
                                         2.060,  2.056, 2.052, 2.048, 2.045, 2.042};

}  // namespace

double student_t_975(int df) noexcept {
  if (df < 1) df = 1;
  if (df <= static_cast<int>(t_table.size())) return t_table[static_cast<std::size_t>(df - 1)];
  // Cornish-Fisher expansion of t in powers of 1/df around the normal quantile (Abramowitz &
  // Stegun 26.7.5); accurate to ~1e-4 from df = 30 on.
  const double z = z_975;
  const double z3 = z * z * z;
  const double z5 = z3 * z * z;
  const double z7 = z5 * z * z;
  const double v = df;
  return z + (z3 + z) / (4 * v) + (5 * z5 + 16 * z3 + 3 * z) / (96 * v * v) +
         (3 * z7 + 19 * z5 + 17 * z3 - 15 * z) / (384 * v * v * v);
}

std::int32_t index_at_rank(const hdr::histogram& h, std::int64_t rank) noexcept {
  const std::int64_t n = h.total_count();
  rank = std::clamp<std::int64_t>(rank, 1, n);
  std::int64_t seen = 0;
  std::int32_t i = h.index_of(h.min());
  for (; i < h.counts_length(); ++i) {
    seen += h.count_at_index(i);
    if (seen >= rank) return i;
  }
  return h.counts_length() - 1;
}

std::optional<value_interval> binomial_interval(const hdr::histogram& h,
                                                double percentile) noexcept {
  const std::int64_t n = h.total_count();
  if (n <= 0) return std::nullopt;
  const double q = std::clamp(percentile / 100.0, 0.0, 1.0);
  const double nq = static_cast<double>(n) * q;
  const double half = z_975 * std::sqrt(static_cast<double>(n) * q * (1 - q));
  const auto lower_rank = static_cast<std::int64_t>(std::floor(nq - half)) + 1;
  const auto upper_rank = static_cast<std::int64_t>(std::floor(nq + half)) + 1;
  const std::int32_t lo_index = index_at_rank(h, lower_rank);
  const std::int32_t hi_index = index_at_rank(h, upper_rank);
  value_interval out;
  out.lo = h.lowest_equivalent_value(h.value_from_index(lo_index));
  out.hi = h.highest_equivalent_value(h.value_from_index(hi_index));
  // The point estimate (valueAtPercentile) is a bucket's highest value; never exclude it.
  out.hi = std::max(out.hi, h.value_at_percentile(percentile));
  return out;
}

std::optional<value_interval> batch_means_interval(const interval_series& series,
                                                   double percentile) {
  const std::vector<std::int64_t> values = series.response_values(percentile);
  if (values.size() < min_batches) return std::nullopt;
  const double k = static_cast<double>(values.size());
  double sum = 0;
  for (const auto v : values) sum += static_cast<double>(v);
  const double mean = sum / k;
  double squares = 0;
  for (const auto v : values)
    squares += (static_cast<double>(v) - mean) * (static_cast<double>(v) - mean);
  const double sd = std::sqrt(squares / (k - 1));
  const double half = student_t_975(static_cast<int>(values.size()) - 1) * sd / std::sqrt(k);
  value_interval out;
  out.unresolved = mean - half < 0;
  out.lo = std::max<std::int64_t>(0, static_cast<std::int64_t>(std::floor(mean - half)));
  out.hi = static_cast<std::int64_t>(std::ceil(mean + half));
  return out;
}

percentile_ci percentile_interval(const hdr::histogram& h, const interval_series& series,
                                  double percentile) {
  const auto binomial = binomial_interval(h, percentile);
  if (!binomial) return {};
  percentile_ci out{binomial->lo, binomial->hi, method_binomial};
  auto batch = batch_means_interval(series, percentile);
  if (!batch) return out;
  const std::int64_t point = h.value_at_percentile(percentile);
  batch->lo = std::min(batch->lo, point);
  batch->hi = std::max(batch->hi, point);
  if (batch->width() > binomial->width())
    out = {batch->lo, batch->hi, method_batch_means, batch->unresolved};
  return out;
}

}  // namespace punctual::analysis
