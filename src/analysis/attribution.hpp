// Why the worst second was worst: the component of the response time with the largest p99
// names the cause. The generator's own lateness (send lag) is named only when it is more than
// the validity rules allow the run (the larger of 1 ms and 10% of the response time at that
// percentile): below that it is the noise of any generator, and the server's or the queue's
// share, however small, says more.
#pragma once

#include <string_view>

#include "record/intended_seconds.hpp"

namespace punctual::analysis {

struct attribution {
  record::component component = record::component::service_time;
  std::string_view cause;  // in words: "server", "the generator", ...
  double send_lag_p99_ns = 0;
  double send_lag_allowance_ns = 0;  // above this the generator is named
};

attribution attribute(const record::second_views& s) noexcept;

// The allowance the validity rules give send lag at a percentile whose response time is rt_ns.
double send_lag_allowance(double rt_ns) noexcept;

}  // namespace punctual::analysis
