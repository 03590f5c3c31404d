#include "record/recorder.hpp"

namespace punctual::record {

recorder::recorder(nanoseconds measure_start, nanoseconds window_end, nanoseconds interval)
    : measure_start_(measure_start),
      window_end_(window_end),
      interval_(interval),
      next_boundary_(measure_start + interval) {}

void recorder::record_view(view v, nanoseconds intended, nanoseconds at,
                           nanoseconds value) noexcept {
  const std::int64_t ns = value.count() < 0 ? 0 : value.count();
  if (intended < measure_start_) {
    warmup_.views[v].record(ns);
    return;
  }
  measured_.views[v].record(ns);
  if (at >= next_boundary_) roll_intervals(at);
  exchange_.current()[v].record(ns);
}

void recorder::record_response_time(nanoseconds intended, nanoseconds at, nanoseconds value,
                                    bool ok) noexcept {
  record_view(view::response_time, intended, at, value);
  if (ok) record_view(view::response_time_ok, intended, at, value);
}

void recorder::finish(nanoseconds intended, outcome o) noexcept {
  phase& p = phase_of(intended);
  p.counts.outcomes[index(o)]++;
  if (o == outcome::timeout || o == outcome::unfinished) p.counts.censored++;
}

void recorder::on_dropped(nanoseconds intended) noexcept { finish(intended, outcome::dropped); }

void recorder::on_dispatched(const request_times& t) noexcept {
  record_view(view::send_lag, t.intended, t.dispatched, t.dispatched - t.intended);
}

void recorder::on_assigned(const request_times& t) noexcept {
  record_view(view::queue_wait, t.intended, t.assigned, t.assigned - t.dispatched);
}

void recorder::on_sent(const request_times& t, std::size_t bytes) noexcept {
  if (t.had_to_connect) record_view(view::connect_time, t.intended, t.sent, t.sent - t.assigned);
  phase& p = phase_of(t.intended);
  p.counts.bytes_sent += bytes;
  if (in_window(t.sent)) p.counts.sent_in_window++;
}

void recorder::on_received_bytes(nanoseconds intended, std::size_t bytes) noexcept {
  phase_of(intended).counts.bytes_received += bytes;
}

void recorder::on_response(const request_times& t, nanoseconds done, int status,
                           bool expected) noexcept {
  phase& p = phase_of(t.intended);
  if (status >= 0 && status < static_cast<int>(p.counts.status.size())) p.counts.status[status]++;
  if (in_window(done)) p.counts.completed_in_window++;
  record_response_time(t.intended, done, done - t.intended, expected);
  record_view(view::service_time, t.intended, done, done - t.sent);
  if (t.first_byte.count() != 0) {
    record_view(view::time_to_first_byte, t.intended, done, t.first_byte - t.sent);
  }
  finish(t.intended, expected ? outcome::ok : outcome::http_error);
}

void recorder::on_socket_error(const request_times& t, nanoseconds failed_at,
                               socket_reason why) noexcept {
  phase_of(t.intended).counts.socket_errors[index(why)]++;
  record_response_time(t.intended, failed_at, failed_at - t.intended, false);
  finish(t.intended, outcome::socket_error);
}

void recorder::on_timeout(const request_times& t, nanoseconds timeout) noexcept {
  // Recorded at exactly the timeout: the true value is at least this (censored).
  record_response_time(t.intended, t.intended + timeout, timeout, false);
  finish(t.intended, outcome::timeout);
}

void recorder::on_unfinished(const request_times& t, nanoseconds interrupted_at) noexcept {
  record_response_time(t.intended, interrupted_at, interrupted_at - t.intended, false);
  finish(t.intended, outcome::unfinished);
}

void recorder::roll_intervals(nanoseconds now) noexcept {
  if (now < next_boundary_) return;
  // If the spare set is still with the collector, keep recording into the current one: the
  // interval then spans more than one second, which the collector accounts for.
  if (exchange_.hand_over(interval_index_)) {
    const std::int64_t passed = (now - measure_start_) / interval_;
    interval_index_ = passed;
    next_boundary_ = measure_start_ + interval_ * (passed + 1);
  }
}

}  // namespace punctual::record
