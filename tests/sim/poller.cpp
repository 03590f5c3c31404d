#include "poller.hpp"

#include <algorithm>

namespace punctual::sim {

nanoseconds sim_poller::runnable_at(nanoseconds at) const noexcept {
  for (bool moved = true; moved;) {
    moved = false;
    for (const auto& p : pauses_) {
      if (at >= p.from && at < p.until) {
        at = p.until;
        moved = true;
      }
    }
  }
  return at;
}

void sim_poller::raise(std::uint64_t token, std::uint32_t events) {
  const auto it = std::find_if(pending_.begin(), pending_.end(),
                               [token](const epoll_event& e) { return e.data.u64 == token; });
  if (it != pending_.end()) {
    it->events |= events;
  } else {
    epoll_event e{};
    e.events = events;
    e.data.u64 = token;
    pending_.push_back(e);
  }
  if (phase_ == phase::sockets) go(phase::idle, world_.now());
}

void sim_poller::wake() noexcept {
  woken_ = true;
  if (phase_ == phase::timer) go(phase::spin, world_.now());
  if (phase_ == phase::sockets) go(phase::idle, world_.now());
}

// The guard fires at its instant (or when a pause of this worker ends) and ends the wait as a
// wake() does, and a spin too (the real poller spins until the earlier of its due and the
// guard's instant).
void sim_poller::guard(nanoseconds at) noexcept {
  const std::uint64_t g = ++guard_generation_;
  if (at == nanoseconds::max()) return;
  world_.at(runnable_at(std::max(at, world_.now())), [this, g] {
    if (g != guard_generation_) return;
    woken_ = true;
    guarded_ = true;
    if (phase_ == phase::timer) go(phase::spin, world_.now());
    if (phase_ == phase::spin) go(phase::sockets, world_.now());
    if (phase_ == phase::sockets) go(phase::idle, world_.now());
  });
}

void sim_poller::arm(const net::wait_plan& plan, std::function<void()> then) {
  plan_ = plan;
  then_ = std::move(then);
  not_before_ = world_.now();
  woken_ = false;
  guarded_ = false;
  timed_out_ = false;
  if (plan.timer_sleep.count() > 0 || plan.socket_wait.count() != 0) ++sleeps_;
  // Never ends within this call: the worker's next step runs from an event of its own.
  phase_ = phase::timer;
  go(phase::spin, world_.now() + std::max(plan.timer_sleep, nanoseconds{0}));
}

// Moves to phase `p` at `at` (an event; pauses hold it), unless the wait has moved on by then.
// Never before the turn that planned the wait ended: a wake() from another event may come
// while the worker is still busy in its system calls.
void sim_poller::go(phase p, nanoseconds at) {
  const std::uint64_t g = ++generation_;
  world_.at(runnable_at(std::max(at, not_before_)), [this, p, g] {
    if (g == generation_) enter(p);
  });
}

void sim_poller::enter(phase p) {
  switch (p) {
    case phase::spin:
      timer_woke_ = world_.now();
      phase_ = phase::spin;
      if (plan_.spin && plan_.due > world_.now() && !guarded_ && !woken_)
        return go(phase::sockets, plan_.due);
      [[fallthrough]];
    case phase::sockets: {
      phase_ = phase::sockets;
      if (!pending_.empty() || woken_) return end_wait(false);
      // A wait of zero polls the sockets and the loop turns again: a real worker does that
      // until its deadline, time passing all along. Virtual time passes only between events,
      // so here it is one wait until the deadline or the first readiness.
      const nanoseconds until = plan_.socket_wait.count() == 0 ? std::max(plan_.due, plan_.deadline)
                                                               : world_.now() + plan_.socket_wait;
      if (plan_.socket_wait.count() < 0) return;  // until readiness or a wake()
      if (until <= world_.now()) return end_wait(plan_.socket_wait.count() > 0);
      const std::uint64_t g = ++generation_;
      world_.at(runnable_at(until), [this, g] {
        if (g == generation_)
          end_wait(pending_.empty() && !woken_ && plan_.socket_wait.count() > 0);
      });
      return;
    }
    case phase::idle:
    case phase::timer:
      return end_wait(false);
  }
}

void sim_poller::end_wait(bool timed_out) {
  ++generation_;
  phase_ = phase::idle;
  timed_out_ = timed_out;
  woke_ = world_.now();
  auto then = std::move(then_);
  then_ = nullptr;
  if (then) then();
}

std::span<epoll_event> sim_poller::take_pending() noexcept {
  const std::size_t n = std::min({pending_.size(), out_.size(), max_events_});
  std::copy_n(pending_.begin(), n, out_.begin());
  pending_.erase(pending_.begin(), pending_.begin() + static_cast<std::ptrdiff_t>(n));
  return std::span<epoll_event>(out_).first(n);
}

net::waited sim_poller::wait(const net::wait_plan&) noexcept {
  net::waited w;
  w.timer_woke = timer_woke_;
  w.woke = woke_;
  w.timed_out = timed_out_;
  w.events = take_pending();
  return w;
}

std::span<epoll_event> sim_poller::wait_for(nanoseconds timeout) noexcept {
  world_.run_until([this] { return !pending_.empty(); }, world_.now() + timeout);
  return take_pending();
}

}  // namespace punctual::sim
