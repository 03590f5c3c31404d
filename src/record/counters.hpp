// Per-worker counts. Each worker owns one; they are added together only at the end.
#pragma once

#include <array>
#include <cstdint>

#include "record/outcome.hpp"

namespace punctual::record {

struct counters {
  std::uint64_t planned = 0;
  std::array<std::uint64_t, outcome_count> outcomes{};
  std::array<std::uint64_t, socket_reason_count> socket_errors{};
  std::array<std::uint64_t, 600> status{};  // indexed by HTTP status code
  std::uint64_t censored = 0;               // timeouts + unfinished
  std::uint64_t sent_in_window = 0;
  std::uint64_t completed_in_window = 0;
  std::uint64_t bytes_sent = 0;
  std::uint64_t bytes_received = 0;
  std::uint64_t reconnects = 0;

  std::uint64_t outcome_total() const noexcept {
    std::uint64_t sum = 0;
    for (const auto n : outcomes) sum += n;
    return sum;
  }
  void add(const counters& other) noexcept;
};

}  // namespace punctual::record
