// Retries as a policy (run::retry_policy): the backoff before each retry and the budget that
// caps how many there are.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdint>

#include "engine/config.hpp"
#include "record/outcome.hpp"

namespace punctual::engine {

using nanoseconds = std::chrono::nanoseconds;

// Full jitter (AWS Architecture Blog, "Exponential Backoff And Jitter"): retry k (1-based) waits
// a uniform draw from [0, min(cap, base * 2^(k-1))]. The draw is a pure function of the seed,
// the request's index in the schedule and k, so it is the same whatever -t is.
nanoseconds backoff_delay(const retry_policy& policy, std::uint64_t request_index,
                          std::uint32_t retry) noexcept;

// A token bucket that caps retries at a share of first attempts (AWS Builders' Library,
// "Timeouts, retries and backoff with jitter"). Each first attempt deposits `budget` tokens, a
// retry takes one. It starts empty, so retries never exceed budget x first attempts; it holds at
// most `burst` tokens, so a quiet hour does not save up an unbounded storm.
class retry_budget {
 public:
  static constexpr std::int64_t burst = 10;

  // Tokens are counted in millionths, so 10 deposits of 10% make exactly one retry.
  explicit retry_budget(double budget) noexcept
      : deposit_(budget < 0 ? -1 : static_cast<std::int64_t>(budget * unit + 0.5)) {}
  bool limited() const noexcept { return deposit_ >= 0; }
  void on_first_attempt() noexcept {
    if (limited()) tokens_ = std::min(tokens_ + deposit_, burst * unit);
  }
  bool try_take() noexcept {
    if (!limited()) return true;
    if (tokens_ < unit) return false;
    tokens_ -= unit;
    return true;
  }

 private:
  static constexpr std::int64_t unit = 1'000'000;
  std::int64_t deposit_;
  std::int64_t tokens_ = 0;
};

}  // namespace punctual::engine
