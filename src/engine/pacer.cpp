#include "engine/pacer.hpp"

#include <algorithm>

namespace punctual::engine {
namespace {

// In spin mode the thread sleeps until this long before a deadline, then polls. Wake-ups here
// land ~60 us late at p50 and ~125 us at p99, but ~1.4 ms at p99.9 (docs/design.md): a shorter
// margin leaves that tail in the send lag. Above ~500 req/s per worker this means always spinning.
constexpr nanoseconds spin_margin{2'000'000};
// Waits longer than this (the start of a schedule, idle gaps of runs below 100 req/s) are split.
constexpr nanoseconds long_wait{10'000'000};
// Below this, waiting for a deadline by polling costs less CPU than a sleep, and lands on time
// instead of a wake-up's lateness late (both in docs/design.md, "Host measurements").
constexpr nanoseconds spin_below{30'000};
// Fine mode wakes early (by the learnt lateness) only for waits at least this long.
constexpr nanoseconds early_wake_above{200'000};
constexpr nanoseconds max_early_wake{150'000};
constexpr nanoseconds lateness_step{1'000};

// The wake-up lateness class of a sleep: within the host's halt polling, up to 1 ms, longer.
std::size_t lateness_class(nanoseconds sleep) noexcept {
  return sleep < nanoseconds{200'000} ? 0 : sleep < nanoseconds{1'000'000} ? 1 : 2;
}

}  // namespace

nanoseconds pacer::until_wake(nanoseconds now, nanoseconds wake_at) const noexcept {
  const nanoseconds delta = wake_at - now;
  // After a long sleep the first wake-up lands milliseconds late (docs/design.md, "Host
  // measurements"): wake spin_margin early and plan the rest again from there.
  if (mode_ != precision_mode::spin && delta > long_wait) return delta - spin_margin;
  switch (mode_) {
    case precision_mode::spin:
      return delta > spin_margin ? delta - spin_margin : nanoseconds{0};
    case precision_mode::coarse: {
      if (delta.count() == 0) return delta;
      return std::max(coarse_tick_at(wake_at) - now, nanoseconds{0});
    }
    case precision_mode::fine:
      break;
  }
  return delta;
}

nanoseconds pacer::lateness(nanoseconds sleep) const noexcept {
  return wake_lateness_[lateness_class(sleep)];
}

// Fine mode: a wake-up lands tens of microseconds late (later after a longer sleep), so for a long
// enough wait the thread sets its timer that much early and spins the rest. Same sleeps, sends on
// time. With even gaps, shorter waits keep the late wake-up, which sends the next request too:
// spinning through them would cost a core. Responses need no wake-up of their own: when something
// is due within the horizon and they may wait, the thread sleeps on its timer alone and collects
// whatever arrived without sleeping again.
wait_plan pacer::plan(nanoseconds now, nanoseconds wake_at, bool can_defer) const noexcept {
  const nanoseconds timeout = until_wake(now, wake_at);
  wait_plan w;
  w.due = now + timeout;
  w.deadline = wake_at;
  nanoseconds sleep = timeout;
  if (mode_ == precision_mode::fine && (uneven_gaps_ || timeout >= early_wake_above)) {
    sleep -= lateness(timeout);
  }
  if (sleep >= spin_below && sleep <= harvest_horizon && can_defer) {
    w.timer_sleep = sleep;
    sleep = nanoseconds{0};
  }
  if (sleep < spin_below) {
    // Polling the clock rather than the sockets: a poll is a system call, and responses can wait
    // for the deadline as they would in a sleep. Not when they may not wait.
    w.spin = can_defer;
    sleep = nanoseconds{0};
  }
  w.socket_wait = sleep;
  return w;
}

// A running median of how late timed wake-ups land, one per class of sleep length: on a KVM
// guest a vCPU idle for longer than the host's halt-polling window wakes later (docs/design.md,
// "Host measurements"). It is learnt by the length actually slept (what the host sees) and
// looked up by the wait, which is what is known before sleeping; keying both by the wait fitted
// Poisson arrivals worse (docs/design.md). One step up or down per wake-up, so a rare
// millisecond-long hypervisor pause moves it by one step, not by its length.
void pacer::learn(nanoseconds target, nanoseconds slept, nanoseconds woke) noexcept {
  const nanoseconds late = woke - target;
  nanoseconds& estimate = wake_lateness_[lateness_class(slept)];
  estimate += late > estimate ? lateness_step : -lateness_step;
  estimate = std::clamp(estimate, nanoseconds{0}, max_early_wake);
}

}  // namespace punctual::engine
