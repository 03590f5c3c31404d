// Clocks: every interval is measured on CLOCK_MONOTONIC; one wall-clock mapping per run.
#pragma once

#include <chrono>
#include <cstdint>

namespace punctual::net {

using nanoseconds = std::chrono::nanoseconds;

// A point on CLOCK_MONOTONIC, in ns since an arbitrary origin (boot).
nanoseconds mono_now() noexcept;
// CLOCK_REALTIME in ns since the Unix epoch.
nanoseconds unix_now() noexcept;

// The same instant read on both clocks (monotonic read between two realtime reads).
struct clock_mapping {
  nanoseconds mono;
  nanoseconds unix;
};
clock_mapping map_clocks() noexcept;

// Where the engine and its transports read time: the kernel's clocks (system_clock()), or a
// virtual clock that a simulation advances itself (tests/sim). Nothing in engine/, record/ or
// net/ reads time any other way.
class clock {
 public:
  virtual ~clock() = default;
  virtual nanoseconds now() const noexcept = 0;         // CLOCK_MONOTONIC
  virtual nanoseconds unix_now() const noexcept = 0;    // CLOCK_REALTIME
  virtual clock_mapping map() const noexcept = 0;       // one instant on both
  virtual nanoseconds thread_cpu() const noexcept = 0;  // CPU time of the calling thread
};

// The kernel's clocks.
const clock& system_clock() noexcept;

// Maps CLOCK_REALTIME instants (the kernel's packet receive stamps) onto CLOCK_MONOTONIC. The
// offset between the clocks moves only when the wall clock is slewed (<= 0.5 us per ms) or
// stepped, so it is re-measured now and then rather than per packet.
class realtime_to_mono {
 public:
  void refresh(const clock& c) noexcept {
    const clock_mapping m = c.map();
    offset_ = m.unix - m.mono;
    measured_at_ = m.mono;
  }
  // Re-measures when the last measure is at least `period` old at `now` (CLOCK_MONOTONIC), or
  // was never taken.
  void refresh_every(const clock& c, nanoseconds period, nanoseconds now) noexcept {
    if (measured_at_.count() == 0 || now - measured_at_ >= period) refresh(c);
  }
  nanoseconds operator()(nanoseconds unix) const noexcept { return unix - offset_; }
  nanoseconds measured_at() const noexcept { return measured_at_; }  // CLOCK_MONOTONIC; 0: never

 private:
  nanoseconds offset_{};
  nanoseconds measured_at_{};
};

// The default 50 us slack delays every timer wake-up; punctual's timers want 1 ns.
void set_thread_timer_slack_1ns() noexcept;

// CPU time consumed by the calling thread so far.
nanoseconds thread_cpu_time() noexcept;

}  // namespace punctual::net
