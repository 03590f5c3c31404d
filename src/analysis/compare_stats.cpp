#include "analysis/compare_stats.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include "record/view_set.hpp"
#include "schedule/prng.hpp"

namespace punctual::analysis {
namespace {

using slot_list = std::vector<std::pair<std::int32_t, std::int64_t>>;

// A run too long for every interval to be its own unit is grouped into at most this many units
// of consecutive intervals, so that memory and time stay bounded (units × distinct slots).
constexpr std::size_t max_units = 256;

// Consecutive rows summed into units of `group` rows each.
std::vector<slot_list> units_of(const std::vector<slot_list>& rows, std::size_t group) {
  std::vector<slot_list> units((rows.size() + group - 1) / group);
  for (std::size_t r = 0; r < rows.size(); ++r) {
    slot_list& u = units[r / group];
    u.insert(u.end(), rows[r].begin(), rows[r].end());
  }
  for (auto& u : units) {
    std::sort(u.begin(), u.end());
    slot_list merged;
    for (const auto& [index, count] : u) {
      if (!merged.empty() && merged.back().first == index) {
        merged.back().second += count;
      } else {
        merged.emplace_back(index, count);
      }
    }
    u = std::move(merged);
  }
  return units;
}

// Which units a resample takes, as a count per unit: circular blocks of `block` units with
// uniform starts, until as many units as the run has are taken.
void draw_multiplicities(schedule::xoshiro256ss& rng, std::size_t units, std::size_t block,
                         std::vector<std::int64_t>& times) {
  std::fill(times.begin(), times.end(), 0);
  std::size_t taken = 0;
  while (taken < units) {
    const auto start = static_cast<std::size_t>(rng.next() % units);
    for (std::size_t k = 0; k < block && taken < units; ++k, ++taken) ++times[(start + k) % units];
  }
}

std::size_t block_length(std::size_t units) {
  return std::max<std::size_t>(
      1, static_cast<std::size_t>(std::lround(std::cbrt(static_cast<double>(units)))));
}

int blocks_per_resample(std::size_t units, std::size_t block) {
  return static_cast<int>((units + block - 1) / block);
}

// HdrHistogram's rank for a percentile (valueAtPercentile: one ulp below p, then the ceiling).
std::int64_t rank_of(double percentile, std::int64_t total) {
  const double q =
      std::clamp(std::nextafter(percentile, -std::numeric_limits<double>::infinity()), 0.0, 100.0);
  return std::max<std::int64_t>(
      1, static_cast<std::int64_t>(std::ceil(q * static_cast<double>(total) / 100.0)));
}

double variance_of(const std::vector<double>& xs) {
  if (xs.size() < 2) return 0;
  const double mean = std::accumulate(xs.begin(), xs.end(), 0.0) / static_cast<double>(xs.size());
  double sum = 0;
  for (const double x : xs) sum += (x - mean) * (x - mean);
  return sum / static_cast<double>(xs.size() - 1);
}

// The bootstrap's variance of a statistic of B resamples, scaled by blocks / (blocks − 1): with
// few blocks, a resample of the blocks varies less than a new run would (Bessel's correction,
// with the block as the unit).
run_estimate estimate_of(double point, const std::vector<double>& draws, int blocks) {
  run_estimate e;
  e.point = point;
  if (blocks < 2) return e;
  e.blocks = blocks;
  e.variance = variance_of(draws) * blocks / (blocks - 1.0);
  return e;
}

// Continued fraction for the regularized incomplete beta function (modified Lentz).
double beta_fraction(double a, double b, double x) {
  constexpr double tiny = 1e-300;
  double c = 1;
  double d = 1 - (a + b) * x / (a + 1);
  d = 1 / (std::fabs(d) < tiny ? tiny : d);
  double f = d;
  for (int m = 1; m <= 300; ++m) {
    const double m2 = 2.0 * m;
    double num = m * (b - m) * x / ((a + m2 - 1) * (a + m2));
    d = 1 + num * d;
    d = 1 / (std::fabs(d) < tiny ? tiny : d);
    c = 1 + num / c;
    c = std::fabs(c) < tiny ? tiny : c;
    f *= d * c;
    num = -(a + m) * (a + b + m) * x / ((a + m2) * (a + m2 + 1));
    d = 1 + num * d;
    d = 1 / (std::fabs(d) < tiny ? tiny : d);
    c = 1 + num / c;
    c = std::fabs(c) < tiny ? tiny : c;
    const double step = d * c;
    f *= step;
    if (std::fabs(step - 1) < 1e-14) break;
  }
  return f;
}

double incomplete_beta(double a, double b, double x) {
  if (x <= 0) return 0;
  if (x >= 1) return 1;
  const double front = std::exp(std::lgamma(a + b) - std::lgamma(a) - std::lgamma(b) +
                                a * std::log(x) + b * std::log1p(-x));
  if (x < (a + 1) / (a + b + 2)) return front * beta_fraction(a, b, x) / a;
  return 1 - front * beta_fraction(b, a, 1 - x) / b;
}

}  // namespace

void interval_stream::add(std::int64_t row, const hdr::histogram& h) {
  if (rows_.empty()) first_row_ = row;
  if (row < first_row_) {
    rows_.insert(rows_.begin(), static_cast<std::size_t>(first_row_ - row), {});
    first_row_ = row;
  }
  const auto at = static_cast<std::size_t>(row - first_row_);
  if (at >= rows_.size()) rows_.resize(at + 1);
  if (h.total_count() == 0) return;
  slot_list& slots = rows_[at];
  // Only the slots between the lowest and highest sample: the rest of the layout was never
  // written, and reading it would fault in a zero page for every 4 KB of it.
  const std::int32_t last = h.index_of(h.max());
  for (std::int32_t i = h.index_of(h.min()); i <= last; ++i) {
    if (h.count_at_index(i) > 0) slots.emplace_back(i, h.count_at_index(i));
  }
}

std::int64_t interval_stream::total_count() const noexcept {
  std::int64_t n = 0;
  for (const auto& row : rows_) {
    for (const auto& slot : row) n += slot.second;
  }
  return n;
}

std::vector<run_estimate> bootstrap_percentiles(const interval_stream& stream,
                                                std::span<const double> percentiles,
                                                std::uint64_t seed, int resamples) {
  const auto& rows = stream.rows();
  const std::size_t group = (rows.size() + max_units - 1) / std::max<std::size_t>(max_units, 1);
  const std::vector<slot_list> units = units_of(rows, std::max<std::size_t>(group, 1));
  // Cumulative counts of each unit over the slots any unit uses (a few thousand at most).
  std::vector<std::int32_t> slots;
  for (const auto& u : units) {
    for (const auto& s : u) slots.push_back(s.first);
  }
  std::sort(slots.begin(), slots.end());
  slots.erase(std::unique(slots.begin(), slots.end()), slots.end());
  const std::size_t width = slots.size();
  std::vector<std::int64_t> cumulative(units.size() * width, 0);
  for (std::size_t u = 0; u < units.size(); ++u) {
    std::int64_t* row = &cumulative[u * width];
    for (const auto& [index, count] : units[u]) {
      row[static_cast<std::size_t>(std::lower_bound(slots.begin(), slots.end(), index) -
                                   slots.begin())] += count;
    }
    std::partial_sum(row, row + width, row);
  }
  const hdr::histogram layout(record::latency_params());
  const auto value_at = [&](std::size_t slot) {
    return static_cast<double>(
        layout.highest_equivalent_value(layout.value_from_index(slots[slot])));
  };
  // The value at `percentile` when unit u is taken times[u] times.
  const auto percentile_of = [&](const std::vector<std::int64_t>& times, double percentile) {
    std::int64_t total = 0;
    for (std::size_t u = 0; u < units.size(); ++u)
      total += times[u] * cumulative[u * width + width - 1];
    if (total == 0) return 0.0;
    const std::int64_t rank = rank_of(percentile, total);
    std::size_t lo = 0;
    std::size_t hi = width - 1;
    while (lo < hi) {  // the first slot whose cumulative count reaches the rank
      const std::size_t mid = (lo + hi) / 2;
      std::int64_t below = 0;
      for (std::size_t u = 0; u < units.size(); ++u)
        below += times[u] * cumulative[u * width + mid];
      if (below >= rank) {
        hi = mid;
      } else {
        lo = mid + 1;
      }
    }
    return value_at(lo);
  };
  std::vector<std::int64_t> times(units.size(), 1);
  std::vector<run_estimate> out;
  std::vector<double> points;
  for (const double p : percentiles) points.push_back(width == 0 ? 0.0 : percentile_of(times, p));
  const std::size_t block = block_length(units.size());
  const int blocks =
      rows.size() >= compare_min_intervals ? blocks_per_resample(units.size(), block) : 0;
  std::vector<std::vector<double>> draws(percentiles.size());
  if (blocks >= 2 && width > 0) {
    schedule::xoshiro256ss rng(seed);
    for (int b = 0; b < resamples; ++b) {
      draw_multiplicities(rng, units.size(), block, times);
      for (std::size_t k = 0; k < percentiles.size(); ++k)
        draws[k].push_back(percentile_of(times, percentiles[k]));
    }
  }
  for (std::size_t k = 0; k < percentiles.size(); ++k)
    out.push_back(estimate_of(points[k], draws[k], width > 0 ? blocks : 0));
  return out;
}

run_estimate bootstrap_share(std::span<const std::pair<std::int64_t, std::int64_t>> errors_totals,
                             std::uint64_t seed, int resamples) {
  const std::size_t n = errors_totals.size();
  std::int64_t errors = 0;
  std::int64_t total = 0;
  for (const auto& [e, t] : errors_totals) {
    errors += e;
    total += t;
  }
  const double point = total > 0 ? static_cast<double>(errors) / static_cast<double>(total) : 0;
  const std::size_t block = block_length(n);
  const int blocks = n >= compare_min_intervals ? blocks_per_resample(n, block) : 0;
  std::vector<double> draws;
  if (blocks >= 2) {
    schedule::xoshiro256ss rng(seed);
    std::vector<std::int64_t> times(n, 0);
    for (int b = 0; b < resamples; ++b) {
      draw_multiplicities(rng, n, block, times);
      std::int64_t e = 0;
      std::int64_t t = 0;
      for (std::size_t u = 0; u < n; ++u) {
        e += times[u] * errors_totals[u].first;
        t += times[u] * errors_totals[u].second;
      }
      draws.push_back(t > 0 ? static_cast<double>(e) / static_cast<double>(t) : 0.0);
    }
  }
  return estimate_of(point, draws, blocks);
}

double student_t_upper_tail(double t, double df) noexcept {
  if (!(df > 0)) df = 1;
  const double x = df / (df + t * t);
  const double half_tail = 0.5 * incomplete_beta(df / 2, 0.5, x);
  return t >= 0 ? half_tail : 1 - half_tail;
}

double student_t_quantile(double confidence, double df) noexcept {
  const double tail = (1 - confidence) / 2;
  double lo = 0;
  double hi = 1e3;
  for (int i = 0; i < 200; ++i) {
    const double mid = (lo + hi) / 2;
    (student_t_upper_tail(mid, df) > tail ? lo : hi) = mid;
  }
  return (lo + hi) / 2;
}

double contrast::settle_factor() const noexcept {
  if (lo > 0 || hi < 0) return 0;
  if (point == 0) return std::numeric_limits<double>::infinity();
  const double needed = (hi - lo) / 2 / std::fabs(point);
  return needed * needed;
}

double contrast::p_above_zero() const noexcept {
  if (se <= 0) return point > 0 ? 0.0 : 1.0;
  return student_t_upper_tail(point / se, df);
}

double contrast::p_below_zero() const noexcept {
  if (se <= 0) return point < 0 ? 0.0 : 1.0;
  return student_t_upper_tail(-point / se, df);
}

std::optional<contrast> contrast_of(const run_estimate& base, const run_estimate& candidate,
                                    double scale, double offset) {
  if (!base.usable() || !candidate.usable()) return std::nullopt;
  contrast c;
  c.point = candidate.point - scale * base.point - offset;
  const double vb = scale * scale * base.variance;
  const double vc = candidate.variance;
  c.se = std::sqrt(vb + vc);
  const double denominator = vb * vb / (base.blocks - 1) + vc * vc / (candidate.blocks - 1);
  c.df = denominator > 0 ? (vb + vc) * (vb + vc) / denominator
                         : std::min(base.blocks, candidate.blocks) - 1.0;
  const double half = student_t_quantile(compare_confidence, c.df) * c.se;
  c.lo = c.point - half;
  c.hi = c.point + half;
  return c;
}

std::vector<double> holm_adjust(std::span<const double> p) {
  std::vector<std::size_t> order(p.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](auto a, auto b) { return p[a] < p[b]; });
  std::vector<double> adjusted(p.size());
  double running = 0;
  for (std::size_t k = 0; k < order.size(); ++k) {
    const double scaled = std::min(1.0, static_cast<double>(p.size() - k) * p[order[k]]);
    running = std::max(running, scaled);
    adjusted[order[k]] = running;
  }
  return adjusted;
}

}  // namespace punctual::analysis
