#include "server/stall_plan.hpp"

#include <algorithm>
#include <stdexcept>

namespace punctual::server {

using std::chrono::nanoseconds;

namespace {

std::vector<stall_window> merge_windows(std::vector<stall_window> windows) {
  std::sort(windows.begin(), windows.end(),
            [](const stall_window& a, const stall_window& b) { return a.start < b.start; });
  std::vector<stall_window> merged;
  for (const stall_window& w : windows) {
    if (!merged.empty() && w.start <= merged.back().end()) {
      stall_window& last = merged.back();
      last.length = std::max(last.end(), w.end()) - last.start;
    } else {
      merged.push_back(w);
    }
  }
  return merged;
}

}  // namespace

stall_plan::stall_plan(nanoseconds length, nanoseconds period,
                       std::vector<stall_window> explicit_windows) {
  if (length.count() != 0 || period.count() != 0) {
    // length == period would never answer again.
    if (length.count() <= 0 || period <= length) {
      throw std::invalid_argument("a periodic stall needs 0 < length < period");
    }
    length_ = length;
    period_ = period;
  }
  for (const stall_window& w : explicit_windows) {
    if (w.start.count() < 0 || w.length.count() <= 0) {
      throw std::invalid_argument("a stall window needs start >= 0 and length > 0");
    }
  }
  explicit_ = merge_windows(std::move(explicit_windows));
}

stall_plan stall_plan::from_config(const server_config& config) {
  return stall_plan(config.stall_length, config.stall_period, config.stall_at);
}

// Earliest-starting unmerged window among those ending after t.
std::optional<stall_window> stall_plan::raw_after(nanoseconds t) const {
  std::optional<stall_window> best;
  if (period_.count() != 0) {
    // Window k (k >= 1) is [k*P - L, k*P); the first ending after t has k = floor(t/P) + 1.
    const auto k = (t.count() < 0 ? 0 : t.count() / period_.count()) + 1;
    best = stall_window{period_ * k - length_, length_};
  }
  const auto it =
      std::upper_bound(explicit_.begin(), explicit_.end(), t,
                       [](nanoseconds value, const stall_window& w) { return value < w.end(); });
  if (it != explicit_.end() && (!best || it->start < best->start)) best = *it;
  return best;
}

// Windows that start at or before `end` and last beyond it continue the same stall.
nanoseconds stall_plan::extend_end(nanoseconds end) const {
  for (;;) {
    const auto next = raw_after(end);
    if (!next || next->start > end) return end;
    end = next->end();
  }
}

// Windows that end at or after `start` and begin before it are part of the same stall.
nanoseconds stall_plan::extend_start(nanoseconds start) const {
  for (;;) {
    const auto prev = raw_after(start - nanoseconds{1});
    if (!prev || prev->start >= start) return start;
    start = prev->start;
  }
}

std::optional<stall_window> stall_plan::next_stall_after(nanoseconds t) const {
  auto first = raw_after(t);
  if (!first) return std::nullopt;
  const nanoseconds start = extend_start(first->start);
  const nanoseconds end = extend_end(first->end());
  return stall_window{start, end - start};
}

std::optional<stall_window> stall_plan::window_containing(nanoseconds t) const {
  auto w = next_stall_after(t);
  if (!w || w->start > t) return std::nullopt;
  return w;
}

nanoseconds stall_plan::release_time(nanoseconds due) const {
  const auto w = window_containing(due);
  return w ? w->end() : due;
}

}  // namespace punctual::server
