// A piecewise-linear rate r(t) and the inverse of its integral L(t) = integral of r from 0 to t:
// constant arrivals under stages put request i where L first exceeds i, and Poisson arrivals are
// a unit-rate process in "integrated rate" space mapped back through L^-1 (time rescaling).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "schedule/plan.hpp"

namespace punctual::schedule {

// Computed in double with only IEEE basic operations and sqrt (all correctly rounded), so the
// result is the same on every machine; it is within 1 ns of the exact real-number value.
class rate_profile {
 public:
  rate_profile(const std::vector<stage>& stages, double start_rate_per_s);

  // The time (ns from 0) at which L first exceeds `x` (for x = 0 and a rate > 0 at t = 0, that
  // is t = 0). Returns -1 if L never exceeds x (the rate ends at 0). `cursor` remembers the
  // segment reached: callers pass increasing x, and the walk never goes back.
  std::int64_t time_of(double x, std::size_t& cursor) const noexcept;

  // L(t) in requests, for counts and checks.
  double integral(std::int64_t t_ns) const noexcept;

 private:
  struct segment {
    std::int64_t start_ns;
    std::int64_t length_ns;  // the open-ended tail after the last stage: max_window_ns
    double integral_start;   // L(start)
    double integral_end;     // L(end); +inf for a tail with a positive rate
    double rate_start;       // req/s
    double slope;            // req/s per s
  };
  std::vector<segment> segments_;
};

}  // namespace punctual::schedule
