#include "metrics/push_queue.hpp"

#include <algorithm>
#include <utility>

namespace punctual::metrics {

push_verdict verdict_of(int status) noexcept {
  if (status >= 200 && status < 300) return push_verdict::accepted;
  if (status == 0 || status == 429 || status >= 500) return push_verdict::retry;
  return push_verdict::rejected;
}

push_queue::push_queue(push_policy policy) : policy_(policy) {
  policy_.capacity = std::max<std::size_t>(policy_.capacity, 1);
  policy_.batch = std::max<std::size_t>(policy_.batch, 1);
  policy_.attempts = std::max<std::uint32_t>(policy_.attempts, 1);
}

void push_queue::add(snapshot s, bool last) {
  ++stats_.snapshots;
  if (waiting_.size() >= policy_.capacity) {
    waiting_.pop_front();
    drop(1, false);
  }
  waiting_.push_back(std::move(s));
  last_waiting_ = last;
}

const std::vector<snapshot>& push_queue::next(nanoseconds now) {
  static const std::vector<snapshot> nothing;
  if (now < due_) return nothing;
  if (flight_.empty()) {
    // Formed when it can go, so that a backoff gathers what waited into one request.
    const std::size_t n = std::min(policy_.batch, waiting_.size());
    for (std::size_t i = 0; i < n; ++i) {
      flight_.push_back(std::move(waiting_.front()));
      waiting_.pop_front();
    }
    tries_ = 0;
    last_in_flight_ = last_waiting_ && waiting_.empty() && n > 0;
    if (last_in_flight_) last_waiting_ = false;
  }
  return flight_;
}

void push_queue::settle(push_verdict v, nanoseconds now, const std::string& error) {
  if (flight_.empty()) return;
  if (v == push_verdict::accepted) {
    ++stats_.requests;
    for (const auto& s : flight_) stats_.samples += s.samples.size();
    stats_.final_pushed = stats_.final_pushed || last_in_flight_;
    flight_.clear();
    failures_in_row_ = 0;
    due_ = now;
    return;
  }
  ++stats_.failed_attempts;
  stats_.last_error = error;
  if (v == push_verdict::retry) {
    backoff(now);
    if (++tries_ < policy_.attempts) return;
  }
  drop(flight_.size(), last_in_flight_);
  flight_.clear();
}

void push_queue::abandon() {
  drop(flight_.size(), last_in_flight_);
  drop(waiting_.size(), last_waiting_);
  flight_.clear();
  waiting_.clear();
}

void push_queue::drop(std::size_t snapshots, bool had_last) {
  stats_.dropped += snapshots;
  if (had_last) {
    last_in_flight_ = false;
    last_waiting_ = false;
  }
}

// Doubling from backoff_first, capped: a dead endpoint gets a request every backoff_cap.
void push_queue::backoff(nanoseconds now) {
  const std::uint32_t doublings = std::min<std::uint32_t>(failures_in_row_, 30);
  ++failures_in_row_;
  const auto wait =
      std::min(policy_.backoff_first * (std::int64_t{1} << doublings), policy_.backoff_cap);
  due_ = now + wait;
}

}  // namespace punctual::metrics
