// Why the worst second was worst: the component of the response time with the largest p99
// names the cause. The generator's own lateness (send lag) is named only when it is more than
// the validity rules allow the run (the larger of 1 ms and 10% of the response time at that
// percentile): below that it is the noise of any generator, and the server's or the queue's
// share, however small, says more.
#pragma once

#include <string_view>

#include "record/intended_seconds.hpp"

namespace punctual::analysis {

// What held the connections that requests queued behind, when queue wait was the largest part.
// Connections too few for the planned load queue requests by the generator's own doing; enough
// of them, all held by responses that took about as long as the queueing, queue them by the
// server's.
struct connection_holders {
  std::uint32_t connections = 0;  // connection slots (-c, times streams over HTTP/2)
  double longest_service_ns = 0;  // the run's longest service time
  bool too_few_for_load = false;  // the validity's connection check failed
};

struct attribution {
  record::component component = record::component::service_time;
  std::string_view cause;  // in words: "server", "the generator", ...
  // Queue wait was the largest part, but the server held every connection meanwhile: the
  // cause is the server (and `cause` says so).
  bool held_by_server = false;
  double send_lag_p99_ns = 0;
  double send_lag_allowance_ns = 0;  // above this the generator is named
};

attribution attribute(const record::second_views& s,
                      const connection_holders* holders = nullptr) noexcept;

// The allowance the validity rules give send lag at a percentile whose response time is rt_ns.
double send_lag_allowance(double rt_ns) noexcept;

}  // namespace punctual::analysis
