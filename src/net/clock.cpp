#include "net/clock.hpp"

#include <sys/prctl.h>
#include <sys/resource.h>
#include <time.h>

namespace punctual::net {
namespace {

nanoseconds read(clockid_t id) noexcept {
  timespec ts{};
  clock_gettime(id, &ts);
  return nanoseconds{static_cast<std::int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec};
}

}  // namespace

nanoseconds mono_now() noexcept {
  return read(CLOCK_MONOTONIC);
}
nanoseconds unix_now() noexcept {
  return read(CLOCK_REALTIME);
}

clock_mapping map_clocks() noexcept {
  const nanoseconds before = unix_now();
  const nanoseconds mono = mono_now();
  const nanoseconds after = unix_now();
  return {mono, before + (after - before) / 2};
}

void set_thread_timer_slack_1ns() noexcept {
  prctl(PR_SET_TIMERSLACK, 1UL, 0UL, 0UL, 0UL);
}

nanoseconds thread_cpu_time() noexcept {
  return read(CLOCK_THREAD_CPUTIME_ID);
}

namespace {

class kernel_clock final : public clock {
 public:
  nanoseconds now() const noexcept override { return mono_now(); }
  nanoseconds unix_now() const noexcept override { return net::unix_now(); }
  clock_mapping map() const noexcept override { return map_clocks(); }
  nanoseconds thread_cpu() const noexcept override { return thread_cpu_time(); }
};

}  // namespace

const clock& system_clock() noexcept {
  static const kernel_clock c;
  return c;
}

}  // namespace punctual::net
