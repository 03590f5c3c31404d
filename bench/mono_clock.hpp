// CLOCK_MONOTONIC for the standalone bench programs (each is built by one c++ command): now, as
// a duration since boot, and a sleep until an instant of it.
#pragma once

#include <time.h>

#include <cerrno>
#include <chrono>

namespace bench {

inline std::chrono::nanoseconds now() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return std::chrono::seconds(ts.tv_sec) + std::chrono::nanoseconds(ts.tv_nsec);
}

inline timespec to_timespec(std::chrono::nanoseconds t) {
  return {static_cast<time_t>(t.count() / 1'000'000'000),
          static_cast<long>(t.count() % 1'000'000'000)};
}

// Sleeps until `t`; a signal does not end the sleep early.
inline void sleep_until(std::chrono::nanoseconds t) {
  const timespec ts = to_timespec(t);
  while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, nullptr) == EINTR) {
  }
}

}  // namespace bench
