#include "analysis/attribution.hpp"

#include <algorithm>

namespace punctual::analysis {

double send_lag_allowance(double rt_ns) noexcept {
  constexpr double floor_ns = 1e6;
  constexpr double share = 0.10;
  return std::max(floor_ns, share * rt_ns);
}

attribution attribute(const record::second_views& s, const connection_holders* holders) noexcept {
  using record::component;
  const auto p99 = [&](component c) { return static_cast<double>(s[c].value_at_percentile(99)); };
  attribution a;
  a.send_lag_p99_ns = p99(component::send_lag);
  a.send_lag_allowance_ns =
      send_lag_allowance(static_cast<double>(s.response_time.value_at_percentile(99)));
  const bool generator_late = a.send_lag_p99_ns > a.send_lag_allowance_ns;
  // A late generator is also late to read the responses that free its connections, so the
  // queue wait beside it is its doing too (a starved worker shows both at ~200 ms, in either
  // order): then queue wait counts for the generator, not as queueing of its own.
  const auto weight = [&](component c) {
    if (generator_late && c == component::send_lag)
      return std::max(p99(c), p99(component::queue_wait));
    if (generator_late && c == component::queue_wait) return 0.0;
    return p99(c);
  };
  // Ties go to the earlier component in this order: the server first.
  constexpr component order[] = {component::service_time, component::queue_wait,
                                 component::connect_time, component::send_lag};
  for (const component c : order) {
    if (c == component::send_lag && !generator_late) continue;
    if (weight(c) > weight(a.component)) a.component = c;
  }
  a.cause = record::component_causes[static_cast<std::size_t>(a.component)];
  // Half the queueing is enough: a stall that began before the second held its connections for
  // part of it only.
  if (a.component == component::queue_wait && holders && !holders->too_few_for_load &&
      holders->longest_service_ns >= 0.5 * p99(component::queue_wait)) {
    a.held_by_server = true;
    a.cause = record::component_causes[static_cast<std::size_t>(component::service_time)];
  }
  return a;
}

}  // namespace punctual::analysis
