// Claims: a due request never waits for one paused thread (docs/design.md, "Claims"). Each
// worker's requests of the schedule are taken in order, one by one, through one counter per
// worker: the owner takes its next request by advancing its counter from n to n + 1 with a
// compare-and-swap, and so does another worker that finds that request due past the steal
// threshold. Whoever's compare-and-swap succeeds sends request n; the other's fails, so a request
// is sent once, never twice, whatever the timing. The owner also publishes when its next request
// becomes claimable, and re-arms a guard timer on the next worker's poller to that instant: while
// the owner runs, the guard never fires; while it is paused, the guard wakes the next worker.
// Retries in backoff wait on the owner's retry shelf (retry_shelf.hpp), claimable the same way.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <vector>

#include "engine/retry_shelf.hpp"
#include "net/poller.hpp"

namespace punctual::engine {

using nanoseconds = std::chrono::nanoseconds;

class claim_board {
 public:
  // How long past the instant its owner would have sent it a request waits before another worker
  // claims it: above a running worker's own lateness (wake-ups land ~60 us late at p50 and ~125
  // us at p99, docs/design.md), below the host's pauses (0.3 to 10 ms).
  static constexpr nanoseconds steal_threshold{150'000};
  // How many of a worker's retries in backoff can wait claimable at once; more wait in its
  // private heap (a retry storm of more than this many at once on one worker).
  static constexpr std::uint32_t retry_cells = 1024;

  // `retry_cells`: how many of each worker's retries in backoff others can claim at once.
  explicit claim_board(std::uint32_t workers, std::uint32_t retry_cells = 0)
      : lanes_(std::make_unique<lane[]>(workers)), workers_(workers) {
    for (std::uint32_t k = 0; k < workers; ++k) lanes_[k].retries.reserve(retry_cells);
    has_retries_ = retry_cells > 0;
  }

  std::uint32_t workers() const noexcept { return workers_; }
  nanoseconds threshold() const noexcept { return threshold_; }
  // Before the run starts. Tests set 0 to race owners and claimers on every request.
  void set_threshold(nanoseconds t) noexcept { threshold_ = t; }
  // Each worker's poller (set before the run starts): worker k's guard timer is on worker
  // k + 1's, and a worker with nothing more to claim wakes the others so they may end.
  void set_pollers(const std::vector<net::poller*>& pollers) noexcept {
    for (std::uint32_t k = 0; k < workers_; ++k) {
      lanes_[k].poller = pollers[k];
      lanes_[k].guard = pollers[(k + 1) % workers_];
    }
  }
  // Worker `owner`'s retries in backoff, claimable (retry_shelf.hpp).
  retry_shelf& retries(std::uint32_t owner) noexcept { return lanes_[owner].retries; }

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

  // Hints, not promises: from when worker `owner`'s next request of the schedule, and its
  // earliest retry, may be claimed (nanoseconds::max(): not before it publishes again). A
  // claimer checks the request itself.
  nanoseconds claimable_at(std::uint32_t owner) const noexcept {
    return nanoseconds{lanes_[owner].schedule_at.load(std::memory_order_relaxed)};
  }
  nanoseconds retries_claimable_at(std::uint32_t owner) const noexcept {
    return nanoseconds{lanes_[owner].retries_at.load(std::memory_order_relaxed)};
  }
  // Worker `owner` is behind, paused perhaps: its schedule's next request or its earliest retry
  // was claimable by `now`. Its guard fires once, for the earlier of the two; a claimer that
  // saw it fire looks again at the other when that comes (the run has retries only).
  bool overdue(std::uint32_t owner, nanoseconds now) const noexcept {
    return has_retries_ && std::min(claimable_at(owner), retries_claimable_at(owner)) <= now;
  }
  // Every worker but `me` has nothing left that may be claimed: its schedule is over (or cut)
  // and no retry of it waits. Until then, a worker whose own schedule is over stays to claim.
  bool others_done(std::uint32_t me) const noexcept {
    for (std::uint32_t k = 0; k < workers_; ++k) {
      if (k != me &&
          (claimable_at(k) != nanoseconds::max() || retries_claimable_at(k) != nanoseconds::max()))
        return false;
    }
    return true;
  }
  // By the owner: its next request of the schedule, or its earliest retry, may be claimed from
  // `at`. The guard is re-armed to the earlier of the two when that changed (one timer re-arm
  // per change, none while nothing is sent).
  void publish(std::uint32_t owner, nanoseconds at) noexcept {
    lane& l = lanes_[owner];
    if (l.own_schedule_at == at) return;
    l.own_schedule_at = at;
    l.schedule_at.store(at.count(), std::memory_order_relaxed);
    arm(owner, std::min(at, l.own_retries_at));
  }
  void publish_retries(std::uint32_t owner, nanoseconds at) noexcept {
    lane& l = lanes_[owner];
    if (l.own_retries_at == at) return;
    l.own_retries_at = at;
    l.retries_at.store(at.count(), std::memory_order_relaxed);
    arm(owner, std::min(at, l.own_schedule_at));
  }

 private:
  void arm(std::uint32_t owner, nanoseconds at) noexcept {
    lane& l = lanes_[owner];
    if (l.armed == at) return;
    l.armed = at;
    if (l.guard) l.guard->guard(at);
    // Nothing more of it to claim: a worker that stays only to claim may end now.
    if (at != nanoseconds::max()) return;
    for (std::uint32_t k = 0; k < workers_; ++k) {
      if (k != owner && lanes_[k].poller) lanes_[k].poller->wake();
    }
  }

  static constexpr std::uint64_t closed_bit = std::uint64_t{1} << 63;
  // One cache line per worker's hot words: its owner writes them once per request; others read
  // them per turn.
  struct alignas(64) lane {
    std::atomic<std::uint64_t> taken{0};
    std::atomic<std::int64_t> schedule_at{nanoseconds::max().count()};
    std::atomic<std::int64_t> retries_at{nanoseconds::max().count()};
    // The owner's own: what the guard is set to, and what it last published of each.
    nanoseconds armed{nanoseconds::max()};
    nanoseconds own_schedule_at{nanoseconds::max()};
    nanoseconds own_retries_at{nanoseconds::max()};
    net::poller* guard = nullptr;
    net::poller* poller = nullptr;
    retry_shelf retries;
  };
  std::unique_ptr<lane[]> lanes_;
  std::uint32_t workers_;
  bool has_retries_ = false;
  nanoseconds threshold_ = steal_threshold;
};

}  // namespace punctual::engine
