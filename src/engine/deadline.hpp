// The deadline rule: an attempt's outcome is decided by when it ended, against its deadline,
// whatever order the worker noticed things in. A response is dated by its kernel receive stamp,
// a failure by when it was seen; one that ended at or after the deadline timed out, and is
// recorded at exactly the deadline. So a response read a tick late still counts as ok if it
// arrived in time, and one that arrived after its deadline never counts as ok, even when it was
// read before the worker got round to checking deadlines (docs/design.md, "Deadlines").
#pragma once

#include <algorithm>
#include <chrono>

#include "record/recorder.hpp"

namespace punctual::engine {

using nanoseconds = std::chrono::nanoseconds;

struct deadline_rule {
  nanoseconds timeout{};          // --timeout: from the first attempt's intended time
  nanoseconds attempt_timeout{};  // --attempt-timeout: from when the attempt was due; 0: none

  // The logical request's deadline: it covers every attempt and the backoffs between them.
  nanoseconds chain(const record::request_times& t) const noexcept { return t.intended + timeout; }
  // This attempt's deadline: the chain's, or earlier with --attempt-timeout.
  nanoseconds attempt(const record::request_times& t) const noexcept {
    if (attempt_timeout.count() == 0) return chain(t);
    return std::min(chain(t), t.due_time() + attempt_timeout);
  }
};

// How an attempt that ended at `ended_at` is to be accounted.
struct attempt_ending {
  bool in_time = true;      // ended before its deadline: its own outcome stands
  bool chain_over = false;  // timed out at the chain's deadline: no retry can follow
  nanoseconds at{};         // the instant to record it at
  nanoseconds value{};      // the response time to record: at - intended, never above the timeout
};

inline attempt_ending settle(const deadline_rule& rule, const record::request_times& t,
                             nanoseconds ended_at) noexcept {
  const nanoseconds deadline = rule.attempt(t);
  attempt_ending e;
  e.in_time = ended_at < deadline;
  e.at = e.in_time ? ended_at : deadline;
  e.chain_over = !e.in_time && deadline == rule.chain(t);
  e.value = e.at - t.intended;
  return e;
}

}  // namespace punctual::engine
