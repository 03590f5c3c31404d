#include "server/cpu_burn.hpp"

#include <time.h>

#include <cstdint>

namespace punctual::server {

namespace {

std::chrono::nanoseconds thread_cpu_now() noexcept {
  timespec ts{};
  ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return std::chrono::seconds{ts.tv_sec} + std::chrono::nanoseconds{ts.tv_nsec};
}

}  // namespace

void burn_cpu(std::chrono::nanoseconds amount) noexcept {
  if (amount.count() <= 0) return;
  const auto until = thread_cpu_now() + amount;
  // Some arithmetic between clock reads, so the burn is mostly work rather than system calls.
  volatile std::uint64_t sink = 0;
  do {
    for (std::uint64_t i = 0; i < 256; ++i) sink = sink + i;
  } while (thread_cpu_now() < until);
}

}  // namespace punctual::server
