#include "engine/retry.hpp"

#include <algorithm>

#include "schedule/prng.hpp"

namespace punctual::engine {

nanoseconds backoff_delay(const retry_policy& policy, std::uint64_t request_index,
                          std::uint32_t retry) noexcept {
  if (retry == 0) return nanoseconds{0};
  // Doubling stops once it passes the cap, so a large retry count cannot overflow.
  nanoseconds ceiling = policy.backoff_base;
  for (std::uint32_t k = 1; k < retry && ceiling < policy.backoff_cap; ++k) ceiling *= 2;
  ceiling = std::min(ceiling, policy.backoff_cap);
  // Two SplitMix64 steps mix the seed, the index and the retry number into one uniform draw.
  std::uint64_t by_request = policy.seed ^ (request_index * 0x9e3779b97f4a7c15ULL);
  std::uint64_t by_retry = schedule::splitmix64(by_request) ^ retry;
  const double unit = static_cast<double>(schedule::splitmix64(by_retry) >> 11) * 0x1.0p-53;
  return nanoseconds{static_cast<std::int64_t>(unit * static_cast<double>(ceiling.count() + 1))};
}

}  // namespace punctual::engine
