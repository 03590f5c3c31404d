// A worker's recorder: outcome accounting by intended time, and latency views per interval,
// cut by completion time. Owned by one thread; no locks, no allocation after construction.
//
// A measured sample is recorded once, into its interval. The run's latency totals are the sum
// of the intervals, added up by whoever collects them (engine::load_run), so the .hlog and the
// report agree by construction. Recording each sample into a run-wide set as well doubled the
// histogram memory the hot path touches, and those cache misses were the recorder's main cost.
// Warm-up samples never reach the intervals; they are kept apart in warmup().
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <vector>

#include "record/counters.hpp"
#include "record/intended_seconds.hpp"
#include "record/interval_exchange.hpp"
#include "record/outcome.hpp"
#include "record/view_set.hpp"

namespace punctual::record {

using nanoseconds = std::chrono::nanoseconds;

// The life of one attempt of a logical request, on CLOCK_MONOTONIC. Zero means "has not
// happened". Response time runs from `intended`, the first attempt's intended time.
// Why a response with an expected status still failed: a scenario step's checks.
enum class response_check : std::uint8_t { none, body, capture };

struct request_times {
  nanoseconds intended{};
  nanoseconds due{};         // when this attempt was due; zero: the first attempt, at `intended`
  nanoseconds dispatched{};  // the generator got to it: send lag = dispatched - due
  nanoseconds assigned{};    // it got a connection: queue wait = assigned - dispatched
  nanoseconds sent{};        // actual send, before the first write: connect time = sent - assigned
  nanoseconds first_byte{};
  std::uint64_t index = 0;    // the request's index in the schedule (keys the retry jitter)
  std::uint32_t attempt = 0;  // 0 for the first attempt
  std::uint16_t name = 0;     // the request's name (index into the run's names), if it has one
  bool had_to_connect = false;
  bool resent = false;  // HTTP/2: sent again after the server left it unprocessed (once only)
  retry_cause why{};    // a retry (attempt > 0): what failed the attempt before it
  // The hybrid model: a step of a session. Its outcome belongs to the session's arrival (warm-up
  // or measured window); `intended` is the step's own intended time.
  nanoseconds arrival{};  // zero outside the hybrid model
  // The worker's user slot + 1 it belongs to: a hybrid session's, a closed-model user's; 0: none.
  std::uint32_t user = 0;
  std::uint16_t step = 0;  // the step's position in its scenario

  nanoseconds due_time() const noexcept { return due.count() != 0 ? due : intended; }
  // The instant that says which phase (warm-up or measured window) the request belongs to.
  nanoseconds accounted_at() const noexcept { return arrival.count() != 0 ? arrival : intended; }
};

// Told of every final outcome, after it is recorded: the load model moves a user on from it.
class outcome_listener {
 public:
  virtual void on_final(const request_times& t, outcome o, nanoseconds at) noexcept = 0;

 protected:
  ~outcome_listener() = default;
};

struct phase {
  counters counts;
  view_set views;
};

// The intended-second ring's slots for a run with this timeout and interval.
std::size_t intended_second_slots(nanoseconds timeout, nanoseconds interval) noexcept;

// Resident bytes of what one recorder holds, by owner (docs/design.md, "Memory").
struct recorder_memory {
  std::size_t interval_views = 0;   // the two interval sets, handed to the collector in turn
  std::size_t second_ring = 0;      // the intended seconds not yet taken by the collector
  std::size_t warmup_views = 0;     // warm-up latency views
  std::size_t other_views = 0;      // send gaps; the hybrid model's views by step
  std::size_t per_second_load = 0;  // the per-second load series, sized for the run at start
};

class recorder {
 public:
  // How soon a worker offers its interval again when the collector still holds the spare set.
  static constexpr nanoseconds hand_over_retry{10'000'000};  // 10 ms

  // measure_start: intended times before it are warm-up. interval: the .hlog interval length.
  // horizon: the last instant an attempt can be sent (the drain's end), for the per-second load.
  // names: how many request names the run reports apart (0: none); each keeps its outcomes and
  // its named views (view_set::named), in the measured window only. timeout: the longest a
  // request can take to end, which bounds how long its intended second is kept.
  recorder(nanoseconds measure_start, nanoseconds window_end, nanoseconds interval,
           nanoseconds horizon = {}, std::size_t names = 0,
           nanoseconds timeout = std::chrono::seconds(10));

