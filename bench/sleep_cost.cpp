// What one sleep-and-wake costs on this machine, in CPU and in lateness, for each way a thread
// can wait for a deadline. It explains the CPU figures of bench/run-bench.sh: on a VM, a sleep
// can cost as much CPU as a whole request.
//
// Usage: sleep_cost [ITERATIONS]   (default 4000 per method and length; pin it: taskset -c 1)
// Prints one line per method and sleep length: CPU per sleep, wall time per sleep, mean lateness.
#include <sys/epoll.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string_view>

#include "mono_clock.hpp"

namespace {

using std::chrono::microseconds;
using std::chrono::nanoseconds;

using bench::now;
using bench::to_timespec;

nanoseconds cpu_time() {
  rusage r{};
  getrusage(RUSAGE_SELF, &r);
  return std::chrono::seconds(r.ru_utime.tv_sec + r.ru_stime.tv_sec) +
         microseconds(r.ru_utime.tv_usec + r.ru_stime.tv_usec);
}

struct waiter {
  int epoll_fd = epoll_create1(0);
  int timer_fd = timerfd_create(CLOCK_MONOTONIC, 0);

  waiter() {
    epoll_event ev{};
    ev.events = EPOLLIN;
    epoll_ctl(epoll_fd, EPOLL_CTL_ADD, timer_fd, &ev);
  }

  void wait(std::string_view method, nanoseconds deadline) const {
    const timespec abs = to_timespec(deadline);
    if (method == "clock_nanosleep") {
      clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &abs, nullptr);
    } else if (method == "epoll_pwait2") {
      const timespec rel = to_timespec(std::max(nanoseconds(0), deadline - now()));
      epoll_event e{};
      epoll_pwait2(epoll_fd, &e, 1, &rel, nullptr);
    } else if (method == "timerfd") {
      itimerspec spec{};
      spec.it_value = abs;
      timerfd_settime(timer_fd, TFD_TIMER_ABSTIME, &spec, nullptr);
      epoll_event e{};
      epoll_wait(epoll_fd, &e, 1, -1);
      std::uint64_t expirations = 0;
      [[maybe_unused]] const auto n = read(timer_fd, &expirations, sizeof expirations);
    } else {  // spin: the clock is polled until the deadline
      while (now() < deadline) {
      }
    }
  }
};

}  // namespace

int main(int argc, char** argv) {
  const int iterations = argc > 1 ? std::atoi(argv[1]) : 4000;
  if (iterations <= 0) {
    std::fprintf(stderr, "usage: sleep_cost [ITERATIONS]\n");
    return 2;
  }
  prctl(PR_SET_TIMERSLACK, 1);  // as punctual's workers do
  const waiter w;
  std::printf("%-16s %8s %14s %14s %14s\n", "method", "sleep", "CPU/sleep us", "wall/sleep us",
              "late us");
  for (const std::string_view method : {"clock_nanosleep", "epoll_pwait2", "timerfd", "spin"}) {
    for (const microseconds length :
         {microseconds(20), microseconds(50), microseconds(200), microseconds(1000)}) {
      nanoseconds late{};
      const nanoseconds cpu0 = cpu_time();
      const nanoseconds wall0 = now();
      for (int i = 0; i < iterations; ++i) {
        const nanoseconds deadline = now() + length;
        w.wait(method, deadline);
        late += now() - deadline;
      }
      const double n = iterations * 1000.0;
      std::printf(
          "%-16.*s %6ldus %14.2f %14.2f %14.2f\n", static_cast<int>(method.size()), method.data(),
          static_cast<long>(length.count()), static_cast<double>((cpu_time() - cpu0).count()) / n,
          static_cast<double>((now() - wall0).count()) / n, static_cast<double>(late.count()) / n);
    }
  }
  return 0;
}
