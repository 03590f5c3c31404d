// Parsers and the one-line description of the retry policy (--retries, --retry-on,
// --retry-backoff, --retry-budget, --attempt-timeout). The try_ variants are noexcept and are
// what the fuzzer drives.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "run/config.hpp"
#include "run/describe.hpp"  // describe(policy), the policy in words

namespace punctual::cli {

struct backoff_range {
  std::chrono::nanoseconds base{};
  std::chrono::nanoseconds cap{};
};

// "5xx,429,timeout,reset,connect" (any non-empty subset, no repeats): a bit per retry_cause.
std::optional<std::uint32_t> try_parse_retry_on(std::string_view text) noexcept;
// "exp:50ms..2s": base > 0, cap >= base.
std::optional<backoff_range> try_parse_backoff(std::string_view text) noexcept;
// "10%", "2.5%": a share in (0, 1], returned as a fraction.
std::optional<double> try_parse_percent(std::string_view text) noexcept;

struct retry_texts {
  std::uint32_t retries = 0;
  std::string on;               // empty: 5xx,429,reset,connect
  std::string backoff;          // empty: exp:50ms..2s
  std::string budget;           // empty: no budget
  std::string attempt_timeout;  // empty: none
};

// Checks the texts against each other and the chain's --timeout; throws usage_error.
run::retry_policy build_retry_policy(const retry_texts& t, std::chrono::nanoseconds timeout,
                                     std::uint64_t seed, bool open_model);

// "up to 3 retries on 5xx,reset after exp backoff 50ms..2s with full jitter, budget 10%"

}  // namespace punctual::cli
