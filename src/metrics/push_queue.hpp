// The order of remote write, without threads or clocks of its own: which snapshots go in the
// next request, what a failed request does next, and what is dropped. Prometheus refuses a
// sample older than the newest it holds for a series, so a request is retried only before
// anything newer was sent: one request at a time, oldest snapshots first, and a request that
// gives up is dropped, never sent again. Time comes in as a parameter, so the rules are tested
// on a made-up clock (tests/unit/push_queue_test.cpp).
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <string>
#include <vector>

#include "metrics/push_stats.hpp"
#include "metrics/series.hpp"

namespace punctual::metrics {

using nanoseconds = std::chrono::nanoseconds;

struct push_policy {
  std::size_t capacity = 30;   // snapshots waiting at most; a new one then drops the oldest
  std::size_t batch = 10;      // snapshots in one request at most (a backlog goes out in few)
  std::uint32_t attempts = 4;  // tries of one request before it is dropped
  nanoseconds backoff_first = std::chrono::milliseconds(250);  // doubled per failure in a row
  nanoseconds backoff_cap = std::chrono::seconds(4);
};

// What the endpoint's answer means for the request.
enum class push_verdict {
  accepted,  // 2xx
  retry,     // no answer (connect, timeout, reset), 5xx or 429: the same request again, later
  rejected,  // any other status: the request can never succeed, so it is dropped now
};

push_verdict verdict_of(int status) noexcept;  // 0: no answer

class push_queue {
 public:
  explicit push_queue(push_policy policy = {});

  // A snapshot, newest of all so far (the caller keeps timestamps increasing). `last`: the run's
  // final values. When `capacity` snapshots wait already, the oldest waiting one is dropped: the
  // counters are cumulative, so a later snapshot carries everything a dropped one had.
  void add(snapshot s, bool last = false);

  // The request to send at `now`: the snapshots in flight, oldest first. Empty when nothing
  // waits or a failure's backoff has not yet passed (then due() says until when). The snapshots
  // stay in flight, untouched by add(), until settle().
  const std::vector<snapshot>& next(nanoseconds now);
  nanoseconds due() const noexcept { return due_; }
  bool idle() const noexcept { return flight_.empty() && waiting_.empty(); }

  // The answer to the request next() gave. `error`: why it failed, for the report.
  void settle(push_verdict v, nanoseconds now, const std::string& error = {});

  // Drops everything left, counted (the run's end, when the wait for the endpoint is over).
  void abandon();

  const push_stats& stats() const noexcept { return stats_; }

 private:
  void drop(std::size_t snapshots, bool had_last);
  void backoff(nanoseconds now);

  push_policy policy_;
  std::deque<snapshot> waiting_;
  bool last_waiting_ = false;
  std::vector<snapshot> flight_;
  bool last_in_flight_ = false;
  std::uint32_t tries_ = 0;            // of the request in flight
  std::uint32_t failures_in_row_ = 0;  // over requests: the endpoint's state, for the backoff
  nanoseconds due_{0};
  push_stats stats_;
};

}  // namespace punctual::metrics
