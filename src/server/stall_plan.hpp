// The stall windows of a server run, as pure arithmetic on offsets from server start.
// Overlapping or touching windows behave as one: a response released at the end of one window
// that falls inside the next is held until that one ends too.
#pragma once

#include <chrono>
#include <optional>
#include <vector>

#include "server/server_config.hpp"

namespace punctual::server {

class stall_plan {
 public:
  stall_plan() = default;
  // Throws std::invalid_argument when a periodic stall is not 0 < length < period, or an
  // explicit window has a negative start or a non-positive length.
  stall_plan(std::chrono::nanoseconds length, std::chrono::nanoseconds period,
             std::vector<stall_window> explicit_windows);
  static stall_plan from_config(const server_config& config);

  bool empty() const { return period_.count() == 0 && explicit_.empty(); }

  // The first (merged) window that ends after t: either the one containing t or the next one.
  std::optional<stall_window> next_stall_after(std::chrono::nanoseconds t) const;
  // The merged window containing t, if any.
  std::optional<stall_window> window_containing(std::chrono::nanoseconds t) const;
  // When a response due at `due` can go out: `due` itself, or the end of the stall holding it.
  std::chrono::nanoseconds release_time(std::chrono::nanoseconds due) const;

 private:
  std::optional<stall_window> raw_after(std::chrono::nanoseconds t) const;
  std::chrono::nanoseconds extend_start(std::chrono::nanoseconds start) const;
  std::chrono::nanoseconds extend_end(std::chrono::nanoseconds end) const;

  std::chrono::nanoseconds length_{0};
  std::chrono::nanoseconds period_{0};
  std::vector<stall_window> explicit_;  // sorted, merged, disjoint
};

}  // namespace punctual::server
