// A worker's poller in the simulation: it has no descriptors; the simulated transports raise
// readiness on it, and the plan of each wait (net::wait_plan) says how much virtual time passes:
// a timer sleep that only a wake() ends early, a spin to the deadline, then a wait on the
// sockets that the first readiness (or a wake()) ends. When the wait ends, the driver's callback
// runs the worker's next step. A pause (a host descheduling the worker's vCPU) holds every
// wake-up that falls inside it until its end.
#pragma once

#include <sys/epoll.h>

#include <array>
#include <cstdint>
#include <functional>
#include <vector>

#include "net/poller.hpp"
#include "world.hpp"

namespace punctual::sim {

class sim_poller final : public net::poller {
 public:
  // `max_events`: the most events one wait returns (epoll_wait's maxevents); the rest stay
  // ready for the next.
  explicit sim_poller(world& w, std::size_t max_events = 256)
      : world_(w), max_events_(max_events) {}

  bool add(int, std::uint32_t, std::uint64_t) noexcept override { return false; }
  bool modify(int, std::uint32_t, std::uint64_t) noexcept override { return false; }
  void remove(int) noexcept override {}
  net::waited wait(const net::wait_plan& plan) noexcept override;
  std::span<epoll_event> wait_for(nanoseconds timeout) noexcept override;
  void wake() noexcept override;
  void guard(nanoseconds at) noexcept override;
  std::uint64_t sleeps() const noexcept override { return sleeps_; }
  // How often another worker armed (or disarmed) this poller's guard timer: each is a
  // timerfd_settime on the real poller.
  std::uint64_t guards_set() const noexcept { return guard_generation_; }

  // A simulated transport's readiness under `token` (edge-triggered: once per arrival).
  void raise(std::uint64_t token, std::uint32_t events);

  // The driver's side: after a turn planned `plan` at now, `then` runs when the wait ends.
  void arm(const net::wait_plan& plan, std::function<void()> then);
  // From `from` until `until` nothing of this worker runs.
  void pause(nanoseconds from, nanoseconds until) { pauses_.push_back({from, until}); }
  // The instant a wake-up meant for `at` can happen, pauses considered.
  nanoseconds runnable_at(nanoseconds at) const noexcept;

 private:
  enum class phase : std::uint8_t { idle, timer, spin, sockets };
  void go(phase p, nanoseconds at);
  void enter(phase p);
  void end_wait(bool timed_out);
  std::span<epoll_event> take_pending() noexcept;

  struct span_of_time {
    nanoseconds from;
    nanoseconds until;
  };
  world& world_;
  std::size_t max_events_;
  std::vector<epoll_event> pending_;
  std::array<epoll_event, 256> out_{};
  std::vector<span_of_time> pauses_;
  std::function<void()> then_;
  net::wait_plan plan_;
  phase phase_ = phase::idle;
  std::uint64_t guard_generation_ = 0;  // a guard armed again makes the earlier one do nothing
  std::uint64_t generation_ = 0;  // an event of an earlier phase finds it changed and does nothing
  bool woken_ = false;            // a wake() came during this wait
  bool guarded_ = false;          // the guard fired during this wait: no spin
  bool timed_out_ = false;
  nanoseconds not_before_{};  // when the turn that planned this wait ended (its clock)
  nanoseconds timer_woke_{};
  nanoseconds woke_{};
  std::uint64_t sleeps_ = 0;
};

}  // namespace punctual::sim
