#include "record/interval_exchange.hpp"

namespace punctual::record {

bool interval_exchange::hand_over(std::int64_t index) noexcept {
  if (waiting_index_.load(std::memory_order_acquire) >= 0) return false;
  current_ = 1 - current_;
  waiting_index_.store(index, std::memory_order_release);
  return true;
}

std::int64_t interval_exchange::take(view_set& into, live_counts* totals) noexcept {
  const std::int64_t index = waiting_index_.load(std::memory_order_acquire);
  if (index < 0) return -1;
  // current_ belongs to the worker; hand-overs strictly alternate sets 0, 1, 0, ... so the
  // collector derives which set waits from its own count instead of reading current_.
  view_set& waiting = sets_[handed_ % 2];
  into.add(waiting);
  // Its pages go back too: the worker faults in only what the next interval's values touch, so a
  // long run's outliers do not stay resident in a set reused every other second.
  waiting.reset_releasing();
  if (totals) *totals = totals_[handed_ % 2];
  ++handed_;
  waiting_index_.store(-1, std::memory_order_release);
  return index;
}

}  // namespace punctual::record
