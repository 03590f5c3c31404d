#include "analysis/send_gaps.hpp"

#include <algorithm>
#include <cmath>
#include <numbers>
#include <vector>

#include "punctual/histogram/iteration.hpp"

namespace punctual::analysis {
namespace {

// Series stop once a term no longer changes the sum in double precision.
constexpr double series_epsilon = 1e-17;
// Bound on the lower series; it needs ~ a few sqrt(shape) terms since y < shape there.
constexpr int max_series_terms = 1'000'000;

// ln(n!). std::lgamma writes the global signgam (not thread-safe under glibc), so sum logs for
// small n and use Stirling's series beyond, where its next term is below 1e-17.
double log_factorial(std::uint32_t n) noexcept {
  if (n < 128) {
    double sum = 0;
    for (std::uint32_t k = 2; k <= n; ++k) sum += std::log(static_cast<double>(k));
    return sum;
  }
  const double z = static_cast<double>(n) + 1;  // ln(n!) = lgamma(n + 1)
  const double z2 = z * z;
  return (z - 0.5) * std::log(z) - z + 0.5 * std::log(2 * std::numbers::pi) +
         1 / (12 * z) * (1 - 1 / (30 * z2) * (1 - 2 / (7 * z2)));
}

// P(shape, y) for y < shape: e^-y y^s / s! * sum_n y^n / ((s+1)...(s+n)). Every term is positive
// and the ratio y / (s+n) < 1, so small values keep their relative precision (no 1 - Q).
double lower_series(std::uint32_t shape, double y) noexcept {
  const double s = shape;
  double term = 1;
  double sum = 1;
  for (int n = 1; n < max_series_terms; ++n) {
    term *= y / (s + n);
    sum += term;
    if (term < sum * series_epsilon) break;
  }
  const double log_lead = -y + s * std::log(y) - log_factorial(shape);
  return std::exp(log_lead) * sum;
}

// Q(shape, y) for y >= shape: sum_{k<s} e^-y y^k / k!, summed from the largest term k = s-1
// down (each step multiplies by k / y < 1), so neither y^k nor e^-y is formed on its own.
double upper_sum(std::uint32_t shape, double y) noexcept {
  const double log_top = -y + (shape - 1.0) * std::log(y) - log_factorial(shape - 1);
  double term = 1;
  double sum = 1;
  for (std::uint32_t k = shape - 1; k >= 1; --k) {
    term *= k / y;
    sum += term;
    if (term < sum * series_epsilon) break;
  }
  return std::exp(log_top) * sum;
}

}  // namespace

double erlang_cdf(std::uint32_t shape, double rate_per_ns, double x_ns) noexcept {
  if (!(x_ns > 0) || !(rate_per_ns > 0)) return 0;
  if (shape == 0) return 1;
  const double y = rate_per_ns * x_ns;
  if (std::isinf(y)) return 1;
  const double f = y < shape ? lower_series(shape, y) : 1 - upper_sum(shape, y);
  return std::clamp(f, 0.0, 1.0);
}

gap_fit fit_erlang(const hdr::histogram& gaps, std::uint32_t shape, double rate_per_s) {
  gap_fit fit;
  const std::int64_t n = gaps.total_count();
  if (n <= 0) return fit;
  fit.samples = static_cast<std::uint64_t>(n);
  const double rate_per_ns = rate_per_s / 1e9;
  const double total = static_cast<double>(n);
  for (const hdr::iteration_step& step : hdr::recorded_value_steps(gaps)) {
    const std::int64_t hi = step.value_iterated_to;
    const std::int64_t lo = gaps.lowest_equivalent_value(hi);
    const double f_lo = erlang_cdf(shape, rate_per_ns, static_cast<double>(lo));
    const double f_hi = erlang_cdf(shape, rate_per_ns, static_cast<double>(hi));
    const std::int64_t before = step.total_count_to_this_value - step.count_added_in_this_step;
    // Just below lo the empirical CDF is before/n; at hi it is after/n: both exact.
    const double emp_before = static_cast<double>(before) / total;
    const double emp_after = static_cast<double>(step.total_count_to_this_value) / total;
    fit.ks_distance =
        std::max({fit.ks_distance, std::abs(f_lo - emp_before), std::abs(f_hi - emp_after)});
    fit.bucket_slack = std::max(fit.bucket_slack, f_hi - f_lo);
  }
  return fit;
}

double poisson_ks_threshold(std::uint64_t samples) noexcept {
  const double n = samples > 0 ? static_cast<double>(samples) : 1.0;
  return poisson_ks_effect + poisson_ks_critical / std::sqrt(n);
}

}  // namespace punctual::analysis
