#include "server/service_time.hpp"

#include <cmath>

namespace punctual::server {

namespace {

std::uint64_t splitmix64(std::uint64_t& state) {
  std::uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

std::uint64_t rotl(std::uint64_t x, int k) {
  return (x << k) | (x >> (64 - k));
}

}  // namespace

xoshiro256ss::xoshiro256ss(std::uint64_t seed) {
  std::uint64_t state = seed;
  for (auto& word : s_) word = splitmix64(state);
}

std::uint64_t xoshiro256ss::next() {
  const std::uint64_t result = rotl(s_[1] * 5, 7) * 9;
  const std::uint64_t t = s_[1] << 17;
  s_[2] ^= s_[0];
  s_[3] ^= s_[1];
  s_[1] ^= s_[2];
  s_[0] ^= s_[3];
  s_[2] ^= t;
  s_[3] = rotl(s_[3], 45);
  return result;
}

double xoshiro256ss::next_unit() {
  return static_cast<double>(next() >> 11) * 0x1.0p-53;
}

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
