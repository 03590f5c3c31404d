// Hands a worker's per-second histograms to the collector without locks. The worker records
// into one set while the other set waits to be taken; the collector adds it to the merged
// interval, resets it and gives it back. If the collector has not given the spare set back by
// the next boundary (it has a whole second to do so), the worker keeps recording into its
// current set, offering it again every recorder::hand_over_retry, and that set then covers more
// than one second; nothing is lost.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "record/counters.hpp"
#include "record/view_set.hpp"

namespace punctual::record {

class interval_exchange {
 public:
  explicit interval_exchange(std::size_t names = 0)
      : sets_{view_set(names), view_set(names)}, totals_{live_counts(names), live_counts(names)} {}

  // Worker side.
  view_set& current() noexcept { return sets_[current_]; }
  // The worker's counts so far, handed over with the current set (the live metrics).
  live_counts& current_totals() noexcept { return totals_[current_]; }
  const view_set& peek() const noexcept { return sets_[current_]; }
  // Offers the current set, holding interval `index`; returns false if the spare is still taken.
  bool hand_over(std::int64_t index) noexcept;

  // Collector side. The index of the waiting set, or -1.
  std::int64_t waiting() const noexcept { return waiting_index_.load(std::memory_order_acquire); }
  // If a set is waiting, adds it into `into`, resets it (releasing its pages), copies the
  // counts handed over with it into `totals` (if given), and returns its interval index;
  // otherwise returns -1.
  std::int64_t take(view_set& into, live_counts* totals = nullptr) noexcept;

  // After the worker thread has been joined: the set it was still recording into.
  view_set& last() noexcept { return sets_[current_]; }

  // Resident bytes of both sets' histograms (any thread: it reads only page residency).
  std::size_t resident_bytes() const noexcept {
    return sets_[0].resident_bytes() + sets_[1].resident_bytes();
  }

 private:
  view_set sets_[2];
  live_counts totals_[2];
  int current_ = 0;           // worker-owned
  std::uint64_t handed_ = 0;  // collector-owned: how many sets it has taken
  std::atomic<std::int64_t> waiting_index_{
      -1};  // >= 0: sets_[1 - current_] waits for the collector
};

}  // namespace punctual::record
