// Per-worker counts. Each worker owns one; they are added together only at the end.
#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <vector>

#include "record/outcome.hpp"

namespace punctual::record {

// Attempts of logical requests (retries). Outcomes stay one per logical request.
struct attempt_counts {
  std::uint64_t total = 0;              // attempts sent: first + retries + resent
  std::uint64_t first = 0;              // first attempts sent (at most one per request)
  std::uint64_t retries = 0;            // attempts after the first, by the retry policy
  std::uint64_t resent = 0;             // HTTP/2 streams sent again unprocessed (not retries)
  std::uint64_t refused_by_budget = 0;  // retries the --retry-budget did not allow
  std::uint64_t past_deadline = 0;      // retries whose backoff would end past the deadline
  std::array<std::uint64_t, retry_cause_count> by_cause{};  // retries, by what failed

  void add(const attempt_counts& other) noexcept;
};

struct counters {
  std::uint64_t planned = 0;
  // Claims (engine/claims.hpp): another worker's requests this one sent, and this one's
  // requests another sent. Per worker, planned + claimed_in - claimed_out == the outcomes' sum;
  // over a whole shard the two are equal.
  std::uint64_t claimed_in = 0;
  std::uint64_t claimed_out = 0;
  std::array<std::uint64_t, outcome_count> outcomes{};
  std::array<std::uint64_t, socket_reason_count> socket_errors{};
  std::array<std::uint64_t, 600> status{};  // indexed by HTTP status code
  std::uint64_t censored = 0;               // timeouts + unfinished
  std::uint64_t body_missing = 0;     // http_errors: an expected status, the body lacked its text
  std::uint64_t capture_missing = 0;  // http_errors: an expected status, a capture found nothing
  std::uint64_t sent_in_window = 0;
  std::uint64_t completed_in_window = 0;
  std::uint64_t bytes_sent = 0;
  std::uint64_t bytes_received = 0;
  std::uint64_t reconnects = 0;
  std::uint64_t tls_handshakes = 0;  // completed, those before the start included
  std::uint64_t tls_resumed = 0;     // of them, those that resumed a session
  // HTTP/2: requests the server never processed (REFUSED_STREAM, above a GOAWAY's last stream),
  // sent again once; and the error codes of the streams it reset (0x0..0xd, then any other).
  std::uint64_t h2_unprocessed = 0;
  std::array<std::uint64_t, 15> h2_rst_codes{};
  attempt_counts attempts;

  std::uint64_t outcome_total() const noexcept {
    std::uint64_t sum = 0;
    for (const auto n : outcomes) sum += n;
    return sum;
  }
  void add(const counters& other) noexcept;
};

// The status codes one name saw: each distinct code in a slot of its own, the first
// `capacity` of them, and any code after those in `other` (the live metrics' code="other").
// A fixed array searched from the front: a name sees one to three codes in practice, so the
// code it answers with is found in the first slots, and counting never allocates.
struct status_counts {
  static constexpr std::size_t capacity = 64;
  std::array<std::uint16_t, capacity> codes{};
  std::array<std::uint64_t, capacity> counts{};
  std::uint64_t other = 0;
  std::uint32_t used = 0;

  void count(int code, std::uint64_t n = 1) noexcept {
    for (std::uint32_t i = 0; i < used; ++i) {
      if (codes[i] == code) {
        counts[i] += n;
        return;
      }
    }
    if (used < capacity && code >= 0 && code <= 0xffff) {
      codes[used] = static_cast<std::uint16_t>(code);
      counts[used++] = n;
      return;
    }
    other += n;
  }
  void add(const status_counts& o) noexcept {
    for (std::uint32_t i = 0; i < o.used; ++i) count(o.codes[i], o.counts[i]);
    other += o.other;
  }
};

// The measured window's outcomes of one request name (a --requests entry). The same
// denominator rule holds per name: planned == the sum of its outcomes.
struct name_counts {
  std::uint64_t planned = 0;
  std::array<std::uint64_t, outcome_count> outcomes{};
  std::uint64_t sessions_failed_here = 0;  // a hybrid step: sessions whose first failure it was
  // Its whole responses by status code, and its socket errors by reason (the live metrics').
  status_counts statuses;
  std::array<std::uint64_t, socket_reason_count> socket_errors{};

  // Timeouts and unfinished requests: their recorded times are lower bounds.
  std::uint64_t censored() const noexcept {
    return outcomes[index(outcome::timeout)] + outcomes[index(outcome::unfinished)];
  }
  void add(const name_counts& other) noexcept {
    planned += other.planned;
    sessions_failed_here += other.sessions_failed_here;
    for (std::size_t i = 0; i < outcome_count; ++i) outcomes[i] += other.outcomes[i];
    statuses.add(other.statuses);
    for (std::size_t i = 0; i < socket_reason_count; ++i)
      socket_errors[i] += other.socket_errors[i];
  }
};

// A worker's counts so far, copied at each interval hand-over for the live metrics: the
// collector sums the workers' latest copies while they run (engine::run_collector::live).
// Sized before the run; a copy into it never allocates.
struct live_counts {
  counters measured;
  counters warmup;
  std::vector<name_counts> by_name;
  std::uint64_t in_flight = 0;  // requests sent and not yet ended, at the copy

  explicit live_counts(std::size_t names = 0) : by_name(names) {}
  void add(const live_counts& other) noexcept {
    measured.add(other.measured);
    warmup.add(other.warmup);
    for (std::size_t i = 0; i < by_name.size() && i < other.by_name.size(); ++i)
      by_name[i].add(other.by_name[i]);
    in_flight += other.in_flight;
  }
};

// Per second of the measured window, counted from its start: the requests planned (by intended
// time), the first attempts among them the generator got to late (more than schedule_grace after
// their second ended; the schedule check), the attempts sent (by send time: the retry
// amplification), and every planned step. Sized once before the run. `planned` counts a hybrid
// session once, at its arrival; `steps` counts all its steps there, since they are planned when
// the user arrives (in the open model the two are equal). The connection check reads `steps`.
struct per_second_load {
  std::vector<std::uint64_t> planned;
  std::vector<std::uint64_t> late;
  std::vector<std::uint64_t> attempts;
  std::vector<std::uint64_t> steps;
  void add(const per_second_load& other);
};

// A first attempt counts as late for the schedule check when the generator got to it more than
// this long after the end of the second it was intended in.
inline constexpr std::chrono::nanoseconds schedule_grace{10'000'000};

}  // namespace punctual::record