  // `arrival`: false for a session's later steps, which the per-second load's `planned` (the
  // schedule check) does not count: it counts arrivals. Its `steps` counts every call.
  void on_planned(nanoseconds intended, std::uint16_t name = 0, bool arrival = true) noexcept;
  // Claims, by the request's intended time: another worker's request this one sends (its
  // outcome is recorded here), and one of this worker's planned requests another sends.
  void on_claimed_in(nanoseconds intended) noexcept { counts_of(intended).claimed_in++; }
  void on_claimed_out(nanoseconds intended) noexcept { counts_of(intended).claimed_out++; }
  // A planned step its session never started (the session ended first, or the run did).
  void on_skipped(const request_times& t) noexcept;
  // Hybrid sessions, by name (the scenario's session name), in the measured window: planned at
  // arrival; ended with the outcome of the step that ended it, its session time running from
  // the arrival to `at` (none for a skipped or dropped session).
  void on_session_planned(nanoseconds arrival, std::uint16_t name) noexcept;
  void on_session_end(nanoseconds arrival, std::uint16_t name, outcome o, nanoseconds at) noexcept;
  // The session that arrived at `arrival` failed first at the step called `step`.
  void on_session_failed_at(nanoseconds arrival, std::uint16_t step) noexcept {
    if (arrival >= measure_start_ && !names_.empty()) names_[step].sessions_failed_here++;
  }
  void set_listener(outcome_listener* listener) noexcept { listener_ = listener; }
  void on_dropped(const request_times& t) noexcept;
  void on_dispatched(const request_times& t) noexcept;  // send lag
  // A hint: a first attempt intended at `intended` is dispatched at `at` soon (see
  // prefetch_answer).
  void prefetch_send_lag(nanoseconds intended, nanoseconds at) const noexcept {
    views_of(intended)[view::send_lag].prefetch((at - intended).count());
  }
  void on_assigned(const request_times& t) noexcept;                 // queue wait
  void on_sent(const request_times& t, std::size_t bytes) noexcept;  // connect time, counts
  void on_received_bytes(nanoseconds intended, std::size_t bytes) noexcept;
  // HTTP/2 counts a request's bytes when its stream ends (on_sent counted none).
  void on_sent_bytes(nanoseconds intended, std::size_t bytes) noexcept;
  void on_h2_unprocessed(const request_times& t) noexcept {
    counts_of(t.accounted_at()).h2_unprocessed++;
  }
  void on_h2_reset(const request_times& t, std::uint32_t code) noexcept {
    auto& codes = counts_of(t.accounted_at()).h2_rst_codes;
    codes[std::min<std::size_t>(code, codes.size() - 1)]++;
  }
  void count_reconnect() noexcept { measured_.reconnects++; }
  // Requests waiting for a connection right now (the interval keeps the most).
  void on_queue_depth(std::size_t depth, nanoseconds now) noexcept {
    if (now < measure_start_) return;
    auto& most = interval_at(now).counts().queue_depth_max;
    most = std::max<std::uint64_t>(most, depth);
  }
  // A TLS handshake that ended at `at` (before the start: at the measured window's start) and
  // took `took`. It belongs to no request; a request that waited for it carries it in its
  // connect time.
  void on_tls_handshake(nanoseconds at, nanoseconds took, bool resumed) noexcept;

  // An attempt that failed and will be retried. `answered`: a whole response came back (a 5xx
  // or 429), so its service time is recorded like any other attempt's. The retry counts, by
  // what failed (request_times::why), when it is sent.
  void on_attempt_failed(const request_times& t, nanoseconds at, bool answered) noexcept;
  // A retryable failure that stays final: the budget refused the retry, or the backoff would
  // end past the deadline. The outcome itself is recorded by the usual call.
  void on_retry_refused_by_budget(const request_times& t) noexcept {
    counts_of(t.intended).attempts.refused_by_budget++;
  }
  void on_retry_past_deadline(const request_times& t) noexcept {
    counts_of(t.intended).attempts.past_deadline++;
  }
  // Final outcomes; each planned request reaches exactly one of these (or on_dropped).
  // `failed`: the status was expected, but the response failed a step's check (then `expected`
  // is false: an http_error, its reason counted apart).
  void on_response(const request_times& t, nanoseconds done, int status, bool expected,
                   response_check failed = response_check::none) noexcept;
  void on_socket_error(const request_times& t, nanoseconds failed_at, socket_reason why) noexcept;
  void on_timeout(const request_times& t, nanoseconds timeout) noexcept;
  void on_unfinished(const request_times& t, nanoseconds interrupted_at) noexcept;

