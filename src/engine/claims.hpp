// Claims: a due request never waits for one paused thread (docs/design.md, "Claims"). Each
// worker's requests of the schedule are taken in order, one by one, through one counter per
// worker: the owner takes its next request by advancing its counter from n to n + 1 with a
// compare-and-swap, and so does another worker that finds that request due past the steal
// threshold. Whoever's compare-and-swap succeeds sends request n; the other's fails, so a request
// is sent once, never twice, whatever the timing. The owner also publishes when its next request
// becomes claimable, and the next worker, its guard, is awake then: by a guard timer the owner
// re-arms on the guard's poller when its next request is far off, else by the guard's own
// wake-ups, which it plans by that instant. Re-arming a timer is a clock reprogramming, ~8 us on
// these VMs: at 2,000 req/s, a quarter of a request's CPU (docs/design.md, "Claims").
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
  // A guard whose own next wake-up comes at most this long after a guarded request becomes
  // claimable does not wake for it: at 2,000 req/s over two workers their sends alternate every
  // 500 us, so no extra wake-up is needed there, and a paused worker's request waits at most
  // the threshold plus this before a claim.
  static constexpr nanoseconds guard_slack{400'000};
  // An owner whose next request becomes claimable at most this far ahead arms no guard timer:
  // with even gaps the guard's own send falls half a gap later, within the slack after that
  // instant (a gap of up to 2 x (slack + threshold) = 1.1 ms, and this is gap + threshold).
  // Beyond it, a timer costs less than the guard waking for each request.
  static constexpr nanoseconds timer_above{1'250'000};
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
  // Whether the workers' retries in backoff wait here, claimable (built with retry cells).
  bool takes_retries() const noexcept { return has_retries_; }
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
  // was claimable by `now`. Its guard wakes for the earlier of the two; a claimer that saw that
  // one due looks again at the other when that comes (the run has retries only).
  bool overdue(std::uint32_t owner, nanoseconds now) const noexcept {
    return has_retries_ && std::min(claimable_at(owner), retries_claimable_at(owner)) <= now;
  }
  // The worker that `guard` guards: the one before it, in a ring, so that each worker is guarded
  // by exactly one other.
  std::uint32_t guarded_by(std::uint32_t guard) const noexcept {
    return (guard + workers_ - 1) % workers_;
  }
  // When worker `guard` should wake to claim from the worker it guards, if nothing else wakes
  // it then: the earlier of that worker's published instants, when still ahead of `now`, not
  // covered by that worker's guard timer, and more than `guard_slack` before `planned`, the
  // guard's own next wake-up (which then stands in for it: a claim that late is within the
  // threshold plus the slack); else nanoseconds::max(). An instant already past was seen by this
  // turn's claim, whose own recheck follows the requests.
  nanoseconds guard_wake(std::uint32_t guard, nanoseconds now, nanoseconds planned) const noexcept {
    const std::uint32_t owner = guarded_by(guard);
    if (owner == guard) return nanoseconds::max();
    const nanoseconds at = std::min(claimable_at(owner), retries_claimable_at(owner));
    if (at <= now || at == nanoseconds::max() || planned - at <= guard_slack ||
        at.count() == lanes_[owner].timer_at.load(std::memory_order_relaxed)) {
      return nanoseconds::max();
    }
    return at;
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
  // By the owner at `now`: its next request of the schedule, or its earliest retry, may be
  // claimed from `at` (one relaxed store when it changed, none while nothing is sent). The guard
  // timer is re-armed to the earlier of the two when that changed, except for a request of the
  // schedule claimable within timer_above, which the guard's own wake-ups cover.
  void publish(std::uint32_t owner, nanoseconds at, nanoseconds now) noexcept {
    lane& l = lanes_[owner];
    if (l.own_schedule_at == at) return;
    l.own_schedule_at = at;
    l.schedule_timed = at == nanoseconds::max() || at - now > timer_above;
    l.schedule_at.store(at.count(), std::memory_order_relaxed);
    changed(owner);
  }
  void publish_retries(std::uint32_t owner, nanoseconds at) noexcept {
    lane& l = lanes_[owner];
    if (l.own_retries_at == at) return;
    l.own_retries_at = at;
    l.retries_at.store(at.count(), std::memory_order_relaxed);
    changed(owner);
  }

 private:
  void changed(std::uint32_t owner) noexcept {
    lane& l = lanes_[owner];
    const nanoseconds timer =
        std::min(l.schedule_timed ? l.own_schedule_at : nanoseconds::max(), l.own_retries_at);
    if (timer != l.armed) {
      l.armed = timer;
      l.timer_at.store(timer.count(), std::memory_order_relaxed);
      if (l.guard) l.guard->guard(timer);
    }
    // Nothing more of it to claim: a worker that stays only to claim may end now.
    if (std::min(l.own_schedule_at, l.own_retries_at) != nanoseconds::max()) return;
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
    std::atomic<std::int64_t> timer_at{nanoseconds::max().count()};  // the guard timer's instant
    // The owner's own: what it last published of each, whether its schedule's needs the timer,
    // and what the timer is set to.
    nanoseconds own_schedule_at{nanoseconds::max()};
    nanoseconds own_retries_at{nanoseconds::max()};
    bool schedule_timed = true;
    nanoseconds armed{nanoseconds::max()};
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
