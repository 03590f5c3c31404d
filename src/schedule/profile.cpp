#include "schedule/profile.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#if defined(__clang__)
#pragma STDC FP_CONTRACT OFF  // see exp_gap.cpp: fused operations would differ by CPU
#endif

namespace punctual::schedule {

rate_profile::rate_profile(const std::vector<stage>& stages, double start_rate_per_s) {
  segments_.reserve(stages.size() + 1);
  std::int64_t start = 0;
  double integral = 0;
  double rate = start_rate_per_s;
  for (const auto& s : stages) {
    const double seconds = static_cast<double>(s.length.count()) / 1e9;
    const double area = seconds * (rate + s.rate_per_s) * 0.5;
    segments_.push_back(segment{start, s.length.count(), integral, integral + area, rate,
                                (s.rate_per_s - rate) / seconds});
    start += s.length.count();
    integral += area;
    rate = s.rate_per_s;
  }
  // After the last stage the rate holds, so a --duration longer than the stages keeps going.
  const double tail_end = rate > 0 ? std::numeric_limits<double>::infinity() : integral;
  segments_.push_back(segment{start, max_window_ns, integral, tail_end, rate, 0.0});
}

std::int64_t rate_profile::time_of(double x, std::size_t& cursor) const noexcept {
  while (cursor < segments_.size() && !(x < segments_[cursor].integral_end)) ++cursor;
  if (cursor == segments_.size()) return -1;
  const segment& s = segments_[cursor];
  const double y = std::max(0.0, x - s.integral_start);
  // Solve rate_start * tau + slope / 2 * tau^2 = y for tau >= 0, in the form that does not
  // cancel: tau = 2y / (a + sqrt(a^2 + 2 slope y)).
  double tau = 0;
  if (y > 0) {
    const double a = s.rate_start;
    if (s.slope == 0) {
      tau = y / a;
    } else {
      const double disc = std::max(0.0, a * a + 2.0 * s.slope * y);
      tau = 2.0 * y / (a + std::sqrt(disc));
    }
  }
  // Snap values within 1e-4 ns below an integer up to it, so exact ties (i / rate a whole
  // number of ns) floor as the exact formula does despite rounding in the last bits.
  const double ns = std::floor(tau * 1e9 + 1e-4);
  const double capped = std::min(ns, static_cast<double>(s.length_ns));
  return s.start_ns + static_cast<std::int64_t>(capped);
}

double rate_profile::integral(std::int64_t t_ns) const noexcept {
  for (const auto& s : segments_) {
    if (t_ns - s.start_ns < s.length_ns || &s == &segments_.back()) {
      const double tau = static_cast<double>(std::max<std::int64_t>(0, t_ns - s.start_ns)) / 1e9;
      return s.integral_start + tau * (s.rate_start + 0.5 * s.slope * tau);
    }
  }
  return 0;
}

}  // namespace punctual::schedule
