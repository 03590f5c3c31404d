// Claims: a due request never waits for one paused thread (docs/design.md, "Claims"). Each
// worker's requests of the schedule are taken in order, one by one, through one counter per
// worker: the owner takes its next request by advancing its counter from n to n + 1 with a
// compare-and-swap, and so does another worker that finds that request due past the steal
// threshold. Whoever's compare-and-swap succeeds sends request n; the other's fails, so a request
// is sent once, never twice, whatever the timing. The owner also publishes when its next request
// becomes claimable, and re-arms a guard timer on the next worker's poller to that instant: while
// the owner runs, the guard never fires; while it is paused, the guard wakes the next worker.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>

#include "net/poller.hpp"

namespace punctual::engine {

using nanoseconds = std::chrono::nanoseconds;

class claim_board {
 public:
  // How long past the instant its owner would have sent it a request waits before another worker
  // claims it: above a running worker's own lateness (wake-ups land ~60 us late at p50 and ~125
  // us at p99, docs/design.md), below the host's pauses (0.3 to 10 ms).
  static constexpr nanoseconds steal_threshold{150'000};

  explicit claim_board(std::uint32_t workers)
      : lanes_(std::make_unique<lane[]>(workers)), workers_(workers) {}

  std::uint32_t workers() const noexcept { return workers_; }
  nanoseconds threshold() const noexcept { return threshold_; }
  // Before the run starts. Tests set 0 to race owners and claimers on every request.
  void set_threshold(nanoseconds t) noexcept { threshold_ = t; }
  // The poller that worker `owner`'s guard timer wakes (set before the run starts).
  void set_guard(std::uint32_t owner, net::poller* guard) noexcept { lanes_[owner].guard = guard; }

  // How many of worker `owner`'s requests have been taken, by it or by others.
  std::uint64_t taken(std::uint32_t owner) const noexcept {
    return lanes_[owner].taken.load(std::memory_order_acquire) & ~closed_bit;
  }
  // Takes `owner`'s request number `n` (counting from 0 in its own order): true for exactly one
  // caller; false when it was taken already or the owner has closed its lane.
  bool take(std::uint32_t owner, std::uint64_t n) noexcept {
    std::uint64_t expected = n;
    return lanes_[owner].taken.compare_exchange_strong(expected, n + 1, std::memory_order_acq_rel,
                                                       std::memory_order_acquire);
  }
  bool closed(std::uint32_t owner) const noexcept {
    return (lanes_[owner].taken.load(std::memory_order_acquire) & closed_bit) != 0;
  }
  // The owner is done: nothing of it can be taken any more. Returns how many were taken.
  std::uint64_t close(std::uint32_t owner) noexcept {
    return lanes_[owner].taken.fetch_or(closed_bit, std::memory_order_acq_rel) & ~closed_bit;
  }

  // A hint, not a promise: from when worker `owner`'s next request may be claimed
  // (nanoseconds::max(): not before it publishes again). A claimer checks the request itself.
  nanoseconds claimable_at(std::uint32_t owner) const noexcept {
    return nanoseconds{lanes_[owner].claimable_at.load(std::memory_order_relaxed)};
  }
  // By the owner: its next request may be claimed from `at`; the guard is re-armed when that
  // changed (one timer re-arm per change, none while nothing is sent).
  void publish(std::uint32_t owner, nanoseconds at) noexcept {
    lane& l = lanes_[owner];
    if (l.armed == at) return;
    l.armed = at;
    l.claimable_at.store(at.count(), std::memory_order_relaxed);
    if (l.guard) l.guard->guard(at);
  }

 private:
  static constexpr std::uint64_t closed_bit = std::uint64_t{1} << 63;
  // One cache line per worker: its owner writes it once per request; others read it per turn.
  struct alignas(64) lane {
    std::atomic<std::uint64_t> taken{0};
    std::atomic<std::int64_t> claimable_at{nanoseconds::max().count()};
    nanoseconds armed{nanoseconds::max()};  // the owner's own: what the guard is set to
    net::poller* guard = nullptr;
  };
  std::unique_ptr<lane[]> lanes_;
  std::uint32_t workers_;
  nanoseconds threshold_ = steal_threshold;
};

}  // namespace punctual::engine
