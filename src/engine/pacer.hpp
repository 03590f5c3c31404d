// The pacer: how a worker waits for its next deadline in each precision mode, and what fine
// mode learns about its own wake-ups. It knows time, not sockets: the worker asks it for a plan
// (net::wait_plan) and its poller carries the plan out.
#pragma once

#include <array>
#include <chrono>

#include "engine/config.hpp"
#include "net/poller.hpp"

namespace punctual::engine {

using net::wait_plan;

class pacer {
 public:
  // A response waits unread for the next due wake-up only when that comes within this long.
  static constexpr nanoseconds harvest_horizon{1'000'000};
  // Coarse mode's wake-ups are this far apart (counted from the schedule's start).
  static constexpr nanoseconds coarse_tick{1'000'000};

  // `uneven_gaps`: the schedule's gaps vary (Poisson), so in fine mode every wait wakes early,
  // not only long ones (see the constructor's use in worker.cpp).
  pacer(precision_mode mode, bool uneven_gaps) noexcept : mode_(mode), uneven_gaps_(uneven_gaps) {}

  // Coarse mode's ticks are counted from the schedule's start.
  void set_origin(nanoseconds start) noexcept { origin_ = start; }

  // The plan for waiting from `now` until `wake_at` (>= now). `can_defer`: responses may wait
  // unread until `due` (they are dated by their receive stamps); when a codec, the model or a
  // request waiting on its socket refuses that, the wait is on the sockets.
  wait_plan plan(nanoseconds now, nanoseconds wake_at, bool can_defer) const noexcept;

  // A timed sleep of `slept` that was meant to end at `target` ended at `woke`: learn how late
  // wake-ups land after sleeps of that length.
  void learn(nanoseconds target, nanoseconds slept, nanoseconds woke) noexcept;

  // When a request due at `due` is sent if nothing holds the worker up: coarse mode's tick at or
  // after it, else `due`.
  nanoseconds send_instant(nanoseconds due) const noexcept {
    return mode_ == precision_mode::coarse ? coarse_tick_at(due) : due;
  }

  // The learnt lateness for a sleep of this length (fine mode's early wake-up).
  nanoseconds lateness(nanoseconds sleep) const noexcept;

 private:
  nanoseconds coarse_tick_at(nanoseconds at) const noexcept {
    return origin_ + (at - origin_ + coarse_tick - nanoseconds{1}) / coarse_tick * coarse_tick;
  }
  nanoseconds until_wake(nanoseconds now, nanoseconds wake_at) const noexcept;

  precision_mode mode_;
  bool uneven_gaps_;
  nanoseconds origin_{};
  // Typical lateness of a timed wake-up, by how long the sleep was.
  std::array<nanoseconds, 3> wake_lateness_{};
};

}  // namespace punctual::engine
