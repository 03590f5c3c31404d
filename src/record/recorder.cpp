#include "record/recorder.hpp"

#include <algorithm>
#include <bit>

namespace punctual::record {

namespace {
constexpr nanoseconds one_second{1'000'000'000};
}  // namespace

// A request ends by its deadline, checked at the worker's next wake-up; a second more covers
// that delay. The ring holds every second not yet complete, the seconds of one interval (they
// are retired at interval boundaries), and a few more that the collector may not have taken yet.
constexpr nanoseconds retire_margin{1'000'000'000};
constexpr std::size_t spare_seconds = 6;

std::size_t ring_seconds(nanoseconds timeout, nanoseconds interval) {
  const auto whole = [](nanoseconds d) {
    return static_cast<std::size_t>((d.count() + one_second.count() - 1) / one_second.count());
  };
  return whole(timeout + retire_margin) + whole(interval) + spare_seconds;
}

std::size_t intended_second_slots(nanoseconds timeout, nanoseconds interval) noexcept {
  return std::bit_ceil(ring_seconds(timeout, interval));
}

recorder::recorder(nanoseconds measure_start, nanoseconds window_end, nanoseconds interval,
                   nanoseconds horizon, std::size_t names, nanoseconds timeout)
    : measure_start_(measure_start),
      window_end_(window_end),
      interval_(interval),
      next_boundary_(measure_start + interval),
      names_(names),
      exchange_(names),
      seconds_(ring_seconds(timeout, interval)),
      retire_lag_(timeout + retire_margin) {
  // Sized once here, so counting never allocates on the request path.
  const nanoseconds span = std::max(horizon, window_end) - measure_start;
  const auto seconds = static_cast<std::size_t>(
      std::max<std::int64_t>(1, (span.count() + one_second.count() - 1) / one_second.count()));
  load_.planned.assign(seconds, 0);
  load_.late.assign(seconds, 0);
  load_.attempts.assign(seconds, 0);
  load_.steps.assign(seconds, 0);
}

recorder_memory recorder::memory() const noexcept {
  recorder_memory m;
  m.interval_views = exchange_.resident_bytes();
  m.second_ring = seconds_.resident_bytes();
  m.warmup_views = warmup_.views.resident_bytes();
  m.other_views = send_gaps_.resident_bytes();
  for (const auto& s : steps_) m.other_views += s.resident_bytes();
  for (const auto* series : {&load_.planned, &load_.late, &load_.attempts, &load_.steps})
    m.per_second_load += series->capacity() * sizeof(std::uint64_t);
  return m;
}

std::uint64_t& recorder::second_of(std::vector<std::uint64_t>& series, nanoseconds at) noexcept {
  const std::int64_t s = (at - measure_start_) / one_second;
  const std::size_t last = series.size() - 1;
  return series[s < 0 ? 0 : std::min(static_cast<std::size_t>(s), last)];
}

void recorder::on_planned(nanoseconds intended, std::uint16_t name, bool arrival) noexcept {
  counters& c = counts_of(intended);
  c.planned++;
  if (&c != &measured_) return;
  if (arrival) second_of(load_.planned, intended)++;
  second_of(load_.steps, intended)++;
  interval_at(intended).counts().planned++;
  if (!names_.empty()) names_[name].planned++;
}

void recorder::on_skipped(const request_times& t) noexcept {
  finish(t, outcome::skipped, t.accounted_at());
}

void recorder::on_session_planned(nanoseconds arrival, std::uint16_t name) noexcept {
  if (arrival >= measure_start_ && !names_.empty()) names_[name].planned++;
}

void recorder::on_session_end(nanoseconds arrival, std::uint16_t name, outcome o,
                              nanoseconds at) noexcept {
  if (arrival < measure_start_ || names_.empty()) return;
  names_[name].outcomes[index(o)]++;
  if (o == outcome::skipped || o == outcome::dropped) return;
  if (at >= next_boundary_) roll_intervals(at);
  exchange_.current()
      .named(name, named_view::response_time)
      .record(std::max<std::int64_t>(0, (at - arrival).count()));
}

void recorder::record_view(view v, nanoseconds intended, nanoseconds at,
                           nanoseconds value) noexcept {
  const std::int64_t ns = value.count() < 0 ? 0 : value.count();
  if (intended < measure_start_) {
    warmup_.views[v].record(ns);
    return;
  }
  if (at >= next_boundary_) roll_intervals(at);
  exchange_.current()[v].record(ns);
}

// A name's views, like the run's, go into the interval of `at`; warm-up samples keep none.
void recorder::record_named(const request_times& t, named_view v, nanoseconds at,
                            nanoseconds value) noexcept {
  if (names_.empty() || t.accounted_at() < measure_start_) return;
  if (at >= next_boundary_) roll_intervals(at);
  exchange_.current().named(t.name, v).record(value.count() < 0 ? 0 : value.count());
}

void recorder::record_response_time(const request_times& t, nanoseconds at, nanoseconds value,
                                    bool ok) noexcept {
  record_view(view::response_time, t.accounted_at(), at, value);
  if (ok) record_view(view::response_time_ok, t.accounted_at(), at, value);
  record_named(t, named_view::response_time, at, value);
}

void recorder::finish(const request_times& t, outcome o, nanoseconds at) noexcept {
  counters& c = counts_of(t.accounted_at());
  c.outcomes[index(o)]++;
  if (o == outcome::timeout || o == outcome::unfinished) c.censored++;
  if (&c == &measured_) {
    if (!names_.empty()) names_[t.name].outcomes[index(o)]++;
    count_outcome(t, o, at);
    record_second(t, o, at);
  }
  if (listener_) listener_->on_final(t, o, at);
}

void recorder::count_outcome(const request_times& t, outcome o, nanoseconds at) noexcept {
  if (o == outcome::skipped) return;  // no instant of its own
  interval_counts& n = interval_at(std::max(at, t.intended)).counts();
  switch (o) {
    case outcome::ok:
      n.ok++;
      n.completed++;
      break;
    case outcome::http_error:
      n.errors++;
      n.completed++;
      break;
    case outcome::socket_error:
      n.errors++;
      break;
    case outcome::timeout:
      n.timeouts++;
      break;
    case outcome::dropped:
      n.dropped++;
      break;
    default:
      break;
  }
}

// The request's whole story goes into the set of the second it was intended in (a hybrid step:
// its own intended time), from its final attempt's instants; a hybrid step's also into its step's.
void recorder::record_second(const request_times& t, outcome o, nanoseconds at) noexcept {
  if (t.intended < measure_start_) return;
  if (second_views* s = seconds_.at((t.intended - measure_start_) / one_second))
    add_story(*s, t, o, at);
  if (t.user != 0 && t.name < steps_.size()) add_story(steps_[t.name], t, o, at);
}

void recorder::add_story(second_views& s, const request_times& t, outcome o,
                         nanoseconds at) noexcept {
  s.planned++;
  if (t.attempt > 0 || t.sent.count() != 0) s.sent++;
  if (o == outcome::dropped || o == outcome::skipped) return;
  const auto span = [](nanoseconds from, nanoseconds to) {
    return std::max<std::int64_t>(0, (to - from).count());
  };
  s.response_time.record(span(t.intended, at));
  if (t.dispatched.count() != 0) s[component::send_lag].record(span(t.due_time(), t.dispatched));
  if (t.assigned.count() != 0) s[component::queue_wait].record(span(t.dispatched, t.assigned));
  if (t.had_to_connect && t.sent.count() != 0)
    s[component::connect_time].record(span(t.assigned, t.sent));
  if (o == outcome::ok || o == outcome::http_error) {
    s.completed++;
    s[component::service_time].record(span(t.sent, at));
  }
}

void recorder::on_dropped(const request_times& t) noexcept {
  finish(t, outcome::dropped, t.dispatched);
}

void recorder::on_dispatched(const request_times& t) noexcept {
  record_view(view::send_lag, t.accounted_at(), t.dispatched, t.dispatched - t.due_time());
  if (t.attempt != 0 || t.step != 0 || t.intended < measure_start_) return;
  const std::int64_t second = (t.intended - measure_start_) / one_second;
  if (t.dispatched > measure_start_ + one_second * (second + 1) + schedule_grace) {
    second_of(load_.late, t.intended)++;
  }
}

void recorder::on_assigned(const request_times& t) noexcept {
  record_view(view::queue_wait, t.accounted_at(), t.assigned, t.assigned - t.dispatched);
}

void recorder::on_sent(const request_times& t, std::size_t bytes) noexcept {
  if (t.had_to_connect)
    record_view(view::connect_time, t.accounted_at(), t.sent, t.sent - t.assigned);
  counters& c = counts_of(t.accounted_at());
  c.bytes_sent += bytes;
  c.attempts.total++;
  // An HTTP/2 resend is neither a request's first attempt nor a retry of the policy's.
  const bool first = t.attempt == 0 && !t.resent;
  if (first) {
    c.attempts.first++;
  } else if (t.resent) {
    c.attempts.resent++;
  } else {
    c.attempts.retries++;
    c.attempts.by_cause[index(t.why)]++;
  }
  if (&c == &measured_) {
    second_of(load_.attempts, t.sent)++;
    interval_counts& n = interval_at(t.sent).counts();
    n.attempts++;
    if (first) n.sent++;
  }
  if (in_window(t.sent)) c.sent_in_window++;
  if (keep_send_gaps_ && first && &c == &measured_) {
    if (last_first_send_.count() != 0)
      send_gaps_.record(std::max<std::int64_t>(0, (t.sent - last_first_send_).count()));
    last_first_send_ = t.sent;
  }
}

void recorder::on_attempt_failed(const request_times& t, nanoseconds at, bool answered) noexcept {
  if (answered) record_service(t, at);
}

void recorder::record_service(const request_times& t, nanoseconds done) noexcept {
  record_view(view::service_time, t.accounted_at(), done, done - t.sent);
  record_named(t, named_view::service_time, done, done - t.sent);
  if (t.first_byte.count() != 0) {
    record_view(view::time_to_first_byte, t.accounted_at(), done, t.first_byte - t.sent);
  }
}

void recorder::on_tls_handshake(nanoseconds at, nanoseconds took, bool resumed) noexcept {
  counters& c = counts_of(at);
  c.tls_handshakes++;
  if (resumed) c.tls_resumed++;
  record_view(view::tls_handshake, at, at, took);
}

void recorder::on_received_bytes(nanoseconds intended, std::size_t bytes) noexcept {
  counts_of(intended).bytes_received += bytes;
}

void recorder::on_sent_bytes(nanoseconds intended, std::size_t bytes) noexcept {
  counts_of(intended).bytes_sent += bytes;
}

// An answer is recorded into up to eight histograms, and each record() used to stall on its own
// cache miss (the kernel's work between two responses evicts them): fetching all their slots
// first lets the misses overlap. Nothing is recorded here; a wrong guess costs a fetch.
void recorder::prefetch_answer(const request_times& t, nanoseconds done) const noexcept {
  const nanoseconds response = done - t.intended;
  const nanoseconds service = done - t.sent;
  const view_set& v = views_of(t.accounted_at());
  v[view::response_time].prefetch(response.count());
  v[view::response_time_ok].prefetch(response.count());
  v[view::service_time].prefetch(service.count());
  if (t.first_byte.count() != 0)
    v[view::time_to_first_byte].prefetch((t.first_byte - t.sent).count());
  if (t.intended < measure_start_) return;
  const second_views* s = seconds_.peek((t.intended - measure_start_) / one_second);
  if (s == nullptr) return;
  s->response_time.prefetch(response.count());
  (*s)[component::send_lag].prefetch((t.dispatched - t.due_time()).count());
  (*s)[component::service_time].prefetch(service.count());
}

void recorder::on_response(const request_times& t, nanoseconds done, int status, bool expected,
                           response_check failed) noexcept {
  prefetch_answer(t, done);
  counters& c = counts_of(t.accounted_at());
  if (status >= 0 && status < static_cast<int>(c.status.size())) c.status[status]++;
  if (&c == &measured_ && !names_.empty()) names_[t.name].statuses.count(status);
  if (failed == response_check::body) c.body_missing++;
  if (failed == response_check::capture) c.capture_missing++;
  if (in_window(done)) c.completed_in_window++;
  record_response_time(t, done, done - t.intended, expected);
  record_service(t, done);
  finish(t, expected ? outcome::ok : outcome::http_error, done);
}

void recorder::on_socket_error(const request_times& t, nanoseconds failed_at,
                               socket_reason why) noexcept {
  counters& c = counts_of(t.accounted_at());
  c.socket_errors[index(why)]++;
  if (&c == &measured_ && !names_.empty()) names_[t.name].socket_errors[index(why)]++;
  record_response_time(t, failed_at, failed_at - t.intended, false);
  finish(t, outcome::socket_error, failed_at);
}

void recorder::on_timeout(const request_times& t, nanoseconds timeout) noexcept {
  // Recorded at exactly the timeout: the true value is at least this (censored).
  record_response_time(t, t.intended + timeout, timeout, false);
  finish(t, outcome::timeout, t.intended + timeout);
}

void recorder::on_unfinished(const request_times& t, nanoseconds interrupted_at) noexcept {
  record_response_time(t, interrupted_at, interrupted_at - t.intended, false);
  finish(t, outcome::unfinished, interrupted_at);
}

void recorder::roll_intervals(nanoseconds now) noexcept {
  if (now < next_boundary_) return;
  // The counts so far go with the set: while the spare is with the collector this only
  // rewrites the worker's own copy, and the next hand-over carries newer counts.
  live_counts& totals = exchange_.current_totals();
  totals.measured = measured_;
  totals.warmup = warmup_.counts;
  std::copy(names_.begin(), names_.end(), totals.by_name.begin());
  totals.in_flight = in_flight_;
  // If the spare set is still with the collector, keep recording into the current one: the
  // interval then spans more than one second, which the collector accounts for.
  if (exchange_.hand_over(interval_index_)) {
    const std::int64_t passed = (now - measure_start_) / interval_;
    interval_index_ = passed;
    next_boundary_ = measure_start_ + interval_ * (passed + 1);
  } else {
    // Offered again shortly, not at once: the worker wakes for its next boundary, and one left
    // in the past made it turn without sleeping until the collector ran (a core spent on a
    // busy loop, by a collector that was late because the host was busy).
    next_boundary_ = now + hand_over_retry;
  }
  // Second s is complete once its end plus the lag has passed: s + 1 + lag <= now.
  seconds_.retire_through((now - retire_lag_ - measure_start_) / one_second - 1);
}

}  // namespace punctual::record
