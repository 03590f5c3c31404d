// A worker's share of a schedule, walked in order: the open model's requests, the hybrid model's
// users. It says what is due and when; the model decides what an arrival becomes.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdint>

#include "schedule/schedule.hpp"

namespace punctual::engine {

using nanoseconds = std::chrono::nanoseconds;

class arrivals {
 public:
  arrivals(const schedule::plan& plan, std::uint32_t worker) : stream_(plan, worker) {}

  // The schedule's offsets count from `start`; nothing at or after `window_end` is due.
  void start(nanoseconds start, nanoseconds window_end) noexcept {
    start_ = start;
    end_ = window_end;
    advance();
  }
  // The window was cut short at `at` (an interruption).
  void cut(nanoseconds at) noexcept { end_ = std::min(end_, std::max(at, start_)); }

  bool over() const noexcept { return !has_next_ || at() >= end_; }
  // No entry left at all, whatever the window (an interruption's cut does not end the stream).
  bool exhausted() const noexcept { return !has_next_; }
  bool due(nanoseconds now) const noexcept { return !over() && at() <= now; }
  // The next entry and when it is intended (valid unless over()).
  const schedule::entry& next() const noexcept { return next_; }
  nanoseconds at() const noexcept { return start_ + next_.offset; }
  nanoseconds next_due() const noexcept { return over() ? nanoseconds::max() : at(); }
  void advance() noexcept { has_next_ = stream_.next(next_); }

 private:
  schedule::worker_stream stream_;
  schedule::entry next_{};
  bool has_next_ = false;
  nanoseconds start_{};
  nanoseconds end_{};
};

}  // namespace punctual::engine
