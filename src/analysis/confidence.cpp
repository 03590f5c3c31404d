#include "analysis/confidence.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <utility>
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

namespace {

// The values of ranks n(q - half) and n(q + half), continuity-corrected as above, read off the
// histogram: the sample X(l) <= x_q <= X(u) exactly when the share of samples below x_q lies
// within `half_share` of q. The point estimate (valueAtPercentile, a bucket's highest value) is
// never excluded.
value_interval rank_interval(const hdr::histogram& h, double percentile,
                             double half_share) noexcept {
  const auto n = static_cast<double>(h.total_count());
  const double nq = n * std::clamp(percentile / 100.0, 0.0, 1.0);
  const double half = n * half_share;
  const auto lower_rank = static_cast<std::int64_t>(std::floor(nq - half)) + 1;
  const auto upper_rank = static_cast<std::int64_t>(std::floor(nq + half)) + 1;
  value_interval out;
  out.lo = h.lowest_equivalent_value(h.value_from_index(index_at_rank(h, lower_rank)));
  out.hi = h.highest_equivalent_value(h.value_from_index(index_at_rank(h, upper_rank)));
  out.hi = std::max(out.hi, h.value_at_percentile(percentile));
  return out;
}

// The whole run's samples at or below each histogram slot (its empirical CDF, in counts).
class run_cdf {
 public:
  explicit run_cdf(const hdr::histogram& h) : h_(h), below_(h.counts_length()) {
    std::int64_t seen = 0;
    for (std::int32_t i = 0; i < h.counts_length(); ++i) {
      seen += h.count_at_index(i);
      below_[static_cast<std::size_t>(i)] = seen;
    }
  }
  std::int32_t slot(std::int64_t value) const noexcept {
    return std::clamp(h_.index_of(value), 0, h_.counts_length() - 1);
  }
  double at(std::int32_t slot) const noexcept {
    return static_cast<double>(below_[static_cast<std::size_t>(slot)]);
  }

 private:
  const hdr::histogram& h_;
  std::vector<std::int64_t> below_;
};

// The share of interval i's samples at or below slot x. An interval keeps only its values at
// the tracked percentiles; between the two that bracket x, the share is placed as the whole
// run's CDF places x between those two values (below the lowest, between 0 and it).
double share_at_or_below(const interval_series& series, std::size_t i, const run_cdf& cdf,
                         std::int32_t x) {
  double low_share = 0;
  double low_count = 0;
  const std::vector<double>& tracked = series.percentiles();
  for (std::size_t k = 0; k < tracked.size(); ++k) {
    const std::int32_t knot = cdf.slot(series.response_at(i, k));
    const double share = tracked[k] / 100;
    if (x < knot) {
      const double span = cdf.at(knot) - low_count;
      const double place = span > 0 ? std::clamp((cdf.at(x) - low_count) / span, 0.0, 1.0) : 0.5;
      return low_share + (share - low_share) * place;
    }
    low_share = share;
    low_count = cdf.at(knot);
  }
  return 1;
}

// Batch means of the share of samples at or below the whole run's point estimate, over the
// intervals that have samples: the 95% half-width of that share, t(0.975, k-1) times its
// standard error (a ratio of sums over the intervals, so a busy second weighs more).
std::optional<double> batch_share_half_width(const hdr::histogram& h, const interval_series& series,
                                             double percentile) {
  if (h.total_count() <= 0 || !series.percentile_index(percentile)) return std::nullopt;
  const run_cdf cdf(h);
  const std::int32_t x = cdf.slot(h.value_at_percentile(percentile));
  std::vector<std::pair<double, double>> batches;  // (samples, at or below x)
  double samples = 0, below = 0;
  for (std::size_t i = 0; i < series.size(); ++i) {
    const auto n = static_cast<double>(series.at(i).response_count);
    if (n <= 0) continue;
    const double b = n * share_at_or_below(series, i, cdf, x);
    batches.emplace_back(n, b);
    samples += n;
    below += b;
  }
  if (batches.size() < min_batches) return std::nullopt;
  const double share = below / samples;
  double squares = 0;
  for (const auto& [n, b] : batches) squares += (b - share * n) * (b - share * n);
  const auto k = static_cast<double>(batches.size());
  const double standard_error = std::sqrt(k * squares / (k - 1)) / samples;
  return student_t_975(static_cast<int>(batches.size()) - 1) * standard_error;
}

}  // namespace

std::optional<value_interval> binomial_interval(const hdr::histogram& h,
                                                double percentile) noexcept {
  const std::int64_t n = h.total_count();
  if (n <= 0) return std::nullopt;
  const double q = std::clamp(percentile / 100.0, 0.0, 1.0);
  return rank_interval(h, percentile, z_975 * std::sqrt(q * (1 - q) / static_cast<double>(n)));
}

std::optional<value_interval> batch_means_interval(const hdr::histogram& h,
                                                   const interval_series& series,
                                                   double percentile) {
  const auto half = batch_share_half_width(h, series, percentile);
  if (!half) return std::nullopt;
  value_interval out = rank_interval(h, percentile, *half);
  out.unresolved = percentile / 100 - *half <= 0;
  return out;
}

percentile_ci percentile_interval(const hdr::histogram& h, const interval_series& series,
                                  double percentile) {
  const auto binomial = binomial_interval(h, percentile);
  if (!binomial) return {};
  percentile_ci out{binomial->lo, binomial->hi, method_binomial};
  const auto batch = batch_means_interval(h, series, percentile);
  if (!batch) return out;
  if (batch->width() > binomial->width())
    out = {batch->lo, batch->hi, method_batch_means, batch->unresolved};
  return out;
}

}  // namespace punctual::analysis