  // An interruption ends the measured window early: sends and completions after `at` (the
  // drain) are no longer counted as inside it.
  void end_window(nanoseconds at) noexcept {
    window_end_ = std::clamp(at, measure_start_, window_end_);
  }

  // Requests sent and not yet ended right now (the live metrics' gauge; call each turn).
  void set_in_flight(std::size_t n) noexcept { in_flight_ = n; }
  // Hands the interval views over at each interval boundary; call often (cheap compare).
  void roll_intervals(nanoseconds now) noexcept;
  nanoseconds next_interval_boundary() const noexcept { return next_boundary_; }
  std::int64_t current_interval() const noexcept { return interval_index_; }

  // Counts only: the measured latency views are in the intervals (see above).
  const counters& measured_counts() const noexcept { return measured_; }
  const std::vector<record::name_counts>& by_name() const noexcept { return names_; }
  const phase& warmup() const noexcept { return warmup_; }
  interval_exchange& intervals() noexcept { return exchange_; }
  const per_second_load& load() const noexcept { return load_; }
  // The requests of each intended second, handed to the collector once complete.
  intended_seconds& seconds() noexcept { return seconds_; }
  // The hybrid model: keep each step's requests apart too (by name; call before the run).
  void keep_steps() { steps_.resize(names_.size()); }
  // Record send_gaps() (call before the run): only a fixed-rate Poisson run has a law to fit
  // them to, and the gap histogram is one more cache miss per request.
  void keep_send_gaps() noexcept { keep_send_gaps_ = true; }
  const std::vector<second_views>& steps() const noexcept { return steps_; }
  // Gaps between this worker's consecutive first-attempt sends in the window (the Poisson fit).
  const hdr::histogram& send_gaps() const noexcept { return send_gaps_; }
  // Any thread, at any time: reads page residency and sizes fixed at construction.
  recorder_memory memory() const noexcept;

 private:
  // The views a request accounted at `accounted` is recorded into now, for a prefetch (the
  // interval's may still roll before the record).
  const view_set& views_of(nanoseconds accounted) const noexcept {
    return accounted < measure_start_ ? warmup_.views : exchange_.peek();
  }
  counters& counts_of(nanoseconds intended) noexcept {
    return intended < measure_start_ ? warmup_.counts : measured_;
  }
  bool in_window(nanoseconds t) const noexcept { return t >= measure_start_ && t < window_end_; }
  view_set& interval_at(nanoseconds at) noexcept {
    if (at >= next_boundary_) roll_intervals(at);
    return exchange_.current();
  }
  void count_outcome(const request_times& t, outcome o, nanoseconds at) noexcept;
  void record_second(const request_times& t, outcome o, nanoseconds at) noexcept;
  static void add_story(second_views& s, const request_times& t, outcome o,
                        nanoseconds at) noexcept;
  void record_view(view v, nanoseconds intended, nanoseconds at, nanoseconds value) noexcept;
  void record_named(const request_times& t, named_view v, nanoseconds at,
                    nanoseconds value) noexcept;
  void record_response_time(const request_times& t, nanoseconds at, nanoseconds value,
                            bool ok) noexcept;
  void finish(const request_times& t, outcome o, nanoseconds at) noexcept;
  void record_service(const request_times& t, nanoseconds done) noexcept;
  void prefetch_answer(const request_times& t, nanoseconds done) const noexcept;
  std::uint64_t& second_of(std::vector<std::uint64_t>& series, nanoseconds at) noexcept;

  nanoseconds measure_start_;
  nanoseconds window_end_;
  nanoseconds interval_;
  nanoseconds next_boundary_;
  std::int64_t interval_index_ = 0;
  counters measured_;
  std::vector<record::name_counts> names_;  // measured window, by name
  phase warmup_;
  interval_exchange exchange_;
  per_second_load load_;
  hdr::histogram send_gaps_{latency_params()};
  nanoseconds last_first_send_{};
  bool keep_send_gaps_ = false;
  intended_seconds seconds_;
  nanoseconds retire_lag_;           // a second is complete this long after its end
  std::vector<second_views> steps_;  // by step name; empty outside the hybrid model
  outcome_listener* listener_ = nullptr;
  std::size_t in_flight_ = 0;
};

}  // namespace punctual::record
