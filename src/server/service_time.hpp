// Service-time draws for the test server: fixed, or exponential with a given mean from a
// seeded xoshiro256** (seeded through SplitMix64), so a seed reproduces the same delays.
#pragma once

#include <array>
#include <chrono>
#include <cstdint>

#include "schedule/prng.hpp"
#include "server/server_config.hpp"

namespace punctual::server {

// The schedule's generator: one documented PRNG for the whole project.
using schedule::xoshiro256ss;

class service_sampler {
 public:
  // `stream` separates the draws of each server thread.
  service_sampler(const server_config& config, std::uint64_t stream);
  std::chrono::nanoseconds next();

 private:
  std::chrono::nanoseconds mean_;
  bool exponential_;
  xoshiro256ss rng_;
};

}  // namespace punctual::server
