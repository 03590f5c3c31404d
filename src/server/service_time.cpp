#include "server/service_time.hpp"

#include <cmath>

namespace punctual::server {

service_sampler::service_sampler(const server_config& config, std::uint64_t stream)
    : mean_(config.service_time),
      exponential_(config.service == service_distribution::exponential),
      rng_(config.seed + stream * 0x9e3779b97f4a7c15ULL) {}

std::chrono::nanoseconds service_sampler::next() {
  if (!exponential_ || mean_.count() == 0) return mean_;
  // Inverse CDF; 1 - u is in (0, 1], so the log is finite.
  const double draw = -static_cast<double>(mean_.count()) * std::log(1.0 - rng_.next_unit());
  return std::chrono::nanoseconds{static_cast<std::int64_t>(std::llround(draw))};
}

}  // namespace punctual::server
