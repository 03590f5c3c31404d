// Draws each request's fault for one server thread (see fault.hpp).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "server/fault.hpp"
#include "server/service_time.hpp"

namespace punctual::server {

struct fault_choice {
  fault_kind kind = fault_kind::none;
  std::size_t reset_after_bytes = 0;
};

// Draws the fault of each request. Cumulative thresholds live in a fixed array, so a draw
// neither allocates nor touches shared memory.
class fault_picker {
 public:
  // `stream` separates the draws of each server thread.
  fault_picker(const std::vector<fault_spec>& faults, std::uint64_t seed, std::uint64_t stream);
  fault_choice next();

 private:
  struct threshold {
    double below = 0;  // a uniform draw under this (and over the previous) picks `choice`
    fault_choice choice;
  };
  std::array<threshold, fault_kind_count> thresholds_{};
  std::size_t count_ = 0;
  xoshiro256ss rng_;
};

// Draws each accepted connection's fault for one server thread.
class connection_fault_picker {
 public:
  connection_fault_picker(const std::vector<connection_fault_spec>& faults, std::uint64_t seed,
                          std::uint64_t stream);
  connection_fault next();

 private:
  double banner_below_ = 0;
  double reset_below_ = 0;
  xoshiro256ss rng_;
};

}  // namespace punctual::server
