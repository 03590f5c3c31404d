// How a worker waits: on its connections' readiness and on time, together. The engine never
// touches epoll or sleeps itself; it asks its poller to carry out a wait plan (the pacer makes
// it), and transports register their sockets with the same poller. epoll_poller (a real epoll
// loop, an eventfd for wake-ups) is what runs; a simulation puts a virtual one in its place
// (tests/sim), where the plan says how long virtual time passes.
#pragma once

#include <sys/epoll.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <span>

#include "net/clock.hpp"

namespace punctual::net {

// How to wait from now until the next deadline, in up to three phases.
struct wait_plan {
  nanoseconds due{};  // when the worker must be awake
  // The worker's next deadline. A socket wait of 0 only polls, and the worker turns again and
  // again until this deadline (spin mode's last stretch): the same as waiting for it, or for
  // the first readiness.
  nanoseconds deadline{};
  nanoseconds timer_sleep{};  // first sleep this long on the timer alone (responses wait), or 0
  bool spin = false;          // then poll the clock until `due`
  nanoseconds socket_wait{};  // then wait on the sockets this long (0: only collect what is ready)
};

// What a wait ended with: the sockets' events, when the timer sleep ended, and when the whole
// wait did; `timed_out` when nothing at all (not even a wake()) ended the socket wait.
struct waited {
  std::span<epoll_event> events;
  nanoseconds timer_woke{};
  nanoseconds woke{};
  bool timed_out = false;
};

class poller {
 public:
  virtual ~poller() = default;

  // A transport's socket: its readiness comes back under `token` (epoll_event.data.u64).
  virtual bool add(int fd, std::uint32_t events, std::uint64_t token) noexcept = 0;
  virtual bool modify(int fd, std::uint32_t events, std::uint64_t token) noexcept = 0;
  virtual void remove(int fd) noexcept = 0;

  // Carries out `plan` and returns the sockets' events ready at its end. A wake() from another
  // thread ends the timer sleep and the socket wait early; it is consumed here and never
  // returned as an event.
  virtual waited wait(const wait_plan& plan) noexcept = 0;
  // Waits on the sockets alone, at most `timeout` (setting connections up before the start).
  virtual std::span<epoll_event> wait_for(nanoseconds timeout) noexcept = 0;
  // Safe from any thread and from a signal handler's caller: ends the current or next wait.
  virtual void wake() noexcept = 0;
  // A guard timer: ends the current or next wait at `at` (CLOCK_MONOTONIC), unless armed again
  // before then; nanoseconds::max() disarms it. Safe from any thread: another worker keeps it
  // (engine/claims.hpp). Consumed like a wake().
  virtual void guard(nanoseconds at) noexcept = 0;
  // How many waits actually blocked: the sleeps that cost ~35 us of CPU each (docs/design.md).
  virtual std::uint64_t sleeps() const noexcept = 0;
};

// The real one: two epoll instances (one holding only the wake-up eventfd, for timer sleeps in
// which responses wait unread), nanosecond timeouts (epoll_pwait2), spinning on `clock`.
std::unique_ptr<poller> make_epoll_poller(const clock& c);

}  // namespace punctual::net
