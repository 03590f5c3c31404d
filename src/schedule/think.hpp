// Think times of the hybrid model: how long a user waits after a step before the next one. A
// draw is keyed by (seed, think, user, step), so it never depends on which thread runs the user
// or on what was drawn before (docs/scenario.md).
#pragma once

#include <chrono>
#include <cmath>
#include <cstdint>

#include "schedule/prng.hpp"

namespace punctual::schedule {

struct think_time {
  enum class kind : std::uint8_t { fixed, uniform, exponential };
  kind shape = kind::fixed;
  std::chrono::nanoseconds a{};  // fixed: the time; uniform: the low end; exponential: the mean
  std::chrono::nanoseconds b{};  // uniform: the high end
};

// One key word from a user index and a step position (steps are fewer than 2^16).
constexpr std::uint64_t user_step_key(std::uint64_t user, std::uint32_t step) noexcept {
  return (user << 16) ^ step;
}

inline std::chrono::nanoseconds draw_think(const think_time& t, std::uint64_t seed,
                                           std::uint64_t user, std::uint32_t step) noexcept {
  if (t.shape == think_time::kind::fixed) return t.a;
  const double u = keyed_unit(seed, draw_purpose::think, user_step_key(user, step));
  const double a = static_cast<double>(t.a.count());
  if (t.shape == think_time::kind::uniform) {
    return std::chrono::nanoseconds{
        static_cast<std::int64_t>(a + u * static_cast<double>((t.b - t.a).count()))};
  }
  // Inverse CDF; 1 - u is never 0 (keyed_unit is below 1).
  return std::chrono::nanoseconds{static_cast<std::int64_t>(std::llround(-a * std::log(1.0 - u)))};
}

}  // namespace punctual::schedule
